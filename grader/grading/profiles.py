"""The hypothesis profiles grading runs under: same submission, same examples, same score.

``torchdrill`` (100 examples per property) grades; ``torchdrill-quick`` (25) is
``check``'s. Both are derandomized, keep no example database and have no
deadline. ``activate`` loads one (unless ``--hypothesis-profile`` chose another)
only in a run where the grading plugin is active, never in other pytest runs of
the same environment.
"""

from __future__ import annotations

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
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                               HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )
    settings.register_profile(QUICK, parent=settings.get_profile(GRADING), max_examples=25)


def activate(chosen: str | None) -> None:
    """Load the grading profile, or ``chosen`` (``--hypothesis-profile``, which
    hypothesis' own plugin loaded already), and pin hypothesis' constant pool."""
    register()
    if not chosen:
        settings.load_profile(GRADING)
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
