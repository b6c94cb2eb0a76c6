"""The engine's own words inside other words: what fills a placeholder of a kept message
(``assert_same``'s default ``what``, the summary of a values mismatch) or of a course's
phrase (what a call changed of its arguments or of torch's global state).

A kept message is rendered in the reader's language (``results_json.message_text``), and
so is each of its parameters that one of these templates says: the reader of Chinese
reads "结果：张量不够接近！（4 个元素中有 4 个不同……）", not half of it in English. Each
template is a gettext message (``{name}`` parts match any text, as a drill's
``[phrases]`` do: ``drill_texts.phrase``); the code that writes the words builds them
from the same constants, so the English and its template never drift apart.
"""

from __future__ import annotations

from grader.core.i18n import N_, Translator

# ``grader.contract.expect.assert_same``'s default ``what``
RESULT = N_("result")
# ``grader.contract.expect.value_diff``: a values mismatch in torch.testing's words
VALUES_SUMMARY = N_("({mismatched} of {total} elements differ; first at index {index})")

# ``grader.contract.effects``: what a call changed of torch's global state
RNG = N_("torch's global random generator (torch.manual_seed, or a draw without a generator of your own)")
DEFAULT_DTYPE = N_("the default dtype (torch.set_default_dtype)")
GRAD_MODE = N_("grad mode (torch.set_grad_enabled / no_grad left on)")
THREADS = N_("torch's thread count (torch.set_num_threads)")
DETERMINISTIC = N_("the deterministic-algorithms flag (torch.use_deterministic_algorithms)")

# ``grader.contract.arguments``: what a call changed of its arguments, and which one
CHANGED_IN_PLACE = N_("changed {label} in place")
CHANGED_GRAD = N_("changed {label}.grad")
CHANGED_REQUIRES_GRAD = N_("changed {label}.requires_grad")
CHANGED_MODULE = N_("changed {label}'s modules, parameters or training mode")
CHANGED_OPTIMIZER = N_("changed {label}'s state or options")
ARGUMENT = N_("argument {name}")
RANK_ARGUMENT = N_("rank {rank}'s argument {name}")

# A kept message that stopped another property (``differences.STOPPED_TEXT``'s ``{defect}``)
# says its own words inside that one: the messages of a failed check that are no comparison.
FORBIDDEN = N_("{function} called {name}, which this drill forbids. Instead: {hint}")  # grader.contract.forbid
# the hint of numpy, which every drill that forbids an API forbids too (grader.contract.forbid.NUMPY)
NUMPY_INSTEAD = N_("work with torch's tensors: numpy would do the forbidden work by another name")
RAISED_OTHER = N_("expected {expected} when {when}, but {function} raised {kind}: {error}")  # expect_raises
RETURNED_NORMALLY = N_("expected {expected} when {when}, but the call returned normally")  # expect_raises
STUDENT_RAISED = N_("{function} raised {kind}: {error}")  # grader.core.outcomes.StudentError
ASSERTION_FAILED = N_("assertion failed")  # grader.grading.verdict: an assert without words

# between the parts of a list of them ("changed argument 1 in place; changed argument 2.grad")
LIST_SEPARATOR = N_("; ")

TEMPLATES = (RESULT, VALUES_SUMMARY, RNG, DEFAULT_DTYPE, GRAD_MODE, THREADS, DETERMINISTIC,
             CHANGED_IN_PLACE, CHANGED_GRAD, CHANGED_REQUIRES_GRAD, CHANGED_MODULE, CHANGED_OPTIMIZER,
             RANK_ARGUMENT, ARGUMENT, FORBIDDEN, NUMPY_INSTEAD, RAISED_OTHER, RETURNED_NORMALLY, STUDENT_RAISED, ASSERTION_FAILED)


def phrases(t: Translator) -> dict[str, str]:
    """Each template and its words in ``t``'s language (``drill_texts.phrase``'s table), and
    the list separator (under its own English)."""
    return {template: t.catalog.gettext(template) for template in (*TEMPLATES, LIST_SEPARATOR)}
