"""What a failed property shows, measured from its kept message: the key that makes
failures with the same difference one reason, and the words of a property that another
defect stopped.

A form, error or no-mutation property rides with a comparison of the answer on an
ordinary input (``tests/properties.py``). When that comparison fails, the answer is
wrong on ordinary inputs: a defect the drill's main properties name, not the one this
property is about. Its failure is kept as the comparison's own message under a
``stopped by another defect:`` id (``stopped``), so that it says so in every language,
and ``mistake`` reads through it.

``mistake(record)`` is measured, never guessed: the kind of difference its kept message
id stands for (type, dtype, shape, device, number of items, values, or an exception the
student's function raised), the parameters that say what differs (got ``torch.float32``,
expected ``torch.int64``; the exception's type) and the function whose answer it was
(the message's own, else the last call of the counterexample). The input's description
(``what``) and one example's details (``summary``, an exception's text) are left out:
one mistake shows them differently from example to example. Failures with one key show
the same difference; that failures with two keys have two causes is not measured.
Values that are inf or nan where finite ones were expected (the counterexample's diff
counts them) are a difference of their own: what an overflow leaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from grader.core.i18n import N_, Message

# A comparison's message id (``grader.contract.expect``, ``outcomes.StudentError``) ->
# the kind of difference it shows and the parameters that say what differs.
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "{what}: expected a {expected}, got a {got}": ("type", ("expected", "got")),
    "{what}: expected a torch.Tensor, got {got}": ("type", ("got",)),
    "{what}: expected {expected} item, got {got}": ("length", ()),
    "{what}: expected {expected} items, got {got}": ("length", ()),
    "{what}: expected {expected}, got {got}": ("values", ()),
    "{what}: dtype differs: got {got}, expected {expected}": ("dtype", ("got", "expected")),
    "{what}: shape differs: got {got}, expected {expected}": ("shape", ()),
    "{what}: device differs: got {got}, expected {expected}": ("device", ("got", "expected")),
    "{what}: Tensor-likes are not close! {summary}": ("values", ()),
    "{what}: Tensor-likes are not equal! {summary}": ("values", ()),
    "{function} raised {kind}: {error}": ("raised", ("kind",)),
}

STOPPED_PREFIX = "stopped by another defect: "

# The comparison's message as the failure of a property it stopped: the same words after
# the prefix (each written out, so that the catalogs hold it as one sentence).
STOPPED: dict[str, str] = {
    "{what}: expected a {expected}, got a {got}":
        N_("stopped by another defect: {what}: expected a {expected}, got a {got}"),
    "{what}: expected a torch.Tensor, got {got}":
        N_("stopped by another defect: {what}: expected a torch.Tensor, got {got}"),
    "{what}: expected {expected} item, got {got}":
        N_("stopped by another defect: {what}: expected {expected} item, got {got}"),
    "{what}: expected {expected} items, got {got}":
        N_("stopped by another defect: {what}: expected {expected} items, got {got}"),
    "{what}: expected {expected}, got {got}":
        N_("stopped by another defect: {what}: expected {expected}, got {got}"),
    "{what}: dtype differs: got {got}, expected {expected}":
        N_("stopped by another defect: {what}: dtype differs: got {got}, expected {expected}"),
    "{what}: shape differs: got {got}, expected {expected}":
        N_("stopped by another defect: {what}: shape differs: got {got}, expected {expected}"),
    "{what}: device differs: got {got}, expected {expected}":
        N_("stopped by another defect: {what}: device differs: got {got}, expected {expected}"),
    "{what}: Tensor-likes are not close! {summary}":
        N_("stopped by another defect: {what}: Tensor-likes are not close! {summary}"),
    "{what}: Tensor-likes are not equal! {summary}":
        N_("stopped by another defect: {what}: Tensor-likes are not equal! {summary}"),
}
# Any other failure of the ordinary comparison (a course's own sentence): kept as text.
STOPPED_TEXT = N_("stopped by another defect: {defect}")


def stopped(failure: Message | str) -> Message:
    """The failure of a property's ordinary comparison, as that property's message."""
    if isinstance(failure, Message):
        if failure.id in STOPPED:
            return Message(STOPPED[failure.id], dict(failure.params))
        if failure.id in STOPPED.values() or failure.id == STOPPED_TEXT:
            return failure  # stopped already (an anchor inside an anchor)
    return Message(STOPPED_TEXT, {"defect": str(failure)})


def unstopped(message: Message) -> Message | str | None:
    """What stopped a property (the comparison's message, or its text), or None when
    ``message`` is a property's own failure."""
    if message.id == STOPPED_TEXT:
        return str(message.params.get("defect", ""))
    if message.id.startswith(STOPPED_PREFIX):
        inner = message.id.removeprefix(STOPPED_PREFIX)
        if STOPPED.get(inner) == message.id:
            return Message(inner, dict(message.params))
    return None


def is_stopped(record: Mapping[str, Any]) -> bool:
    """Whether a test record failed only because another defect stopped it."""
    kept = Message.from_json(record.get("message_id"))
    return kept is not None and unstopped(kept) is not None


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _function(message: Message, record: Mapping[str, Any]) -> str:
    """Whose answer differs: the function the message names, else the last call made."""
    named = message.params.get("function")
    if named is None:
        calls = (record.get("counterexample") or {}).get("calls") or []
        last = calls[-1] if calls else None
        named = last.get("function") if isinstance(last, dict) else ""
    return str(named or "").removesuffix("()")


def mistake(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The difference a lost property shows, as a key: properties with the same key lost
    their points to the same difference (``("one_hot", "dtype", "torch.float32",
    "torch.int64")``); a message the engine cannot read is its own key (its first line)."""
    kept = Message.from_json(record.get("message_id"))
    if kept is None:
        return ("text", _first_line(str(record.get("message") or "")) or str(record.get("outcome", "")))
    inner = unstopped(kept)
    if isinstance(inner, str):
        return ("text", _first_line(inner))
    message = inner or kept
    if message.id not in KINDS:
        return ("message", message.id, *(f"{k}={v}" for k, v in sorted(message.params.items())))
    kind, differing = KINDS[message.id]
    shown = [str(message.params.get(p, "")) for p in differing]
    if kind == "values" and _diff(record).get("nonfinite"):
        shown.append("inf or nan")  # an overflow is not the same difference as a wrong value
    return (_function(message, record), kind, *shown)


def _diff(record: Mapping[str, Any]) -> Mapping[str, Any]:
    diff = (record.get("counterexample") or {}).get("diff")
    return diff if isinstance(diff, Mapping) else {}
