"""Global state a drill's function may not touch, observed where the function runs.

``observed(effects)`` snapshots torch's global random generator, the default
dtype, grad mode, the intra-op thread count and the deterministic-algorithms
flag around a call, appends to ``effects`` a sentence for each that the call
changed, and puts every one back. The snapshot is taken in the process that runs
the student's code: the grader's for in-process grading, the worker's in the
sandbox (which reports the sentences with its answer), so a property such as
"the global random state is untouched" means the same in every isolation mode,
and a call that changes the state cannot steer the oracles or the calls after it.

In the sandbox the worker's own loop takes the snapshot (``snapshot`` before the
request, ``changes`` after it) and puts the sentences straight into its answer.
What it reads with is captured here, when the module is imported (by the zygote,
before any submission exists): torch's C functions and the default generator's
own bound methods, never ``torch.random.get_rng_state`` or ``torch.manual_seed``,
which a submission can replace or whose module global it can rebind. A snapshot
is a tuple of immutable values (the generator's state as ``bytes``), so nothing a
submission finds can be rewritten to match the state after its call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from grader.core import engine_phrases as words

_GENERATOR = torch._C.default_generator  # the real one, even if torch.random's name is rebound later


def _rng_state(get: Callable[[], Any] = _GENERATOR.get_state,
               raw: Callable[[Any], Any] = torch._C.TensorBase.numpy) -> bytes:
    """The global generator's state as bytes (immutable), read through C methods only."""
    return raw(get()).tobytes()


def _set_rng_state(state: bytes, put: Callable[[Any], Any] = _GENERATOR.set_state,
                   tensor: Callable[..., Any] = torch._C._VariableFunctions.frombuffer) -> None:
    put(tensor(bytearray(state), dtype=torch.uint8))


def _set_deterministic(mode: tuple[bool, bool],
                       put: Callable[..., Any] = torch._C._set_deterministic_algorithms) -> None:
    put(mode[0], warn_only=mode[1])


def _deterministic(on: Callable[[], bool] = torch._C._get_deterministic_algorithms,
                   warn: Callable[[], bool] = torch._C._get_deterministic_algorithms_warn_only
                   ) -> tuple[bool, bool]:
    return bool(on()), bool(warn())


# (what the report says, how to read it, how to put it back): every reader returns an
# immutable value, so a snapshot is a tuple nothing can rewrite.
Watched = tuple[tuple[str, Callable[[], Any], Callable[[Any], Any]], ...]
WATCHED: Watched = (
    (words.RNG, _rng_state, _set_rng_state),
    (words.DEFAULT_DTYPE, torch._C.get_default_dtype, torch._C._set_default_dtype),
    (words.GRAD_MODE, torch._C.is_grad_enabled, torch._C._set_grad_enabled),
    (words.THREADS, torch.get_num_threads, torch._C.set_num_threads),  # torch._C.get_num_threads itself
    (words.DETERMINISTIC, _deterministic, _set_deterministic),
)
SENTENCES = frozenset(sentence for sentence, _, _ in WATCHED)


# The two below name no global, not even a builtin (those they need are defaults, which
# a sandbox worker forbids rewriting): a submission that rebinds names in this module's
# globals changes neither.

def snapshot(watched: Watched = WATCHED, tuple: type = tuple) -> tuple[Any, ...]:
    """What ``watched`` reads now: a tuple of immutable values."""
    values = []
    for _, read, _ in watched:
        values.append(read())
    return tuple(values)


def changes(before: tuple[Any, ...], watched: Watched = WATCHED, zip: Any = zip) -> list[str]:
    """A sentence for each of ``watched`` that differs from ``before``; each is put back."""
    said = []
    for (sentence, read, write), old in zip(watched, before):
        if read() != old:
            said.append(sentence)
            write(old)
    return said


@contextmanager
def observed(effects: list[str]) -> Iterator[None]:
    """Run the block; append to ``effects`` what it changed of the global state, and
    restore it (see the module docstring)."""
    before = snapshot()
    try:
        yield
    finally:
        effects += changes(before)
