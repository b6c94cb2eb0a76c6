"""Attack: run native code of its own choosing, and meet classmates through the kernel.

- copies a system shared library (libm, as the process maps it) and a Python extension
  module (``_ctypes``) into its writable folder, then loads them (``ctypes.CDLL``,
  an extension-module import): loading runs the library's constructors, native code
  that no audit hook sees;
- makes a memfd (a file on no mount at all), writes the library into it and loads it
  through ``/proc/self/fd/N``;
- opens a POSIX message queue (``os`` has no ``mq_open``: glibc's, through ctypes), which
  would outlive the worker like SysV IPC.

Then raises ``ATTACK native_code: route=result ...`` (an error: the drill scores 0).
"""

import ctypes
import importlib.machinery
import importlib.util
import os
import shutil
import sys

SEEN = {}


def _try(route, action):
    try:
        SEEN[route] = str(action())
    except BaseException as exc:  # noqa: BLE001 - a refusal is the finding
        SEEN[route] = f"refused({type(exc).__name__}: {str(exc)[:120]})"


def _mapped_library(stem):
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if os.path.basename(path).startswith(stem) and ".so" in path:
                return path
    raise FileNotFoundError(stem)


def _copy_and_load():
    copy = shutil.copy(_mapped_library("libm"), os.path.join(os.getcwd(), "copied-libm.so"))
    ctypes.CDLL(copy)
    return f"LOADED {copy}"


def _copy_and_import():
    source = sys.modules["_ctypes"].__file__
    name = "copied_ctypes"
    copy = shutil.copy(source, os.path.join(os.getcwd(), f"{name}{os.path.splitext(source)[1]}"))
    loader = importlib.machinery.ExtensionFileLoader("_ctypes", copy)
    spec = importlib.util.spec_from_file_location("_ctypes", copy, loader=loader)
    importlib.util.module_from_spec(spec)
    return f"LOADED {copy}"


def _memfd():
    fd = os.memfd_create("code")
    with open(_mapped_library("libm"), "rb") as library:
        os.write(fd, library.read())
    ctypes.CDLL(f"/proc/self/fd/{fd}")
    return "LOADED memfd"


def _mq_open():
    libc = ctypes.CDLL(None, use_errno=True)
    queue = libc.mq_open(b"/torchdrill-native-code", os.O_CREAT | os.O_RDWR, 0o600, None)
    if queue == -1:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    libc.mq_unlink(b"/torchdrill-native-code")
    return "OPENED"


def one_hot(labels, num_classes=-1):
    for route, action in (("copy-dlopen", _copy_and_load), ("copy-import", _copy_and_import),
                          ("memfd", _memfd), ("mq_open", _mq_open)):
        _try(route, action)
    raise RuntimeError("ATTACK native_code: " + " ".join(f"{k}={v}" for k, v in SEEN.items()))
