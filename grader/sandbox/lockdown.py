"""What the zygote and each worker it forks do to themselves: the confinement layers
the grader planned (``grader.sandbox.confine``), applied in the process they confine.

The zygote calls ``seal_scratch`` first and ``preload`` once (the seccomp filters and
Landlock's base rules are built there, and its workers inherit them); every forked
worker calls ``confine_worker`` before it touches student code, in the order rlimits,
uid drop, no_new_privs, Landlock, seccomp. The layers' names and states, and what
bubblewrap shows the zygote, are ``grader.sandbox.confine``'s.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import resource
import signal
from pathlib import Path
from typing import Any

from grader.sandbox import confine

_CAP_SYS_ADMIN = 21
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT = 2, 4, 8, 32
_CAPABILITY_VERSION_3 = 0x20080522
_SYSTEM_READ = ("/etc", "/proc", "/sys/devices", "/sys/bus")  # readable beside confine.SYSTEM_DIRS
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_THREAD = 0x00010000
_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK = 1, 2, 10, 16
_NETLINK_ROUTE = 0
# Denied with EPERM for every role: new processes and programs, peeking at other
# processes, and the kernel surface a grader never needs (namespaces, mounts, bpf,
# io_uring, which could open sockets behind seccomp's back, keyrings, modules).
_DENY = ("shmget", "shmat", "shmctl", "semget", "semop", "semtimedop", "semctl", "msgget",
         "msgsnd", "msgrcv", "msgctl",  # SysV IPC: it outlives the worker and its limits
         "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
         "mq_getsetattr",  # POSIX message queues: the same, in their own file system
         "fork", "vfork", "execve", "execveat", "ptrace", "process_vm_readv",
         "process_vm_writev", "unshare", "setns", "mount", "umount2", "pivot_root",
         "chroot", "fsopen", "fsmount", "fsconfig", "fspick", "move_mount", "open_tree",
         "mount_setattr", "open_by_handle_at", "name_to_handle_at", "bpf",
         "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
         "io_uring_register", "keyctl", "add_key", "request_key", "kexec_load",
         "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
         "swapon", "swapoff", "acct", "pidfd_open", "pidfd_getfd", "pidfd_send_signal",
         "tkill",
         # a worker that lowers its own priority waits for a CPU more, which no budget charges
         "setpriority", "sched_setscheduler", "sched_setattr", "sched_setparam")


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def _seccomp_filter(role: str) -> Any:
    """The role's libseccomp filter, built once in the zygote; children load a copy."""
    import pyseccomp as sc

    f = sc.SyscallFilter(sc.ALLOW)
    eperm = sc.ERRNO(errno.EPERM)
    for name in _DENY:
        if sc.resolve_syscall(sc.Arch.NATIVE, name) >= 0:  # older kernels lack some
            f.add_rule(eperm, name)
    # A thread is clone(CLONE_THREAD); anything else is a new process. glibc tries
    # clone3 first, and on ENOSYS falls back to clone, where the flags are visible.
    f.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    # Sockets: a worker makes none (its channel to the grader is already open), so the
    # workers of one zygote, which share its network namespace, cannot meet on an
    # abstract AF_UNIX address: the ranks of a rank run talk only through the grader.
    # Except on a machine with a GPU: CUDA's start makes and binds an AF_UNIX socket
    # (seen on an H100 runner: with socket or bind refused, torch finds no device), so
    # there the ranks of one student's rank run could meet (README: CUDA runners).
    # A gloo rank gets AF_UNIX, AF_INET/AF_INET6 (in bwrap's net namespace they reach
    # only lo) and route netlink, which gloo's getifaddrs() needs to find lo (read-only
    # without CAP_NET_ADMIN). One argument may appear once per rule, so the families in
    # between are listed.
    # A memfd is a file on no mount of ours, so exec-mappable: the one place left, with the
    # scratch noexec, where a submission could write a shared library and dlopen it
    # (/proc/self/fd/N). Where a GPU is bound, ctypes' foreign calls are allowed anyway.
    if not confine.gpu_devices():
        f.add_rule(eperm, "memfd_create")
    if role == "worker" and not confine.gpu_devices():
        f.add_rule(eperm, "socket")
    elif role == "worker":
        f.add_rule(eperm, "socket", sc.Arg(0, sc.NE, _AF_UNIX))
    else:
        allowed = (_AF_UNIX, _AF_INET, _AF_INET6, _AF_NETLINK)
        for family in range(_AF_NETLINK):
            if family not in allowed:
                f.add_rule(eperm, "socket", sc.Arg(0, sc.EQ, family))
        f.add_rule(eperm, "socket", sc.Arg(0, sc.GT, _AF_NETLINK))
        f.add_rule(eperm, "socket", sc.Arg(0, sc.EQ, _AF_NETLINK),
                   sc.Arg(2, sc.NE, _NETLINK_ROUTE))
    return f


@functools.cache
def _landlock_base() -> tuple[tuple[str, int], ...]:
    """(path, access) rules every worker gets: read-only system and Python dirs."""
    from landlock import FSAccess

    read = FSAccess.READ_FILE | FSAccess.READ_DIR
    rules: list[tuple[str, int]] = []
    # /sys/devices and /sys/bus: CPU topology for torch, PCI scan for gloo (which fails
    # on EACCES where a missing /sys, as in bwrap, is fine).
    for root in [*confine.python_dirs(), *map(Path, confine.SYSTEM_DIRS), *map(Path, _SYSTEM_READ)]:
        rules += _carve(root.resolve(), read, FSAccess.READ_DIR)
    rules += [("/dev/urandom", FSAccess.READ_FILE), ("/dev/zero", FSAccess.READ_FILE),
              ("/dev/null", _file_rights(FSAccess.READ_FILE | FSAccess.WRITE_FILE
                                         | getattr(FSAccess, "TRUNCATE", 0)))]
    # The driver is driven by ioctl: since Landlock ABI 5 a device file's ioctls are
    # refused unless allowed (CUDA then fails with "OS call failed", error 304).
    gpu = FSAccess.READ_FILE | FSAccess.WRITE_FILE | getattr(FSAccess, "IOCTL_DEV", 0)
    rules += [(str(dev), _file_rights(gpu)) for dev in confine.gpu_devices()]
    return tuple(dict.fromkeys((p, int(a)) for p, a in rules if os.path.exists(p)))


def _carve(root: Path, read: int, list_only: int) -> list[tuple[str, int]]:
    """Rules that make `root` readable except the HIDDEN trees under it (Landlock can
    only allow, so a directory above a hidden tree is listable and its other
    entries readable)."""
    if not root.exists() or any(root == h for h in confine.HIDDEN):
        return []
    if not any(h.is_relative_to(root) for h in confine.HIDDEN):
        return [(str(root), read if root.is_dir() else _file_rights(read))]
    rules = [(str(root), list_only)]
    for entry in sorted(root.iterdir()):
        rules += _carve(entry, read, list_only)
    return rules


def _file_rights(access: int) -> int:
    from landlock import FSAccess
    return access & int(FSAccess.all_file())


def preload() -> None:
    """Import landlock and pyseccomp and build the seccomp filters and Landlock base
    rules once, in the zygote, so each forked worker's confine_worker costs ~ms.
    Anything unavailable is skipped here and reported by confine_worker."""
    if confine.probe_landlock() is None:
        _landlock_base()
    if confine.probe_seccomp() is None:
        for role in confine.ROLES:
            _seccomp_filter(role)
    _libc()


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def seal_scratch() -> str | None:
    """In the zygote, first thing: remount the workers' scratch tmpfs noexec (a shared
    library a submission copies there cannot be mapped as code: dlopen fails), then drop
    CAP_SYS_ADMIN, which bubblewrap granted for this alone. ``None`` when sealed, or when
    there is no scratch (no bubblewrap); otherwise what failed (the workers then report
    their bwrap layer failed, ``_scratch_problem``)."""
    if not os.path.ismount(confine.SCRATCH):
        return None
    problem = None
    flags = _MS_REMOUNT | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    # files count too: empty ones fill no byte of the size cap, but each costs the kernel memory
    limits = f"nr_inodes={confine.SCRATCH_INODES}".encode()
    if _libc().mount(None, confine.SCRATCH.encode(), None, flags, limits) != 0:
        problem = f"remounting {confine.SCRATCH} noexec: {os.strerror(ctypes.get_errno())}"
    _drop_capability(_CAP_SYS_ADMIN)
    return problem


def _drop_capability(cap: int) -> None:
    """Take ``cap`` out of this process's effective, permitted and inheritable sets (its
    ambient set follows): nothing this process does later gets it back."""
    header = _CapHeader(_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc().capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    word, bit = divmod(cap, 32)
    keep = ~(1 << bit) & 0xFFFFFFFF
    data[word].effective &= keep
    data[word].permitted &= keep
    data[word].inheritable &= keep
    if _libc().capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _scratch_problem(writable: list[str]) -> str | None:
    """Why a worker's writable folders on the scratch are not sealed (None: they are)."""
    for path in writable:
        if Path(path).is_relative_to(confine.SCRATCH) and not os.statvfs(path).f_flag & os.ST_NOEXEC:
            return f"{confine.SCRATCH} is not mounted noexec"
    return None


def confine_worker(plan: confine.Plan, readable: list[str], writable: list[str],
                   role: str) -> dict[str, str]:
    """Apply the planned layers to this (forked, single-threaded) process, in the
    order rlimits, uid drop, no_new_privs, Landlock, seccomp; return what applied.

    `readable`: extra read-only paths (the submission copy); `writable`: the worker's
    private tmp (when the uid drops, those are chowned to it first, so pass the tmp
    directory itself). A planned layer that cannot apply reports ``"failed: ..."``
    and the rest still apply: the caller should refuse to run student code then.
    """
    if role not in confine.ROLES:
        raise ValueError(f"unknown role {role!r}; known: {', '.join(confine.ROLES)}")
    steps = (("rlimits", lambda: _apply_rlimits(plan)),
             ("uid", lambda: _drop_uid(plan.uid, readable, writable)),
             ("nnp", _no_new_privs),
             ("landlock", lambda: _apply_landlock(readable, writable)),
             ("seccomp", lambda: _apply_seccomp(role)))
    applied = dict(plan.layers)
    if plan.on("bwrap") and (problem := _scratch_problem(writable)):
        applied["bwrap"] = f"failed: {problem}"
    for name, step in steps:
        if name != "nnp" and not plan.on(name):
            continue
        try:
            step()
        except Exception as e:  # noqa: BLE001 - each layer's own failure, reported by name
            if name == "nnp":  # Landlock and seccomp would fail on their own
                continue
            applied[name] = f"failed: {type(e).__name__}: {e}".splitlines()[0]
    return applied


def _apply_rlimits(plan: confine.Plan) -> None:
    limits = {resource.RLIMIT_CPU: (plan.cpu_seconds, plan.cpu_seconds + 1),
              resource.RLIMIT_DATA: (confine.DATA_BYTES, confine.DATA_BYTES),
              resource.RLIMIT_FSIZE: (confine.FSIZE_BYTES, confine.FSIZE_BYTES),
              resource.RLIMIT_NOFILE: (confine.NOFILE, confine.NOFILE),
              resource.RLIMIT_CORE: (0, 0)}
    if plan.on("uid"):
        limits[resource.RLIMIT_NPROC] = (confine.NPROC, confine.NPROC)
    for which, (soft, hard) in limits.items():
        _, old_hard = resource.getrlimit(which)
        if old_hard != resource.RLIM_INFINITY:  # never try to raise a hard limit
            soft, hard = min(soft, old_hard), min(hard, old_hard)
        resource.setrlimit(which, (soft, hard))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversize write: EFBIG, not death


def _hand_over(path: str, uid: int) -> None:
    """Give the private tmp to the worker's uid, group root, 0770: the worker owns it, and
    a zygote that bwrap left without CAP_DAC_OVERRIDE can still enter it (and bwrap can
    still --chdir into it when the zygote is restarted)."""
    if os.stat(path).st_uid == uid:
        return
    try:
        os.chmod(path, 0o770)
        os.chown(path, uid, 0)
    except PermissionError:  # a sibling worker forked at the same time won the race
        if os.stat(path).st_uid != uid:
            raise


def _drop_uid(uid: int, readable: list[str], writable: list[str]) -> None:
    for path in writable:
        _hand_over(path, uid)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # from root to non-root: every capability goes
    if os.getuid() != uid or os.geteuid() != uid:
        raise OSError("uid did not change")
    for path in readable:
        if not os.access(path, os.R_OK):
            raise PermissionError(f"uid {uid} cannot read {path}: make it world-readable")
    for path in writable:
        if not os.access(path, os.W_OK | os.X_OK):
            raise PermissionError(f"uid {uid} cannot write {path}")


def _no_new_privs() -> None:
    """No setuid binary or file capability can give anything back after this."""
    if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


def _apply_landlock(readable: list[str], writable: list[str]) -> None:
    from landlock import FSAccess, Ruleset

    ruleset = Ruleset()  # handles every right this kernel knows: all denied by default
    for path, access in _landlock_base():
        ruleset.allow(path, rules=FSAccess(access))
    for path in readable:
        ruleset.allow(path, rules=FSAccess.READ_FILE | (
            FSAccess.READ_DIR if os.path.isdir(path) else 0))
    write = int(FSAccess.all()) & ~int(FSAccess.EXECUTE)  # never run what was written
    if confine.gpu_devices():  # CUDA's start writes (O_TRUNC) in the process's own /proc/<pid>
        own = (FSAccess.READ_FILE | FSAccess.READ_DIR | FSAccess.WRITE_FILE
               | getattr(FSAccess, "TRUNCATE", 0)) & FSAccess.all()  # what this kernel knows
        ruleset.allow(f"/proc/{os.getpid()}", rules=FSAccess(own))
    for path in writable:
        ruleset.allow(path, rules=FSAccess(write if os.path.isdir(path) else _file_rights(write)))
    ruleset.apply()
    os.close(ruleset._fd)  # enforced now; an open ruleset fd is of no use to the student


def _apply_seccomp(role: str) -> None:
    import pyseccomp as sc

    f = _seccomp_filter(role)  # our forked copy: per-child rules do not leak back
    me = os.getpid()
    # Signals only to itself: without a pid namespace, every worker runs as the same
    # uid and could otherwise kill its neighbours (other students' workers).
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        f.add_rule(sc.ERRNO(errno.EPERM), name, sc.Arg(0, sc.NE, me))
    f.load()
