"""The hypothesis profiles grading runs under: same submission, same examples, same score.

``torchdrill`` (100 examples per property) grades; ``torchdrill-quick`` (25) is
``check``'s. A profile's count is a ceiling (``at_most_the_profile``): a property's
own ``@settings(max_examples=N)`` may ask for fewer, never for more. Both are
derandomized, keep no example database and have no deadline, and skip hypothesis'
explain phase: after the shrink, it runs the property again on variations of the
smallest input only to annotate which arguments did not matter: a note the report
does not show (it shows the smallest call, what came back and what was expected),
paid for with many more calls of the student's code per failure. ``activate`` loads
one (unless ``--hypothesis-profile`` chose another) only in a run where the
grading plugin is active, never in other pytest runs of the same environment.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import HealthCheck, Phase, settings

GRADING = "torchdrill"
QUICK = "torchdrill-quick"
_NO_SHRINK = "torchdrill-active-no-shrink"


def register() -> None:
    """Register the grading profiles with hypothesis (loading none of them)."""
    settings.register_profile(
        GRADING,
        derandomize=True, database=None, deadline=None, print_blob=False,
        max_examples=100, report_multiple_bugs=False,
        phases=tuple(p for p in Phase if p is not Phase.explain),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    settings.register_profile(QUICK, parent=settings.get_profile(GRADING), max_examples=25)


def activate(chosen: str | None) -> None:
    """Load ``chosen`` (the request's profile), else the grading profile, and pin
    hypothesis' constant pool."""
    register()
    settings.load_profile(chosen or GRADING)
    pin_constants()


def pin_constants() -> None:
    """Stop hypothesis drawing constants from whatever local modules are loaded.

    hypothesis (6.13x and later) mixes literals found in every loaded non-test,
    non-site-packages module into its draws. Which modules those are depends on
    the process's history (which drills and submissions it imported before), so
    a serial run and an xdist run shrank to different counterexamples, and a
    student's own literals could steer the inputs. An empty pool keeps the
    examples a function of the test and the hypothesis version alone.
    """
    from hypothesis.internal.conjecture import providers

    empty = providers.Constants()
    providers._get_local_constants = lambda: empty


def without_shrinking() -> None:
    """Load the current profile minus the shrink phase.

    With ``derandomize`` the generate phase draws the same inputs either way, and a
    property loses as soon as one input fails, so every property passes or loses as
    it would with shrinking and the score does not change. What a failure shows can:
    its counterexample is the first failing input, not the minimal one, and the
    shrinker may have walked from a wrong answer to a smaller input that raises
    (``failed`` here, ``error`` there).
    """
    current = settings.default
    assert current is not None  # hypothesis always has a loaded profile
    settings.register_profile(_NO_SHRINK, parent=current,
                              phases=tuple(p for p in current.phases if p is not Phase.shrink))
    settings.load_profile(_NO_SHRINK)


@contextmanager
def at_most_the_profile(test: Callable[..., Any]) -> Iterator[None]:
    """Run the hypothesis test ``test`` with at most the loaded profile's examples.

    A property's own ``@settings(max_examples=N)`` overrides the profile: without
    the ceiling, ``check``'s quick profile ran most properties at their full count
    (188 of the course's 217 properties set one, between 5 and 70). The grading
    profile's 100 is above every such count, so a grading runs what each test asks
    for. The test's own settings are put back afterwards: the same function object
    may be graded again in this process under another profile.
    """
    own = getattr(test, "_hypothesis_internal_use_settings", None)
    current = settings.default
    if own is None or current is None or own.max_examples <= current.max_examples:
        yield
        return
    test._hypothesis_internal_use_settings = settings(own, max_examples=current.max_examples)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        test._hypothesis_internal_use_settings = own  # type: ignore[attr-defined]
