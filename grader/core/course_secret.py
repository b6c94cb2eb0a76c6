"""The course secret: what makes an official grading draw examples no student has seen.

Every property is public (a release ships the tests, ``check`` runs them) and
derandomized, so without a secret the inputs a grading draws are the inputs a
learner can record at home and answer from a table. An official grading
(``grade-all``, the Gradescope run, ``grade`` given a secret) seeds each property
from an HMAC of the secret and the property's name instead: deterministic given
the secret (same submission, same secret, same score anywhere), unknowable
without it.

The secret is a line of text in a file the instructor keeps (``torchdrill secret``
makes one, readable by its owner only), or the value of ``TORCHDRILL_SECRET``.
Results record only its digest, which names the secret without revealing it
(the secret is 256 random bits: a digest cannot be searched back).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets as _random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from grader.core.errors import UsageError

ENV = "TORCHDRILL_SECRET"
MIN_CHARS = 16
MAX_BYTES = 4096  # a secret is one line; a larger file is the wrong file


@dataclass(frozen=True)
class Secret:
    """A course secret. ``text`` never appears in a repr, a message or a result."""

    text: str = field(repr=False)
    source: str  # where it came from, for messages: a path or the variable's name

    @property
    def digest(self) -> str:
        """A short name for the secret, safe to write into results and reports."""
        return "sha256:" + hashlib.sha256(b"torchdrill secret digest\0" + self.text.encode()).hexdigest()[:16]

    def seed(self, name: str) -> int:
        """The seed of the property ``name`` (its drill and function): a 128-bit HMAC."""
        mac = hmac.new(self.text.encode(), b"torchdrill examples\0" + name.encode(), hashlib.sha256)
        return int.from_bytes(mac.digest()[:16], "big")


def default_path(environ: Mapping[str, str] = os.environ) -> Path:
    """Where ``torchdrill secret`` keeps the secret unless told otherwise: the user's
    configuration folder, outside any course folder a release or a git push could take."""
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME") or Path.home()) / ".config")
    return Path(base) / "torchdrill" / "secret"


def parse(text: str, source: str) -> Secret:
    """The secret in ``text`` (one line; surrounding whitespace ignored)."""
    value = text.strip()
    if "\n" in value or "\r" in value:
        raise UsageError(f"{source}: a course secret is one line, this has several")
    if len(value) < MIN_CHARS:
        raise UsageError(f"{source}: a course secret needs at least {MIN_CHARS} characters "
                         f"(this has {len(value)}); `torchdrill secret` makes a good one")
    return Secret(value, source)


def read(path: Path) -> Secret:
    """The secret kept in the file ``path``."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the course secret ({exc.strerror or exc})") from None
    if len(data) > MAX_BYTES:
        raise UsageError(f"{path}: over {MAX_BYTES} bytes, not a course secret (one line)")
    try:
        text = data.decode()
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not text, not a course secret") from None
    return parse(text, str(path))


def given(secret_file: str | os.PathLike[str] | None,
          environ: Mapping[str, str] = os.environ) -> Secret | None:
    """The secret a command was given: ``--secret-file``, else ``TORCHDRILL_SECRET``."""
    if secret_file:
        return read(Path(secret_file))
    value = environ.get(ENV)
    if value is not None:
        return parse(value, f"${ENV}")
    return None


def official(secret_file: str | os.PathLike[str] | None, public_examples: bool,
             environ: Mapping[str, str] = os.environ) -> Secret | None:
    """The secret of an official grading (a class's, the Gradescope run's): the one given,
    else the one ``torchdrill secret`` keeps; with none, only ``public_examples`` (the
    instructor's explicit choice) grades, with the examples every student can replay."""
    if public_examples:
        return None
    chosen = given(secret_file, environ)
    if chosen is not None:
        return chosen
    kept = default_path(environ)
    if kept.exists():
        return read(kept)
    raise UsageError(f"no course secret: an official grading draws examples no student has seen "
                     f"from it. Make one with `torchdrill secret` (kept at {kept}), or give "
                     f"--secret-file FILE or ${ENV}; --public-examples grades with the examples "
                     f"every student can replay")


def make() -> str:
    """A new secret: 256 random bits, as URL-safe text."""
    return _random.token_urlsafe(32)


def create(path: Path) -> Secret:
    """Write a new secret to ``path`` (readable by its owner only); never replaces one:
    examples drawn with the old secret would no longer be reproducible."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = make()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"{path} already holds a course secret; it is kept (remove it yourself "
                         "to start a new one: earlier official gradings drew their examples "
                         "from it)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write the course secret ({exc.strerror or exc})") from None
    with os.fdopen(fd, "w") as f:
        f.write(text + "\n")
    return Secret(text, str(path))
