"""Accuracy by counting: the confusion matrix against torch.bincount of target * C + pred,
recall per class (NaN for a class no sample belongs to), top-k accuracy against torch.topk
where no logit ties and against a stable sort that puts each target after its ties where they
do, and the accuracy of several batches against that of their concatenation."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises, wide
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary_answer
from tests.strategies import float_tensors, int_tensors, sampled

_COUNT = ("count with comparisons and sums (== against torch.arange, a one-hot) or with "
          "index_put_(..., accumulate=True) / scatter_add_")
pytestmark = pytest.mark.exercise(points=10, forbid={
    "torch.bincount": _COUNT,
    "Tensor.bincount": _COUNT,
    "torch.histc": _COUNT,
    "torch.histogram": _COUNT,
    "torch.histogramdd": _COUNT,
})

FLOATS = (torch.float64, torch.float32)


# ------------------------------------------------------------------ cases

@dataclass
class Labels:
    pred: torch.Tensor
    target: torch.Tensor
    num_classes: int

    def text(self) -> str:
        return f"pred {self.pred.tolist()}, target {self.target.tolist()}, num_classes={self.num_classes}"

    def args(self) -> tuple[torch.Tensor, torch.Tensor, int]:
        return self.pred.clone(), self.target.clone(), self.num_classes

    def expected_counts(self) -> torch.Tensor:
        c = self.num_classes
        return torch.bincount(self.target * c + self.pred, minlength=c * c).reshape(c, c)

    def expected_recall(self) -> torch.Tensor:
        counts = self.expected_counts().double()
        return (counts.diagonal() / counts.sum(dim=1)).float()


@st.composite
def label_cases(draw, min_n: int = 0, every_class: bool = False) -> Labels:
    """Labels of C classes; with ``every_class``, each class has a sample."""
    c = draw(st.integers(1, wide(6, official=12)), label="num_classes")
    n = draw(st.integers(max(min_n, c if every_class else 0), wide(16, official=40)), label="N")
    target = draw(int_tensors((n,), 0, c - 1), label="target")
    if every_class:
        target[:c] = torch.arange(c)
        target = target[torch.tensor(draw(st.permutations(range(n)), label="order"), dtype=torch.int64)]
    pred = draw(int_tensors((n,), 0, c - 1), label="pred")
    return Labels(pred, target, c)


@st.composite
def absent_class_cases(draw) -> Labels:
    """C classes of which at least one has no sample; the predictions may still name it."""
    c = draw(st.integers(2, wide(6, official=12)), label="num_classes")
    absent = draw(st.lists(st.integers(0, c - 1), min_size=1, max_size=c - 1, unique=True), label="absent classes")
    present = torch.tensor([i for i in range(c) if i not in absent], dtype=torch.int64)
    n = draw(st.integers(1, wide(16, official=40)), label="N")
    target = present[draw(int_tensors((n,), 0, len(present) - 1), label="target (index into the present classes)")]
    pred = draw(int_tensors((n,), 0, c - 1), label="pred")
    return Labels(pred, target, c)


SPEC_LABELS = Labels(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2]), 3)


@dataclass
class Logits:
    logits: torch.Tensor
    target: torch.Tensor
    k: int
    spelled: bool = True  # whether a call with k = 1 spells it out or leaves it to the default

    def text(self) -> str:
        return (f"logits of shape {list(self.logits.shape)} ({self.logits.dtype}), k={self.k}"
                + ("" if self.spelled or self.k != 1 else " (k left out: the default)"))

    def rows(self) -> list[list[float]]:
        return [[round(v, 4) for v in row] for row in self.logits.tolist()]

    def call(self, fn):
        if not self.spelled and self.k == 1:
            return fn(self.logits.clone(), self.target.clone())
        return fn(self.logits.clone(), self.target.clone(), self.k)

    def expected_topk(self) -> torch.Tensor:
        """The share of targets among logits.topk(k).indices (where no logit ties)."""
        hits = (self.logits.topk(self.k, dim=1).indices == self.target.unsqueeze(1)).any(dim=1)
        return hits.to(torch.float32).mean()

    def expected(self) -> torch.Tensor:
        """The classes in order of descending logit, each target placed after the classes it
        ties with (two stable sorts: the target last, then by logit): a hit when the target's
        place is below k."""
        is_target = torch.zeros(self.logits.shape, dtype=torch.int64).scatter_(1, self.target.unsqueeze(1), 1)
        first = torch.argsort(is_target, dim=1, stable=True)
        order = first.gather(1, torch.argsort(-self.logits.gather(1, first), dim=1, stable=True))
        place = (order == self.target.unsqueeze(1)).to(torch.int64).argmax(dim=1)
        return (place < self.k).to(torch.float32).mean()


K_DEFAULT_OFTEN = st.one_of(st.just(1), st.integers(1, 64))


@st.composite
def logit_cases(draw, ties: bool = False) -> Logits:
    """(N, C) logits with N >= 1: distinct within each row (ranks plus noise under half a
    rank), or with ``ties`` small integers, tied everywhere."""
    c = draw(st.integers(1, wide(6, official=12)), label="C")
    n = draw(st.integers(1, wide(8, official=20)), label="N")
    dtype = draw(sampled(FLOATS), label="dtype")
    if ties:
        logits = draw(int_tensors((n, c), 0, 2), label="logits (small integers)").to(dtype)
    else:
        ranks = torch.tensor([draw(st.permutations(range(c)), label=f"ranks of row {i}") for i in range(n)],
                             dtype=torch.float64).reshape(n, c)
        noise = draw(float_tensors((n, c), low=0.0, high=0.4), label="noise")
        scale = draw(sampled((1.0, 0.5, 3.0)), label="scale")
        logits = ((ranks + noise) * scale - 2.0).to(dtype)
    target = draw(int_tensors((n,), 0, c - 1), label="target")
    k = min(draw(K_DEFAULT_OFTEN, label="k"), c)
    return Logits(logits, target, k, spelled=draw(st.booleans(), label="k spelled out"))


SPEC_LOGITS = torch.tensor([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]])
SPEC_TARGET = torch.tensor([2, 0])


@st.composite
def batch_cases(draw) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Batches of one size and a shorter last one (possibly empty), at least one sample."""
    c = draw(st.integers(2, 5), label="num_classes")
    full = draw(st.integers(1, wide(6, official=16)), label="batch size")
    count = draw(st.integers(1, 4), label="batches")
    sizes = [full] * (count - 1) + [draw(st.integers(0 if count > 1 else 1, full), label="last batch size")]
    batches = []
    for i, n in enumerate(sizes):
        target = draw(int_tensors((n,), 0, c - 1), label=f"target {i}")
        pred = draw(int_tensors((n,), 0, c - 1), label=f"pred {i}")
        batches.append((pred, target))
    return batches


def batches_text(batches) -> str:
    return f"batches of {[t.numel() for _, t in batches]} samples"


def expected_over_batches(batches) -> torch.Tensor:
    pred = torch.cat([p for p, _ in batches])
    target = torch.cat([t for _, t in batches])
    return (pred == target).to(torch.float32).mean()


def copies(batches):
    return [(p.clone(), t.clone()) for p, t in batches]


SPEC_BATCHES = [(torch.tensor([0, 1, 1, 0]), torch.tensor([0, 1, 1, 1])), (torch.tensor([1]), torch.tensor([0]))]


def ordinary_counts(impl, case: Labels, why: str):
    return anchored(lambda: impl.confusion_matrix(*case.args()), case.expected_counts,
                    what=f"confusion_matrix of {case.text()} ({why})")


def ordinary_recall(impl, case: Labels, why: str):
    return anchored(lambda: impl.per_class_accuracy(*case.args()), case.expected_recall, equal_nan=True,
                    what=f"per_class_accuracy of {case.text()} ({why})")


# ------------------------------------------------------------------ confusion matrix

@pytest.mark.weight(3)
@settings(max_examples=25)
@example(SPEC_LABELS)
@given(label_cases())
def test_confusion_matrix_matches_bincount(impl, case):
    assert_same(impl.confusion_matrix(*case.args()), case.expected_counts(),
                what=f"confusion_matrix of {case.text()}, vs torch.bincount(target * C + pred) as a "
                     "(C, C) matrix: rows are true classes, columns predicted ones")


BAD_LABELS = ("pred holds num_classes", "target holds num_classes", "pred holds -1", "target holds -1",
              "pred is one longer than target", "num_classes is 0")


@settings(max_examples=12)
@given(label_cases(min_n=1), sampled(BAD_LABELS), label_cases(min_n=1))
def test_bad_labels_raise_value_error(impl, case, bad, ordinary):
    """A label one past the last class (which the code target * C + pred would file in the next
    row) or below 0, labels of two lengths, no class at all: ValueError from both functions."""
    pred, target, c = case.args()
    if bad == "pred holds num_classes":
        pred[-1] = c
    elif bad == "target holds num_classes":
        target[-1] = c
    elif bad == "pred holds -1":
        pred[0] = -1
    elif bad == "target holds -1":
        target[0] = -1
    elif bad == "pred is one longer than target":
        pred = torch.cat([pred, pred[:1]])
    else:  # and no sample either: nothing but num_classes itself is wrong
        pred, target, c = pred[:0], target[:0], 0
    when = f"{bad} (pred {pred.tolist()}, target {target.tolist()}, num_classes={c})"
    with ordinary_counts(impl, ordinary, "beside the error case"), \
            ordinary_recall(impl, ordinary, "beside the error case"):
        with expect_raises(ValueError, when=f"confusion_matrix: {when}"):
            impl.confusion_matrix(pred.clone(), target.clone(), c)
        with expect_raises(ValueError, when=f"per_class_accuracy: {when}"):
            impl.per_class_accuracy(pred.clone(), target.clone(), c)


# ------------------------------------------------------------------ per-class accuracy

@pytest.mark.weight(2)
@settings(max_examples=20)
@given(label_cases(every_class=True))
def test_per_class_accuracy_is_each_class_recall(impl, case):
    """Every class has a sample: each entry is the diagonal over its row."""
    assert_same(impl.per_class_accuracy(*case.args()), case.expected_recall(),
                what=f"per_class_accuracy of {case.text()}: hits of class i over the samples of class "
                     "i (the diagonal over the row sums)")


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(Labels(SPEC_LABELS.pred, SPEC_LABELS.target, 4), Labels(SPEC_LABELS.pred, SPEC_LABELS.target, 3))
@given(absent_class_cases(), label_cases(every_class=True))
def test_a_class_that_never_appears_gets_nan(impl, case, ordinary):
    """Some classes have no sample (predictions may still name them): NaN there, 0 / 0 left
    unknown, and the other classes' recall unaffected."""
    with ordinary_recall(impl, ordinary, "every class has a sample"):
        absent = [i for i in range(case.num_classes) if not bool((case.target == i).any())]
        assert_same(impl.per_class_accuracy(*case.args()), case.expected_recall(), equal_nan=True,
                    what=f"per_class_accuracy of {case.text()}: nan for the classes {absent}, which no "
                         "sample belongs to (0 / 0 is unknown, not 0), the recall elsewhere")


# ------------------------------------------------------------------ top-k accuracy

@pytest.mark.weight(3)
@settings(max_examples=25)
@example(Logits(SPEC_LOGITS[:1], SPEC_TARGET[:1], 1, spelled=False))
@given(logit_cases())
def test_top_k_accuracy_matches_torch_topk(impl, case):
    """Distinct logits in every row: the share of samples whose target is among topk's k."""
    assert_same(case.call(impl.top_k_accuracy), case.expected_topk(),
                what=f"top_k_accuracy of {case.text()}, vs the share of targets among "
                     "logits.topk(k).indices")


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(Logits(SPEC_LOGITS, SPEC_TARGET, 2), Logits(SPEC_LOGITS[:1], SPEC_TARGET[:1], 1))
@given(logit_cases(ties=True), logit_cases())
def test_ties_count_against_the_target(impl, case, ordinary):
    """Logits that are small integers tie everywhere: a sample counts only when fewer than k
    other classes are at or above its target's logit (topk's own choice among ties is not
    the spec)."""
    with anchored(lambda: ordinary.call(impl.top_k_accuracy), ordinary.expected,
                  what=f"top_k_accuracy of {ordinary.text()} (distinct logits)"):
        assert_same(case.call(impl.top_k_accuracy), case.expected(),
                    what=f"top_k_accuracy of {case.text()} with tied logits {case.rows()} and "
                         f"target {case.target.tolist()}: a sample counts only when fewer than k other "
                         "classes have a logit >= its target's")


@settings(max_examples=10)
@given(logit_cases(), st.sampled_from(["k is 0", "k is C + 1", "no sample"]), logit_cases())
def test_a_bad_k_or_no_sample_raises_value_error(impl, case, bad, ordinary):
    logits, target = case.logits.clone(), case.target.clone()
    c = logits.shape[1]
    k = {"k is 0": 0, "k is C + 1": c + 1}.get(bad, 1)
    if bad == "no sample":
        logits, target = logits[:0], target[:0]
    with anchored(lambda: ordinary.call(impl.top_k_accuracy), ordinary.expected,
                  what=f"top_k_accuracy of {ordinary.text()} (beside the error case)"):
        with expect_raises(ValueError, when=f"{bad} (logits of shape {list(logits.shape)}, k={k})"):
            impl.top_k_accuracy(logits, target, k)


# ------------------------------------------------------------------ several batches

@pytest.mark.weight(3)
@settings(max_examples=25)
@example(SPEC_BATCHES)
@given(batch_cases())
def test_accuracy_over_batches_is_the_accuracy_of_the_concatenation(impl, batches):
    assert_same(impl.accuracy_over_batches(copies(batches)), expected_over_batches(batches),
                what=f"accuracy_over_batches of {batches_text(batches)}, vs the accuracy of their "
                     "concatenation: every hit over every sample, not the mean of the batch accuracies")


@settings(max_examples=8)
@given(st.integers(0, 3), batch_cases())
def test_no_sample_raises_value_error(impl, empties, ordinary):
    """No batch, or only empty batches: the accuracy of nothing is undefined."""
    nothing = [(torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64))] * empties
    with anchored(lambda: impl.accuracy_over_batches(copies(ordinary)), lambda: expected_over_batches(ordinary),
                  what=f"accuracy_over_batches of {batches_text(ordinary)} (beside the error case)"):
        with expect_raises(ValueError, when=f"{empties} empty batches and no other" if empties else "no batch at all"):
            impl.accuracy_over_batches(nothing)


# ------------------------------------------------------------------ arguments

@settings(max_examples=10)
@given(label_cases(min_n=1), logit_cases(), batch_cases())
def test_arguments_are_left_alone(impl, labels, logits, batches):
    """Each function leaves its labels and logits as they came (computing target * C + pred in
    place would not), and each call's answer is right."""
    for name, call, oracle in (
            ("confusion_matrix", lambda: impl.confusion_matrix(*labels.args()), labels.expected_counts),
            ("per_class_accuracy", lambda: impl.per_class_accuracy(*labels.args()), labels.expected_recall),
            ("top_k_accuracy", lambda: logits.call(impl.top_k_accuracy), logits.expected),
            ("accuracy_over_batches", lambda: impl.accuracy_over_batches(copies(batches)),
             lambda: expected_over_batches(batches))):
        got = call()
        assert_arguments_unchanged(impl, what=f"the arguments after {name}")
        assert_ordinary_answer(got, oracle(), equal_nan=True, what=f"the same call of {name}")


# ------------------------------------------------------------------ on the GPU

def check_on_device(impl, labels: Labels, logits: Logits, batches, device: str) -> None:
    """Every function on ``device``: the answers stay there, and equal the CPU oracles."""
    def on_device(got, what: str) -> torch.Tensor:
        assert isinstance(got, torch.Tensor) and got.device.type == device, (
            f"{what} came back on {getattr(got, 'device', None)}; expected {device}, where its inputs are")
        return got.cpu()

    pred, target, c = labels.pred.to(device), labels.target.to(device), labels.num_classes
    assert_same(on_device(impl.confusion_matrix(pred, target, c), "confusion_matrix"), labels.expected_counts(),
                what=f"confusion_matrix on {device} ({labels.text()})")
    assert_same(on_device(impl.per_class_accuracy(pred, target, c), "per_class_accuracy"),
                labels.expected_recall(), equal_nan=True, what=f"per_class_accuracy on {device} ({labels.text()})")
    got = impl.top_k_accuracy(logits.logits.to(device), logits.target.to(device), logits.k)
    assert_same(on_device(got, "top_k_accuracy"), logits.expected(),
                what=f"top_k_accuracy on {device} ({logits.text()})")
    got = impl.accuracy_over_batches([(p.to(device), t.to(device)) for p, t in batches])
    assert_same(on_device(got, "accuracy_over_batches"), expected_over_batches(batches),
                what=f"accuracy_over_batches on {device} ({batches_text(batches)})")


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=15)
@given(label_cases(min_n=1), logit_cases(ties=True), batch_cases())
def test_on_gpu(impl, labels, logits, batches):
    check_on_device(impl, labels, logits, batches, "cuda")
