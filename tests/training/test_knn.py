"""k-nearest-neighbour prediction: topk on Euclidean distance, majority vote, ties to the smallest label."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.testing import expect_raises, wide
from tests.properties import anchored
from tests.strategies import float_tensors, layouts

pytestmark = pytest.mark.exercise(points=10)

# Relative slack on squared distances: two training points whose distances to a
# query are this close count as tied, and either may be among the k nearest.
DISTANCE_SLACK = {torch.float64: 1e-9, torch.float32: 1e-4}


@dataclass
class KnnCase:
    train_x: torch.Tensor  # (N, D)
    train_y: torch.Tensor  # (N,) int64
    queries: torch.Tensor  # (M, D)
    k: int
    # How train_x, train_y and queries reach the student in memory (default: as they are).
    lay: dict[str, Callable[[torch.Tensor], torch.Tensor]] = field(default_factory=dict)

    def call(self, knn_predict, device: str = "cpu"):
        def arg(name: str) -> torch.Tensor:
            t = getattr(self, name)
            return (self.lay[name](t) if name in self.lay else t.clone()).to(device)

        return knn_predict(arg("train_x"), arg("train_y"), arg("queries"), self.k)


def coordinates(dim: int, dtype: torch.dtype) -> st.SearchStrategy[list[float]]:
    width = 64 if dtype == torch.float64 else 32
    return st.lists(st.floats(-5, 5, width=width), min_size=dim, max_size=dim)


@st.composite
def knn_cases(draw, dtypes=(torch.float64, torch.float32)) -> KnnCase:
    """1-10 training points in 1-3 dimensions with labels 0-3, and 1-5 queries.

    Drawn as lists of points (not whole arrays) so that a failing case shrinks by
    dropping points and queries until only the ones that matter are left.
    """
    dim = draw(st.integers(1, 3), label="D")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    points = draw(st.lists(st.tuples(coordinates(dim, dtype), st.integers(0, 3)),
                           min_size=1, max_size=10), label="training points (x, y)")
    queries = draw(st.lists(coordinates(dim, dtype), min_size=1, max_size=5), label="queries")
    k = draw(st.integers(1, len(points)), label="k")
    return KnnCase(torch.tensor([x for x, _ in points], dtype=dtype),
                   torch.tensor([y for _, y in points], dtype=torch.int64),
                   torch.tensor(queries, dtype=dtype), k)


@st.composite
def laid_out(draw, cases: st.SearchStrategy[KnnCase]) -> KnnCase:
    """A case whose train_x, train_y and queries each reach the student in a memory layout of
    their own (a transposed (D, N) storage, strided views of a NaN-filled one)."""
    case = draw(cases)
    case.lay = {name: draw(layouts(getattr(case, name).dim(), label=name), label=f"layout of {name}")
                for name in ("train_x", "train_y", "queries")}
    return case


# Two training points whose order by Euclidean distance from a query at the origin differs
# from their order by another distance: (A, B, the nearer one by Euclid, the metric fooled).
METRIC_TRAPS = [
    ((3.0, 0.0), (2.0, 2.0), "B", "L1 |dx| + |dy| (3 < 4)"),            # Euclid: 8 < 9
    ((2.0, 0.0), (1.5, 1.5), "A", "max(|dx|, |dy|) (1.5 < 2)"),        # Euclid: 4 < 4.5
    ((1.0, -1.0), (1.25, 0.0), "B", "(dx + dy)^2 (0 < 1.5625)"),       # Euclid: 1.5625 < 2
]


@st.composite
def metric_trap_cases(draw, dtypes=(torch.float64, torch.float32)) -> tuple[KnnCase, list[int]]:
    """k = 1 and one query per trap (far apart from each other), each with two training points
    that L1, the max norm or the square of the summed difference would rank the other way
    round; embedded in D = 2 or 3 dims by a signed choice of axes, scaled, shifted, shuffled.
    Returns the case and the Euclidean answers: one label per query, no two equal, so no
    constant answer, and no other distance, gets them all."""
    dim = draw(st.integers(2, 3), label="D")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    axes = draw(st.permutations(range(dim)), label="axes")[:2]
    signs = [draw(st.sampled_from([1.0, -1.0]), label="sign") for _ in range(2)]
    scale = draw(st.sampled_from([0.5, 1.0, 2.0]), label="scale")
    labels = draw(st.permutations(range(2 * len(METRIC_TRAPS))), label="labels")
    queries, points, point_labels, expected = [], [], [], []
    for t, (a, b, nearer, _) in enumerate(METRIC_TRAPS):
        centre = draw(float_tensors((dim,), low=-3, high=3), label=f"query {t}") + 100.0 * t
        queries.append(centre)
        for which, (u, v) in (("A", a), ("B", b)):
            point = centre.clone()
            point[axes[0]] += signs[0] * scale * u
            point[axes[1]] += signs[1] * scale * v
            points.append(point)
            point_labels.append(labels[2 * t + (which == "B")])
            if which == nearer:
                expected.append(point_labels[-1])
    order = draw(st.permutations(range(len(points))), label="training order")
    case = KnnCase(torch.stack([points[i] for i in order]).to(dtype),
                   torch.tensor([point_labels[i] for i in order]), torch.stack(queries).to(dtype), 1)
    return case, expected


def on_ordinary_input(impl, ordinary: tuple[KnnCase, list[int]]):
    """Rides along with a form, error or corner check: the labels of a metric-trap case."""
    case, expected = ordinary
    return anchored(lambda: as_labels(case.call(impl.knn_predict), case), lambda: expected,
                    what="labels of an ordinary input (k=1, each query's nearest training point "
                         "by Euclidean distance), checked beside the property")


# ------------------------------------------------------------------ the oracle


def winner(counts: Counter) -> int:
    """Most votes; among tied labels the smallest."""
    best = max(counts.values())
    return min(label for label, c in counts.items() if c == best)


def fillings(tied: Counter, r: int) -> Iterator[Counter]:
    """Every way to take ``r`` points out of the tied ones, as label counts."""
    labels = sorted(tied)

    def walk(i: int, left: int, taken: Counter) -> Iterator[Counter]:
        if i == len(labels):
            if left == 0:
                yield taken
            return
        for take in range(min(left, tied[labels[i]]) + 1):
            yield from walk(i + 1, left - take, taken + Counter({labels[i]: take}))

    yield from walk(0, r, Counter())


def acceptable_labels(case: KnnCase, q: int) -> tuple[set[int], list[int]]:
    """The labels a correct vote may give query ``q``, and its neighbours' labels by distance.

    Usually one label. Only when training points tie in distance across the k-th
    place (any of them may be the k-th neighbour) can there be several.
    """
    x, query = case.train_x.double(), case.queries[q].double()
    distances = ((x - query) ** 2).sum(-1).tolist()
    labels = case.train_y.tolist()
    scale = 1 + x.shape[1] * max(x.abs().max().item(), query.abs().max().item()) ** 2
    slack = DISTANCE_SLACK[case.train_x.dtype] * scale
    kth = sorted(distances)[case.k - 1]
    inside = Counter(y for d, y in zip(distances, labels) if d < kth - slack)
    tied = Counter(y for d, y in zip(distances, labels) if abs(d - kth) <= slack)
    by_distance = [y for _, y in sorted(zip(distances, labels), key=lambda p: p[0])]
    choices = {winner(inside + taken) for taken in fillings(tied, case.k - inside.total())}
    return choices, by_distance


def as_labels(result, case: KnnCase, device: str = "cpu") -> list[int]:
    m = len(case.queries)
    assert type(result) is torch.Tensor, (
        f"knn_predict returned a {type(result).__name__}; expected a torch.Tensor of labels")
    assert result.dtype == torch.int64 and tuple(result.shape) == (m,), (
        f"knn_predict returned a {result.dtype} tensor of shape {tuple(result.shape)}; expected "
        f"torch.int64 labels of shape ({m},), one per query")
    assert result.device.type == device, (
        f"the labels are on {result.device}; expected them on {device}, with the inputs")
    return result.tolist()


def check_votes(knn_predict, case: KnnCase, device: str = "cpu") -> None:
    got = as_labels(case.call(knn_predict, device), case, device)
    for q, label in enumerate(got):
        choices, by_distance = acceptable_labels(case, q)
        assert label in choices, (
            f"query {q} (k={case.k}): predicted label {label}, expected "
            f"{' or '.join(map(str, sorted(choices)))}. Training labels from nearest to farthest: "
            f"{by_distance}; the vote is over the first {case.k}, and a tie goes to the smallest "
            "label")


# ------------------------------------------------------------------ properties


# The spec's examples: five points on a line, labels 1 1 0 0 0; the last is a 1 : 0 tie.
SPEC_X, SPEC_Y = torch.tensor([[0.0], [1.0], [2.0], [10.0], [11.0]]), torch.tensor([1, 1, 0, 0, 0])


@pytest.mark.weight(4)
@example(KnnCase(SPEC_X, SPEC_Y, torch.tensor([[0.5], [10.5]]), 3))
@example(KnnCase(SPEC_X, SPEC_Y, torch.tensor([[0.5]]), 2))
@example(KnnCase(SPEC_X, SPEC_Y, torch.tensor([[1.2]]), 2))
@given(laid_out(knn_cases()))
def test_predictions_are_the_vote_of_the_k_nearest(impl, case):
    """train_x, train_y and queries in any memory layout."""
    check_votes(impl.knn_predict, case)


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(metric_trap_cases())
def test_distance_is_euclidean(impl, trap):
    """Points where L1, the max norm or (sum of differences)^2 pick another nearest neighbour
    than the Euclidean distance does."""
    case, expected = trap
    got = as_labels(case.call(impl.knn_predict), case)
    assert got == expected, (
        f"k=1: predicted {got}, expected {expected}: each query's nearest training point by "
        "Euclidean distance, ((q - x) ** 2).sum(-1); a query here has one point nearer by "
        + ", one by ".join(fooled for *_, fooled in METRIC_TRAPS))


# torch.cdist's default compute_mode computes Euclidean distances by the expansion
# |q|^2 - 2 q.x + |x|^2 (a matmul) when either input has more than this many rows.
CDIST_MM_ROWS = 25


@st.composite
def far_from_origin_cases(draw) -> tuple[KnnCase, KnnCase]:
    """k = 1, 4-10 training points, or 26-40 (past the 25 rows where ``torch.cdist`` switches
    to the expansion below), with labels all different and 2-5 queries, all within [-1, 1]
    of a point far from the origin (every coordinate 1e9 or 1e10 from 0, float64).

    Subtracting first, the differences q - x are exact, so every query has one right
    label. The expansion |q|^2 - 2 q.x + |x|^2 rounds terms near 1e18 to multiples of
    hundreds, far more than any distance here: its ranking is noise, whatever the CPU's
    matmul does with it, and with no two labels alike a noisy ranking misses most queries.
    Returns the case and the same points moved back exactly (far - shift), for the oracle.
    (Cases drawn as for the other properties, with repeated labels and k up to N, let the
    expansion pass on one CPU and fail on another.)
    """
    dim = draw(st.integers(1, 3), label="D")
    offset = draw(st.sampled_from([1e9, 1e10]), label="offset")
    shift = torch.tensor(draw(st.lists(st.sampled_from([offset, -offset]), min_size=dim, max_size=dim),
                              label="signs of the shift"), dtype=torch.float64)
    n = draw(st.one_of(st.integers(4, 10), st.integers(CDIST_MM_ROWS + 1, wide(40, official=64))),
             label="N")
    m = draw(st.integers(2, wide(5)), label="M")
    coordinates = hnp.arrays(np.float64, (n + m, dim), elements=st.floats(-1, 1), unique=True)
    far = torch.from_numpy(draw(coordinates, label="points")) + shift
    near = far - shift  # exact: both sides of each subtraction are within a factor 2
    labels = torch.tensor(draw(st.permutations(range(n)), label="labels"), dtype=torch.int64)
    return KnnCase(far[:n], labels, far[n:], 1), KnnCase(near[:n], labels, near[n:], 1)


def past_cdist_switch() -> tuple[KnnCase, KnnCase]:
    """30 training points on a line within [-1, 1] of 1e9, labels 0..29, two queries: past
    the 25 rows where torch.cdist switches to the expansion, in every grading."""
    shift = 1e9
    far = torch.linspace(-1, 1, CDIST_MM_ROWS + 5, dtype=torch.float64)[:, None] + shift
    far_queries = torch.tensor([[0.013], [-0.52]], dtype=torch.float64) + shift
    labels = torch.arange(len(far)).flip(0)
    return (KnnCase(far, labels, far_queries, 1),
            KnnCase(far - shift, labels, far_queries - shift, 1))


@pytest.mark.weight(2)
@settings(max_examples=20)
@example(past_cdist_switch())
@given(far_from_origin_cases())
def test_points_far_from_the_origin(impl, cases):
    """Coordinates near 1e9 or 1e10 (float64): the differences q - x stay exact, but
    |q|^2 - 2 q.x + |x|^2 subtracts numbers near 1e18 and loses the distances."""
    far, near = cases
    got = as_labels(far.call(impl.knn_predict), far)
    for q, label in enumerate(got):
        choices, by_distance = acceptable_labels(near, q)
        assert label in choices, (
            f"query {q} (k=1, coordinates near {far.queries[q].abs().max().item():.0e}): predicted "
            f"label {label}, expected {' or '.join(map(str, sorted(choices)))}. Training labels "
            f"from nearest to farthest: {by_distance}. Subtract first, then square: "
            "((q - x) ** 2).sum(-1); the expansion |q|^2 - 2 q.x + |x|^2 cancels catastrophically "
            f"(torch.cdist uses it with more than {CDIST_MM_ROWS} points, here N={len(far.train_x)})")


@st.composite
def tie_cases(draw) -> tuple[KnnCase, int]:
    """A query whose k = 2p nearest neighbours split p : p between labels small < large,
    the nearest one labelled large; farther points (not neighbours) are labelled large too."""
    pairs = draw(st.integers(1, 3), label="p")
    small = draw(st.integers(0, 3), label="small label")
    large = draw(st.integers(small + 1, 4), label="large label")
    far = draw(st.integers(0, 3), label="farther points")
    dim, axis = draw(st.integers(1, 3), label="D"), draw(st.integers(0, 2), label="axis")
    direction = draw(st.sampled_from([1.0, -1.0]), label="direction")
    query = draw(float_tensors((1, dim), low=-3, high=3), label="query")
    labels = [large if i % 2 == 0 else small for i in range(2 * pairs)] + [large] * far
    steps = list(range(1, 2 * pairs + 1)) + [20 + i for i in range(far)]
    points = query.repeat(len(steps), 1)
    points[:, axis % dim] += direction * torch.tensor(steps, dtype=torch.float64)
    order = draw(st.permutations(range(len(steps))), label="training order")
    case = KnnCase(points[list(order)], torch.tensor([labels[i] for i in order]), query, 2 * pairs)
    return case, small


@pytest.mark.weight(2)
@settings(max_examples=50)
@given(tie_cases(), metric_trap_cases())
def test_vote_ties_go_to_the_smallest_label(impl, tie, ordinary):
    case, small = tie
    with on_ordinary_input(impl, ordinary):
        got = as_labels(case.call(impl.knn_predict), case)
        _, by_distance = acceptable_labels(case, 0)
        assert got == [small], (
            f"the {case.k} nearest neighbours have labels {by_distance[:case.k]} (nearest first): "
            f"a tie between {small} and {by_distance[0]}; expected the smaller label {small}, "
            f"got {got[0]}")


@settings(max_examples=30)
@given(knn_cases())
def test_returns_int64_labels_one_per_query(impl, case):
    """The form, then the same labels against the vote."""
    check_votes(impl.knn_predict, case)


@settings(max_examples=20)
@given(knn_cases(dtypes=(torch.float64,)), st.sampled_from(["zero", "negative", "more than N"]),
       metric_trap_cases())
def test_bad_k_raises_value_error(impl, case, why, ordinary):
    k = {"zero": 0, "negative": -1, "more than N": len(case.train_x) + 1}[why]
    with on_ordinary_input(impl, ordinary):
        with expect_raises(ValueError, when=f"k is {why} (k={k}, N={len(case.train_x)})"):
            impl.knn_predict(case.train_x, case.train_y, case.queries, k)


# ------------------------------------------------------------------ GPU


@pytest.mark.cuda
@settings(max_examples=30)
@given(knn_cases(dtypes=(torch.float32,)))
def test_float32_on_gpu_votes_like_float64(impl, case):
    """Distances in float32 on the GPU, indices and labels on the GPU: the same votes
    (up to float32-sized distance ties), and the labels stay on the GPU."""
    check_votes(impl.knn_predict, case, "cuda")
