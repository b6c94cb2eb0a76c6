"""PCA via the SVD of the centred data: orthonormal components by explained variance, checked up to sign."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from grader.testing import as_tuple, assert_same, expect_raises
from tests.numerics import full_float32
from tests.properties import anchored, assert_arguments_unchanged, assert_ordinary
from tests.strategies import any_layout

pytestmark = pytest.mark.exercise(points=10)


@dataclass
class PcaCase:
    x: torch.Tensor  # (N, D)
    k: int

    @property
    def centred(self) -> torch.Tensor:
        return self.x - self.x.mean(dim=0)

    @property
    def scale(self) -> float:
        """Size of the centred data, for absolute tolerances on projections."""
        return 1.0 + self.centred.abs().max().item() * self.x.shape[1] ** 0.5


def separated_ks(singular_values: list[float], min_gap: float) -> list[int]:
    """The k for which the top k components are well defined (up to sign): each of the first
    k singular values is clearly positive and clearly apart from the next one."""
    top = singular_values[0] if singular_values else 0.0
    if top < 1e-6:
        return []
    ks = []
    for k in range(1, len(singular_values) + 1):
        s = singular_values[k - 1]
        after = singular_values[k] if k < len(singular_values) else 0.0
        if s < min_gap * top or (k < len(singular_values) and s - after < min_gap * top):
            break
        ks.append(k)
    return ks


@st.composite
def pca_cases(draw, dtypes=(torch.float64,), min_gap: float = 1e-3) -> PcaCase:
    """2-8 examples of 1-4 features in [-10, 10], and a k whose components are unique up to
    sign (the data's top singular values are apart by ``min_gap`` of the largest)."""
    dim = draw(st.integers(1, 4), label="D")
    dtype = draw(st.sampled_from(dtypes), label="dtype")
    width = 64 if dtype == torch.float64 else 32
    rows = draw(st.lists(st.lists(st.floats(-10, 10, width=width), min_size=dim, max_size=dim),
                         min_size=2, max_size=8), label="x (rows)")
    x = torch.tensor(rows, dtype=dtype)
    centred = x.double() - x.double().mean(dim=0)
    ks = separated_ks(torch.linalg.svdvals(centred).tolist(), min_gap)
    assume(ks)
    return PcaCase(x, draw(st.sampled_from(ks), label="k"))


def expected_components(case: PcaCase) -> torch.Tensor:
    """PyTorch's own SVD of the centred data, in float64."""
    _, _, vh = torch.linalg.svd(case.centred.double(), full_matrices=False)
    return vh[:case.k]


def as_pair(result, case: PcaCase, device: str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """``(components, projected)`` after checking their types, shapes, dtype and device."""
    assert isinstance(result, tuple) and len(as_tuple(result)) == 2, (
        f"pca should return a tuple (components, projected), got {type(result).__name__}")
    result = as_tuple(result)  # a named tuple is a tuple too
    n, d = case.x.shape
    for name, value, shape in (("components", result[0], (case.k, d)),
                               ("projected", result[1], (n, case.k))):
        assert type(value) is torch.Tensor, f"{name} is a {type(value).__name__}, not a tensor"
        assert tuple(value.shape) == shape, (
            f"{name} has shape {tuple(value.shape)}; expected {shape} for x of shape {(n, d)} "
            f"and k={case.k}")
        assert value.dtype == case.x.dtype, f"{name} is {value.dtype}; expected x's dtype {case.x.dtype}"
        assert value.device.type == device, f"{name} is on {value.device}; expected {device}, like x"
    return result[0], result[1]


def sign_aligned(got: torch.Tensor, expected: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``got``'s rows flipped to point the way ``expected``'s do, and the flips (+1 / -1)."""
    signs = torch.where((got * expected).sum(dim=1) < 0, -1.0, 1.0).to(got.dtype)
    return got * signs[:, None], signs


def call(impl, case: PcaCase):
    return impl.pca(case.x.clone(), case.k)


def check_components(components: torch.Tensor, case: PcaCase, note: str = "") -> None:
    """The components equal the rows of Vh from PyTorch's SVD of the centred x, up to sign
    (the comparison every form, invariant and error check rides along with)."""
    expected = expected_components(case)
    aligned, _ = sign_aligned(components, expected)
    assert_same(aligned, expected, rtol=1e-6, atol=1e-6,
                what=f"components for k={case.k}{note} (each row compared up to sign with the "
                     "rows of Vh from torch.linalg.svd of the centred x, largest singular value "
                     "first)")


def on_ordinary_input(impl, case: PcaCase):
    """Rides along with an error check: the components of an ordinary x against the SVD."""
    return anchored(lambda: as_pair(call(impl, case), case)[0], lambda: None,
                    compare=lambda got, _, what: check_components(got, case, " of an ordinary x "
                                                                           "(beside the error case)"))


# ------------------------------------------------------------------ properties


@pytest.mark.weight(3)
@given(pca_cases(), st.data())
def test_components_match_svd_up_to_sign(impl, case, data):
    """x in any memory layout (column-major, as a transposed (D, N) array arrives; strided)."""
    components, _ = as_pair(impl.pca(data.draw(any_layout(case.x, label="x")), case.k), case)
    check_components(components, case)


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(pca_cases(), st.sampled_from([1e6, 1e7]), st.data())
def test_data_far_from_the_origin(impl, case, offset, data):
    """Every feature shifted by +-1e6 or +-1e7 (float64): centring first keeps the digits; a
    covariance from E[x x^T] - mean mean^T subtracts numbers near 1e14 and loses them."""
    signs = data.draw(st.lists(st.sampled_from([1.0, -1.0]), min_size=case.x.shape[1],
                               max_size=case.x.shape[1]), label="direction of each shift")
    shift = offset * torch.tensor(signs, dtype=case.x.dtype)
    far = PcaCase(case.x + shift, case.k)
    near = PcaCase(far.x - shift, case.k)  # the same points moved back (exactly): the oracle's
    components, _ = as_pair(call(impl, far), far)
    check_components(components, near, f", every feature shifted by about {offset:g} (centre "
                                        "x first: x - x.mean(dim=0))")


@pytest.mark.weight(2)
@example(PcaCase(torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.5]], dtype=torch.float64), 1))  # the spec's
@given(pca_cases())
def test_projected_is_the_centred_data_in_the_components(impl, case):
    """The identity, then the components themselves against the SVD (zero or identity
    "components" satisfy the identity too)."""
    components, projected = as_pair(call(impl, case), case)
    assert_same(projected, case.centred @ components.T, rtol=1e-6, atol=1e-9 * case.scale,
                what="projected (expected (x - x.mean(dim=0)) @ components.T, with your own "
                     "components and their signs)")
    check_components(components, case)


@pytest.mark.weight(2)
@given(pca_cases())
def test_column_variances_are_the_explained_variances(impl, case):
    _, projected = as_pair(call(impl, case), case)
    n = case.x.shape[0]
    expected = torch.linalg.svdvals(case.centred)[:case.k] ** 2 / (n - 1)
    assert_same(projected.var(dim=0), expected, rtol=1e-6, atol=1e-9 * case.scale ** 2,
                what="variance of each column of projected (expected S[i]**2 / (N - 1) for the "
                     "singular values S of the centred x: largest first)")


@given(pca_cases())
def test_components_are_orthonormal(impl, case):
    """Orthonormal, then the same components against the SVD (the identity is orthonormal)."""
    components, _ = as_pair(call(impl, case), case)
    assert_same(components @ components.T, torch.eye(case.k, dtype=case.x.dtype), atol=1e-9,
                what="components @ components.T (rows of unit length, orthogonal to each other)")
    check_components(components, case)


@settings(max_examples=30)
@given(pca_cases(dtypes=(torch.float64, torch.float32)))
def test_returns_tensors_of_the_right_shapes_and_dtype(impl, case):
    """The form, then the components against the SVD (float32 x: to float32 accuracy)."""
    components, _ = as_pair(call(impl, case), case)
    expected = expected_components(case)
    aligned, _ = sign_aligned(components.double(), expected)
    tol = 1e-6 if case.x.dtype == torch.float64 else 1e-3
    assert_same(aligned, expected, rtol=tol, atol=tol,
                what=f"{case.x.dtype} components for k={case.k} (up to sign, vs the float64 SVD)")


@settings(max_examples=30)
@given(pca_cases())
def test_x_is_left_unchanged(impl, case):
    """x keeps its values, and the same call's components match the SVD."""
    x = case.x.clone()
    components, _ = as_pair(impl.pca(x, case.k), case)
    assert_arguments_unchanged(impl, what="x after the call (centre a copy: x - x.mean(dim=0), not x -= ...)")
    assert_same(x, case.x, what="x after the call (centre a copy: x - x.mean(dim=0), not x -= ...)")
    assert_ordinary(lambda: check_components(components, case))


BAD_ARGUMENTS = [
    ((5,), 1, "x is 1-D"),
    ((2, 3, 4), 1, "x is 3-D"),
    ((4, 3), 0, "k is 0"),
    ((4, 3), -1, "k is negative"),
    ((4, 3), 4, "k > D"),
    ((2, 5), 3, "k > N"),
]


@settings(max_examples=25)  # a handful of bad calls, each beside an ordinary one
@given(st.sampled_from(BAD_ARGUMENTS), pca_cases())
def test_bad_arguments_raise_value_error(impl, case, ordinary):
    shape, k, why = case
    with on_ordinary_input(impl, ordinary):
        with expect_raises(ValueError, when=f"{why} (x of shape {shape}, k={k})"):
            impl.pca(torch.randn(shape, dtype=torch.float64), k)


# ------------------------------------------------------------------ GPU


def check_float32_against_float64(pca, case: PcaCase, device: str) -> None:
    """``pca`` on float32 ``x`` on ``device`` against PyTorch's float64 SVD of the same values."""
    on_device = PcaCase(case.x.float().to(device), case.k)
    with full_float32():
        components, projected = as_pair(pca(on_device.x.clone(), case.k), on_device, device)
    exact = PcaCase(case.x.float().double(), case.k)
    expected = expected_components(exact)
    aligned, signs = sign_aligned(components.cpu().double(), expected)
    assert_same(aligned, expected, rtol=1e-3, atol=1e-3,
                what=f"float32 components on {device} (up to sign, vs float64 SVD)")
    assert_same(projected.cpu().double() * signs, exact.centred @ expected.T,
                rtol=1e-3, atol=1e-4 * exact.scale,
                what=f"float32 projected on {device} (vs float64, with the same signs as components)")


@pytest.mark.cuda
@settings(max_examples=30)
@given(pca_cases(min_gap=0.05))
def test_float32_on_gpu_matches_float64_svd(impl, case):
    check_float32_against_float64(impl.pca, case, "cuda")
