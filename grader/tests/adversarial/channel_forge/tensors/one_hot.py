"""Attack: write forged protocol messages straight into the worker's channel to
the grader (every socket file descriptor in /proc/self/fd), then answer wrongly.

A different forgery per input (picked from the labels' shape and classes): a header that is
200 KB of nested JSON brackets (json.loads recursion), a header that claims
2**32-1 bytes, a payload that claims 2**60 bytes, a tensor whose announced
byte count disagrees with its shape, a reference to an object that is not in
the table, wrong magic bytes, and a well-formed answer followed by a second
one (to desynchronise request and answer). And answers that describe the labels
they were sent faithfully, so every check of the table passes, but whose other
parts make decoding raise what is not a wire error: a graph that is a number
(TypeError) or lacks its outputs (KeyError), a graph input outside the table
(IndexError), an empty tensor sized past 64 bits (TypeError), an optimizer holding
the labels in two groups (ValueError), a size past 64 bits, an unknown device string
(RuntimeError), modules nested past Python's stack (RecursionError). Each must be
the worker's broken contract, never "the test could not check the result".
"""

import json
import os
import struct

import torch

PREFIX = struct.Struct("!4sIQ")


def _frame(header, payload=b"", magic=b"TDW1", head_len=None, payload_len=None):
    head = header if isinstance(header, bytes) else json.dumps(header).encode()
    return PREFIX.pack(magic, len(head) if head_len is None else head_len,
                       len(payload) if payload_len is None else payload_len) + head + payload


def _labels(labels):
    """The labels' table entry and bytes, as an honest worker would send them back."""
    data = labels.detach().contiguous()
    raw = bytes(data.view(torch.uint8).flatten().tolist()) if data.numel() else b""  # numpy is forbidden here
    entry = {"k": "tensor", "dtype": str(data.dtype).removeprefix("torch."), "shape": list(data.shape),
             "stride": list(data.stride()), "device": "cpu", "rg": False, "param": False,
             "nbytes": len(raw)}
    if raw:
        entry["buf"] = 0
    return entry, raw


def _decodable(labels):
    entry, raw = _labels(labels)
    grad_out = {"k": "tensor", "dtype": "float32", "shape": [1], "stride": [1], "device": "cpu",
                "rg": True, "param": False, "nbytes": 4, "buf": 1 if raw else 0}
    padded = raw + bytes(-len(raw) % 64) if raw else b""
    empty = {k: v for k, v in grad_out.items() if k != "buf"} | {"rg": False, "nbytes": 0}
    twice = {"k": "optim", "cls": "torch.optim.sgd:SGD", "defaults": {"dict": []}, "state": [],
             "groups": [{"params": [0], "options": {"dict": []}}] * 2}
    chain = [{"k": "module", "cls": "torch.nn.modules.container:Sequential", "training": True,
              "attrs": [], "recorders": [], "params": [], "buffers": [],
              "children": [["0", {"obj": i + 2} if i < 4999 else None]]} for i in range(5000)]
    return [
        _frame({"ok": None, "objects": [entry], "graph": 7}, raw),
        _frame({"ok": None, "objects": [entry], "graph": {"id": 1}}, raw),
        _frame({"ok": {"obj": 1}, "objects": [entry, grad_out],
                "graph": {"id": 1, "outputs": [1], "inputs": [99]}}, padded + bytes(4)),
        _frame({"ok": {"size": [2**70]}, "objects": [entry]}, raw),
        _frame({"ok": {"obj": 1}, "objects": [entry, {**empty, "shape": [2**70, 0], "stride": [1, 1]}]}, raw),
        _frame({"ok": {"obj": 1}, "objects": [entry, twice]}, raw),
        _frame({"ok": {"device": "cuda:x"}, "objects": [entry]}, raw),
        _frame({"ok": {"obj": 1}, "objects": [entry, *chain]}, raw),
    ]


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
    try:
        forgeries = _forgeries() + _decodable(labels)
    except Exception:  # labels whose bytes cannot be read so (a 0-d tensor): the older forgeries only
        forgeries = _forgeries()
    data = forgeries[(labels.numel() * 3 + labels.dim() + num_classes) % len(forgeries)]
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                os.write(int(fd), data)
        except OSError:
            pass
    return labels
