"""The verdict of each graded test, as pytest reports it.

``Judge`` wraps ``pytest_runtest_makereport``: it classifies each phase by what was
raised (``grader.grading.verdict``), turns a property the clocks stopped
(``grader.grading.budgets``) into ``timed_out`` and one whose calls changed their
arguments beyond the drill's ``mutates`` into ``failed``, and attaches the outcome,
message and counterexample to the report, which carries them to the results collector.
It also says, before a test starts, whether it can run here at all (``not_run``) and
whether its drill's file already failed to load (``refuse_unloadable``).
"""

from __future__ import annotations

import json
import traceback
from typing import Any

import pytest

from grader.contract.impl import Implementation
from grader.core.drill_texts import LIST_SEPARATOR
from grader.core.i18n import Message
from grader.core.outcomes import (
    CUDA_REASON,
    ERROR,
    FAILED,
    GLOO_REASON,
    NOT_RUN,
    PASSED,
    TIMED_OUT,
    SubmissionError,
)
from grader.grading import verdict
from grader.grading.budgets import CHARGED, EXPIRED
from grader.grading.collector import OUTCOME, SANDBOX_BROKEN
from grader.grading.drill_facts import facts
from grader.grading.sandboxing import isolation_used
from grader.sandbox.zygote import SandboxBroken

_not_run_reason = pytest.StashKey[str]()


class Judge:
    """The report hook, and the checks a test must pass before it starts."""

    def __init__(self) -> None:
        self._unloadable: dict[str, SubmissionError] = {}  # drill -> why its file does not load

    def skip_if_not_runnable(self, item: pytest.Item) -> None:
        """Skip a test needing hardware this machine lacks: "not run here", never a zero."""
        reason = _missing_requirement(item)
        if reason:
            item.stash[_not_run_reason] = reason
            pytest.skip(reason)

    def refuse_unloadable(self, drill: str) -> None:
        """The same error at once for a drill whose file did not load: it is not loaded again."""
        broken = self._unloadable.get(drill)
        if broken is not None:
            raise broken.again()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        meta = facts(item)
        if meta is None:
            return report
        exc = call.excinfo.value if call.excinfo is not None else None
        if isinstance(exc, SubmissionError) and call.when == "call":
            self._unloadable.setdefault(meta["exercise"], exc)
        if isinstance(exc, SandboxBroken):  # the controller stops the grading on this report
            report.user_properties.append((SANDBOX_BROKEN, str(exc)))
            return report
        if report.skipped:
            reason = item.stash.get(_not_run_reason, None)
            info: dict[str, Any] = ({"outcome": NOT_RUN, "message": reason, "message_id": Message(reason).to_json()}
                                    if reason else
                                    _skipped(exc))
        else:
            outcome, message, kept = verdict.classify(exc)
            expired = item.stash.get(EXPIRED, None)
            if expired and outcome != PASSED:  # whatever hypothesis made of the interruption
                outcome, message, kept = TIMED_OUT, str(expired), expired
            changed = _changed_arguments(item) if outcome == PASSED and call.when == "call" else None
            if changed:
                outcome, message, kept = FAILED, str(changed), changed
            info = {"outcome": outcome, "message": message[:verdict.MAX_MESSAGE]}
            if kept is not None and len(str(kept)) <= verdict.MAX_MESSAGE:  # bounded like the text
                info["message_id"] = kept.to_json()
            if outcome in (FAILED, ERROR, TIMED_OUT) and exc is not None:
                info["counterexample"] = verdict.counterexample(
                    getattr(item, "funcargs", {}).get("impl"), exc)
            isolation = isolation_used()
            if isolation:
                info["isolation"] = isolation
            if call.when == "call":  # later reports repeat earlier phases' output
                info["charged_s"] = item.stash.get(CHARGED, 0.0)
                for stream, text in (("stdout", report.capstdout), ("stderr", report.capstderr)):
                    if text:
                        info[stream] = verdict.capped(text)
        report.user_properties.append((OUTCOME, json.dumps(info)))
        if exc is not None and call.when == "call":
            _let_go(exc)
        return report


def _skipped(exc: BaseException | None) -> dict[str, Any]:
    """A test that pytest skipped though no requirement was missing: an error, not a pass."""
    said = Message("the test was skipped unexpectedly: {error}", {"error": str(exc)})
    return {"outcome": ERROR, "message": str(said), "message_id": said.to_json()}


def _let_go(exc: BaseException) -> None:
    """Clear the locals of the frames a test's exception holds (its answer among them), once
    its report is made: a failed test must not keep its answer alive for the rest of the
    grading (60 failed properties, each holding a 240 MiB answer, took a grader to 2.7 GB)."""
    seen: set[int] = set()
    chain: BaseException | None = exc
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        traceback.clear_frames(chain.__traceback__)
        chain = chain.__cause__ or chain.__context__


def _changed_arguments(item: pytest.Item) -> Message | None:
    """Why a property that passed is lost all the same: a call changed its arguments
    beyond what the drill's marker lets it (``mutates``). Every drill, every property:
    the caller's tensors are not the function's to change, whatever the property checks."""
    impl = getattr(item, "funcargs", {}).get("impl")
    changed = impl.changed_arguments() if isinstance(impl, Implementation) else []
    if not changed:
        return None
    return Message("the call {changes}; leave the arguments as they were given (work on a copy: x.clone(), "
                   "not an in-place change of x)", {"changes": LIST_SEPARATOR.join(changed[:3])})


def _missing_requirement(item: pytest.Item) -> str | None:
    if item.get_closest_marker("cuda"):
        import torch
        if not torch.cuda.is_available():
            return CUDA_REASON
    if item.get_closest_marker("distributed"):
        import torch.distributed as dist
        if not (dist.is_available() and dist.is_gloo_available()):
            return GLOO_REASON
    return None
