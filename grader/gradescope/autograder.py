"""``torchdrill gradescope-autograder OUT.zip``: this course as a Gradescope autograder.

Gradescope's programming assignments take a zip with ``setup.sh`` (run once, when
the image is built) and ``run_autograder`` (run for every submission, with the
student's files in ``/autograder/submission``; it must write
``/autograder/results/results.json``). The zip this command writes holds:

- ``setup.sh``: a Python >= 3.11 (installed with apt when the image lacks one), a
  virtual environment, the pinned CPU build of torch (from PyTorch's CPU wheel
  index: PyPI's Linux wheel pulls the CUDA packages), then torchdrill from the
  wheel inside the zip with ``constraints.txt``; no other download. It makes the
  course folder readable by root only: the sandbox's workers run as uid 65534
  and must not read the reference or the hidden tests.
- ``run_autograder``: runs ``python -I -m grader.gradescope.run``, which
  grades the submission and always writes a result (that module says how); the
  script writes a "grader failed" result itself when Python cannot even start.
- ``torchdrill/``: the wheel, ``constraints.txt``, ``config.json`` (the drills and
  grading options chosen when the zip was made) and ``course/`` (tests, reference,
  pristine stubs, ``course.toml``, report templates).

``TORCHDRILL_AUTOGRADER_ROOT`` replaces ``/autograder`` (a test runs the real
``run_autograder`` against a fake tree), ``TORCHDRILL_AUTOGRADER_PYTHON`` the
environment's interpreter.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import json
import os
import tempfile
import tomllib
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import grader
from grader.core import course_secret, i18n
from grader.core.course_secret import Secret
from grader.core.errors import EXIT_OK, UsageError
from grader.core.files import zip_member
from grader.core.i18n import _
from grader.core.stubs import write_stubs
from grader.core.syllabus import exercise_tests, find_course, with_language
from grader.gradescope.facts import CONFIG, COURSE, PAYLOAD, SECRET, grader_failed_result
from grader.grading import options
from grader.grading.pipeline import check_only

DEFAULT_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
COURSE_DIRS = ("tests", "reference", "report_templates", "locales")  # locales: the drills' texts in each language
COURSE_FILES = ("course.toml", "pyproject.toml")


# ------------------------------------------------------------------ the scripts

SETUP_SH = """#!/usr/bin/env bash
# Written by `torchdrill gradescope-autograder`: Gradescope runs it once, building the image.
# A Python >= 3.11, a virtual environment, the CPU build of torch, torchdrill from the wheel
# beside this script with every version pinned by constraints.txt. Nothing else is downloaded.
set -euo pipefail
ROOT="${TORCHDRILL_AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source/torchdrill"
VENV="$ROOT/torchdrill-venv"
TORCH_INDEX="${TORCHDRILL_TORCH_INDEX:-__TORCH_INDEX__}"

PYTHON=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 \\
      && "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    PYTHON="$candidate"; break
  fi
done
if [ -z "$PYTHON" ]; then
  echo "torchdrill: no Python >= 3.11 here; installing python3.11 with apt"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends python3.11 python3.11-venv
  PYTHON=python3.11
fi
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install --no-cache-dir --index-url "$TORCH_INDEX" "torch==__TORCH__"
"$VENV/bin/python" -m pip install --no-cache-dir -c "$SOURCE/constraints.txt" "$SOURCE"/wheels/*.whl
# The reference and the hidden tests: readable by root (the grader) only, never by the
# sandbox's workers (uid 65534).
chmod -R go-rwx "$SOURCE"
echo "torchdrill: the sandbox's layers on this machine:"
"$VENV/bin/python" -I -m grader.sandbox.confine || true
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Written by `torchdrill gradescope-autograder`: Gradescope runs it for every submission.
# Grades $ROOT/submission and writes $ROOT/results/results.json, whatever happens.
ROOT="${TORCHDRILL_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${TORCHDRILL_AUTOGRADER_PYTHON:-$ROOT/torchdrill-venv/bin/python}"
mkdir -p "$ROOT/results"
cd "$ROOT" || exit 0
"$PYTHON" -I -m grader.gradescope.run --root "$ROOT"
if [ ! -s "$ROOT/results/results.json" ]; then  # the grader could not even start
  cat > "$ROOT/results/results.json" <<'EOF'
__FALLBACK__
EOF
fi
exit 0
"""


def run_script(lang: i18n.Lang = i18n.Lang.EN) -> str:
    """``run_autograder``, with the result it writes when Python cannot even start (in
    ``lang``, the students' language)."""
    with i18n.speaking(lang):
        fallback = json.dumps(grader_failed_result(_("the autograder's Python could not start")))
    return RUN_AUTOGRADER.replace("__FALLBACK__", fallback)


# ------------------------------------------------------------------ building the zip

def build(course: Path, out: Path, config: dict[str, Any], torch_index: str = DEFAULT_TORCH_INDEX,
          secret: Secret | None = None, lang: i18n.Lang = i18n.Lang.EN) -> list[str]:
    """Write the autograder zip for ``course`` to ``out``; returns its member names.
    ``secret``: the course secret its gradings draw their examples from (root-only on
    Gradescope, like the course: ``setup.sh``). ``lang``: what students read (the zip's
    ``course.toml`` says it, as a handout's does)."""
    torch_pin = _torch_pin(course / "constraints.txt")
    members: dict[str, tuple[bytes, int]] = {}  # name -> (bytes, mode)
    setup = SETUP_SH.replace("__TORCH_INDEX__", torch_index).replace("__TORCH__", torch_pin)
    members["setup.sh"] = (setup.encode(), 0o755)
    members["run_autograder"] = (run_script(lang).encode(), 0o755)
    name, wheel = build_wheel(course)
    members[f"{PAYLOAD}/wheels/{name}"] = (wheel, 0o644)
    members[f"{PAYLOAD}/constraints.txt"] = ((course / "constraints.txt").read_bytes(), 0o644)
    members[f"{PAYLOAD}/{CONFIG}"] = ((json.dumps(config, indent=1, sort_keys=True) + "\n").encode(), 0o644)
    if secret is not None:
        members[f"{PAYLOAD}/{SECRET}"] = ((secret.text + "\n").encode(), 0o600)
    for rel, data in _course_files(course, lang).items():
        members[f"{PAYLOAD}/{COURSE}/{rel}"] = (data, 0o644)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for member in sorted(members):
            data, mode = members[member]
            zf.writestr(zip_member(member, mode), data)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    partial.write_bytes(buffer.getvalue())
    os.replace(partial, out)  # never half a zip at OUT
    return sorted(members)


def _torch_pin(constraints: Path) -> str:
    for line in constraints.read_text(encoding="utf-8").splitlines():
        if line.strip().lower().startswith("torch=="):
            return line.strip().split("==", 1)[1]
    raise UsageError(f"{constraints} pins no torch version (a line torch==X): the autograder "
                     "installs exactly the torch the course was tested with")


def _course_files(course: Path, lang: i18n.Lang = i18n.Lang.EN) -> dict[str, bytes]:
    """What grading needs of the course: tests (hidden ones too), the reference, the
    pristine stubs (a notebook's functions are mapped by their names), the drills' texts
    in every language (``locales/``) and course.toml, whose ``language`` is ``lang``
    when that is not English."""
    files: dict[str, bytes] = {}
    for folder in COURSE_DIRS:
        for path in sorted((course / folder).rglob("*")):
            rel = path.relative_to(course)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix != ".pyc" \
                    and not any(p.startswith(".") for p in rel.parts):
                files[rel.as_posix()] = path.read_bytes()
    for name in COURSE_FILES:
        if (course / name).is_file():
            files[name] = (course / name).read_bytes()
    if lang is not i18n.Lang.EN and "course.toml" in files:
        files["course.toml"] = with_language(files["course.toml"].decode("utf-8"), lang.value).encode()
    with tempfile.TemporaryDirectory() as tmp:
        for path in write_stubs(course, Path(tmp) / "exercises"):
            files[path.relative_to(tmp).as_posix()] = path.read_bytes()
    return files


def build_wheel(course: Path) -> tuple[str, bytes]:
    """A pure-Python wheel of the course's ``grader`` package (without its own tests),
    its dependencies and entry points read from ``pyproject.toml``: no build tool needed,
    and the same files give the same bytes."""
    project = tomllib.loads((course / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = grader.__version__
    dist = f"torchdrill-{version}.dist-info"
    files: dict[str, bytes] = {}
    package = course / "grader"
    for path in sorted(package.rglob("*")):
        rel = path.relative_to(course)
        if not path.is_file() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo") \
                or rel.parts[1:2] == ("tests",):
            continue
        files[rel.as_posix()] = path.read_bytes()
    requires = "".join(f"Requires-Dist: {d}\n" for d in project.get("dependencies", []))
    files[f"{dist}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: torchdrill\nVersion: {version}\n"
        f"Summary: {project.get('description', '')}\n"
        f"Requires-Python: {project.get('requires-python', '>=3.11')}\n{requires}").encode()
    files[f"{dist}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: torchdrill {version}\n"
                              "Root-Is-Purelib: true\nTag: py3-none-any\n").encode()
    entry_points = ["[console_scripts]"] + [f"{k} = {v}" for k, v in project.get("scripts", {}).items()]
    for group, points in project.get("entry-points", {}).items():
        entry_points += ["", f"[{group}]"] + [f"{k} = {v}" for k, v in points.items()]
    files[f"{dist}/entry_points.txt"] = ("\n".join(entry_points) + "\n").encode()
    files[f"{dist}/top_level.txt"] = b"grader\n"
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in sorted(files.items())]
    files[f"{dist}/RECORD"] = ("\n".join([*record, f"{dist}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in [n for n in sorted(files) if not n.startswith(dist)] + \
                    [n for n in sorted(files) if n.startswith(dist)]:  # dist-info last, as pip writes it
            zf.writestr(zip_member(name), files[name])
    return f"torchdrill-{version}-py3-none-any.whl", buffer.getvalue()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def cmd_gradescope_autograder(args: argparse.Namespace) -> int:
    course = Path(args.course).resolve() if args.course else find_course(Path.cwd())
    out = Path(args.out)
    if out.suffix.lower() != ".zip":
        raise UsageError(f"OUT must be a .zip file (Gradescope takes a zip): got {out}")
    isolation = args.isolation
    check_only(course, args.only)  # an unknown --only drill stops here, not on Gradescope
    drawn = course_secret.official(args.secret_file, args.public_examples)
    config = {"only": args.only or [], "profile": args.profile, "isolation": isolation,
              "limits": asdict(options.limits(args)), "shrink": not args.no_shrink,
              "examples": drawn.digest if drawn else "public",
              "drills": sorted(args.only or exercise_tests(course)),
              "made_by": f"torchdrill {grader.__version__}"}
    names = build(course, out, config, args.torch_index, drawn, args.lang)
    drills = config["drills"]
    print(f"autograder: {out} ({len(names)} files; {len(drills)} drill(s): "
          f"{', '.join(drills) if len(drills) <= 6 else ', '.join(drills[:6]) + ', ...'})")
    print("examples: " + (f"official, from the course secret {drawn.source} ({drawn.digest}), inside "
                          "the zip: share the zip with no student" if drawn else
                          "public (--public-examples): every student can replay them"))
    print("upload it as a Gradescope programming assignment's autograder (Ubuntu base image); "
          "give it 2 GB of memory or more (the default 768 MB is tight for torch and the sandbox)")
    return EXIT_OK
