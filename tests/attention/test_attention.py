"""Scaled dot-product attention with -1e9 masking, and its causal and padding masks."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from hypothesis import example, given, settings
from hypothesis import strategies as st

from grader.testing import assert_same, expect_raises, wide
from tests.numerics import manual_seed, overflowed, random_weights
from tests.properties import anchored, harder_than
from tests.strategies import VALUE_LAYOUTS, any_layout, float_tensors, int_tensors, shapes

pytestmark = pytest.mark.exercise(points=15, forbid={
    "F.scaled_dot_product_attention": "compute scores = q @ k.transpose(-2, -1) / sqrt(d_k), "
                                      "masked_fill(mask == 0, -1e9), softmax(dim=-1), @ value",
    "nn.MultiheadAttention": "write the attention itself with @, masked_fill and softmax",
    "F.multi_head_attention_forward": "write the attention itself with @, masked_fill and softmax",
})

# Reduced precision on the GPU against float64 on the CPU (inputs rounded first,
# so only the arithmetic differs). bfloat16 keeps 8 bits of mantissa; on the CPU
# its worst error over these cases was ~6e-3. No float16: masked_fill(-1e9)
# overflows it and raises (FIELD-NOTES), so the spec's -1e9 cannot hold there.
GPU_TOLERANCE = {torch.float32: dict(rtol=1e-4, atol=1e-4),
                 torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}
# The same on the CPU, which has float16 and bfloat16 kernels too (the reference's worst
# errors over 200 cases in [-2, 2]: 1.1e-3 and 1.2e-2). float16 only without a mask.
CPU_TOLERANCE = {torch.float16: dict(rtol=1e-2, atol=1e-2),
                 torch.bfloat16: dict(rtol=5e-2, atol=5e-2)}


# ------------------------------------------------------------------ strategies

@st.composite
def masks_for(draw, scores_shape: tuple[int, ...]) -> torch.Tensor:
    """A 0/1 mask (bool or int64) broadcastable to ``scores_shape``: maybe some
    leading dims dropped, some of the rest of size 1 (shrinks to the full shape)."""
    dropped = draw(st.integers(0, len(scores_shape) - 1))
    shape = tuple(1 if draw(st.integers(0, 3)) == 3 else n for n in scores_shape[dropped:])
    bits = draw(st.lists(st.booleans(), min_size=math.prod(shape), max_size=math.prod(shape)))
    mask = torch.tensor(bits, dtype=torch.bool).reshape(shape)
    return mask.to(draw(st.sampled_from([torch.bool, torch.int64])))


@st.composite
def attention_cases(draw, mask: str = "maybe", low: float = -3.0, high: float = 3.0):
    """(query, key, value, mask) in float64 with 0-2 batch dims; mask is
    ``"maybe"`` (None or a mask), ``"always"`` or ``"never"``.

    Shapes and the mask are drawn before the values: hypothesis draws late in a
    long example lean towards their simplest choice (here: no mask)."""
    use_mask = mask == "always" or (mask == "maybe" and draw(st.integers(0, 4)) > 0)
    batch = draw(shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    l_q, l_k = draw(st.integers(1, wide(4, official=9))), draw(st.integers(1, wide(4, official=9)))
    d_k, d_v = draw(st.integers(1, wide(5))), draw(st.integers(1, wide(4)))
    drawn = draw(masks_for((*batch, l_q, l_k))) if use_mask else None
    query = draw(float_tensors((*batch, l_q, d_k), low=low, high=high))
    key = draw(float_tensors((*batch, l_k, d_k), low=low, high=high))
    value = draw(float_tensors((*batch, l_k, d_v), low=low, high=high))
    return query, key, value, drawn


@st.composite
def ordinary_attention_cases(draw):
    """An ordinary unmasked input: a batch of 2, 3 queries and 4 keys of width 5, values of
    width 3, from a seeded normal distribution, so every row of scores differs from key to
    key and no constant, uniform or echoed answer matches it."""
    seed = draw(st.integers(0, 2**16), label="seed of the ordinary input")
    gen = torch.Generator().manual_seed(seed)
    query, key, value = (torch.randn(*shape, dtype=torch.float64, generator=gen)
                         for shape in ((2, 3, 5), (2, 4, 5), (2, 4, 3)))
    return query, key, value, None


# ------------------------------------------------------------------ helpers

def clones(case) -> list[Any]:
    """Fresh copies of (query, key, value, mask) for a call; a mask of None is left out of
    it, so that the default ``mask=None`` is exercised (other calls pass their mask, None too)."""
    args = [None if t is None else t.clone() for t in case]
    return args[:3] if len(args) == 4 and args[3] is None else args


def attend_where(case) -> torch.Tensor:
    """Bool (..., L_q, L_k): True where the query may look at the key."""
    query, key, _, mask = case
    shape = (*query.shape[:-1], key.shape[-2])
    if mask is None:
        return torch.ones(shape, dtype=torch.bool)
    return (mask != 0).expand(shape)


def sdpa_output(case) -> torch.Tensor:
    """F.scaled_dot_product_attention's output (rows with no key to attend: left as torch gives)."""
    query, key, value, mask = case
    return F.scaled_dot_product_attention(query, key, value,
                                          attn_mask=None if mask is None else attend_where(case))


def on_ordinary_input(impl, ordinary):
    """Rides along with an invariant or corner check: attention on an ordinary unmasked
    input, its output against F.scaled_dot_product_attention."""
    return anchored(lambda: impl.attention(*clones(ordinary)), lambda: sdpa_output(ordinary),
                    compare=output_like_sdpa(ordinary, " on an ordinary unmasked input"),
                    what="output on an ordinary unmasked input vs F.scaled_dot_product_attention "
                         "(checked beside the property)")


def output_like_sdpa(case, on: str):
    """A comparison (``compare(got, expected, what)``) of an answer's output on ``case``
    with F.scaled_dot_product_attention's, in the rows that have a key to attend; a
    p_attn scaled by another number than sqrt(d_k) is named (``scale_named``)."""
    def compare(got, expected, what):
        out, _ = output_and_weights(got, case)
        rows = attend_where(case).any(-1)
        with scale_named(got, case, on):
            assert_same(out[rows], expected[rows], what=what)

    return compare


def output_and_weights(got: Any, case) -> tuple[torch.Tensor, torch.Tensor]:
    """The student's (output, p_attn), checked to be two tensors of the right shapes."""
    query, key, value, _ = case
    if not (isinstance(got, (tuple, list)) and len(got) == 2
            and all(isinstance(t, torch.Tensor) for t in got)):
        raise AssertionError(f"attention returned {type(got).__name__}; expected a tuple "
                             "(output, p_attn) of two tensors")
    out, p = got
    out_shape = (*query.shape[:-1], value.shape[-1])
    p_shape = (*query.shape[:-1], key.shape[-2])
    assert tuple(out.shape) == out_shape, f"output has shape {tuple(out.shape)}, expected {out_shape}"
    assert tuple(p.shape) == p_shape, f"p_attn has shape {tuple(p.shape)}, expected {p_shape}"
    return out, p


# ------------------------------------------------------------------ the scale, measured

# What a wrong scale is called, where it was measured (one sentence each, for the
# translations): the block of ``scale_named`` fails, and p_attn says why.
SCALE_FINDINGS = {
    "": "p_attn is softmax(q kᵀ / {divisor}) where the spec divides by sqrt(d_k) = {root} (d_k = {d_k})",
    " on an ordinary unmasked input": "p_attn on an ordinary unmasked input is softmax(q kᵀ / {divisor}) "
                                      "where the spec divides by sqrt(d_k) = {root} (d_k = {d_k})",
    " on the same input unscaled": "p_attn on the same input unscaled is softmax(q kᵀ / {divisor}) "
                                   "where the spec divides by sqrt(d_k) = {root} (d_k = {d_k})",
    " on the same values in float64": "p_attn on the same values in float64 is softmax(q kᵀ / {divisor}) "
                                      "where the spec divides by sqrt(d_k) = {root} (d_k = {d_k})",
}


def implied_divisor(got: Any, case) -> float | None:
    """The c for which the answer's p_attn is softmax(q kᵀ / c) wherever a query may look,
    measured from the ratios of its weights (log p_i - log p_j = (s_i - s_j) / c); None
    when its weights are no such softmax, or the case cannot tell (equal scores)."""
    query, key, _, _ = case
    if not (isinstance(got, (tuple, list)) and len(got) == 2 and type(got[1]) is torch.Tensor):
        return None
    p = got[1].detach().cpu()
    if p.dtype not in (torch.float32, torch.float64) or p.dtype != query.dtype:
        return None
    scores = query.double() @ key.double().transpose(-2, -1)
    if p.shape != scores.shape:
        return None
    smallest = 1e-3 if p.dtype == torch.float32 else 1e-9  # log-ratios p's precision can tell
    p = p.double()
    looked = (attend_where(case) & (p > 1e-30)).reshape(-1, scores.shape[-1])
    logp, s = p.log().reshape(looked.shape), scores.reshape(looked.shape)
    estimates: list[float] = []
    for row in range(looked.shape[0]):
        keys = looked[row].nonzero().flatten()
        if len(keys) < 2:
            continue
        top = keys[s[row, keys].argmax()]
        ds, dl = s[row, keys] - s[row, top], logp[row, keys] - logp[row, top]
        differ = ds.abs() > 1e-6 * (1 + s[row, keys].abs().max())
        if bool((differ & (dl == 0)).any()):
            return None  # different scores, equal weights: no softmax of a scaled score
        told = differ & (dl.abs() > smallest)
        estimates += (ds[told] / dl[told]).tolist()
    if not estimates or min(estimates) <= 0:
        return None
    low, high = min(estimates), max(estimates)
    return (low + high) / 2 if high <= low * (1 + 1e-3) else None


def spec_weights(case, dtype: torch.dtype) -> torch.Tensor:
    """p_attn as the spec computes it on ``case``, in ``dtype``."""
    query, key, _, _ = case
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    return scores.masked_fill(~attend_where(case), -1e9).softmax(-1).to(dtype)


@contextmanager
def scale_named(got: Any, case, on: str = "") -> Iterator[None]:
    """The block compares the answer ``got`` on ``case``; when it fails and p_attn is
    softmax of the scores divided by another number than sqrt(d_k) (measured:
    ``implied_divisor``), the failure is that comparison of p_attn, which says so."""
    try:
        yield
    except AssertionError:
        divisor = implied_divisor(got, case)
        d_k = case[0].size(-1)
        if divisor is not None and not math.isclose(divisor, math.sqrt(d_k), rel_tol=1e-3):
            said = SCALE_FINDINGS[on].format(divisor=f"{divisor:.4g}", root=f"{math.sqrt(d_k):.4g}", d_k=d_k)
            assert_same(got[1], spec_weights(case, got[1].dtype), what=said)
        raise


# ------------------------------------------------------------------ attention

# The spec's examples: two queries and keys of width 2, without and with a mask.
SPEC_QKV = (torch.tensor([[1.0, 0.0], [0.0, 2.0]]), torch.tensor([[2.0, 0.0], [0.0, 2.0]]),
            torch.tensor([[10.0, 0.0], [0.0, 10.0]]))


@pytest.mark.weight(4)
@example((*SPEC_QKV, None))
@example((*SPEC_QKV, torch.tensor([[True, False], [True, True]])))
@given(attention_cases())
def test_matches_reference(impl, ref, case):
    expected = ref.attention(*case)
    got = impl.attention(*clones(case))
    with scale_named(got, case):
        assert_same(got, expected, what="(output, p_attn)")


@pytest.mark.weight(3)
@settings(max_examples=70)
@given(attention_cases(), st.data())
def test_matches_scaled_dot_product_attention(impl, case, data):
    """query, key and value in any memory layout (a transposed key, strided views of a
    NaN-filled storage), and the mask also as a stride-0 expanded view."""
    query, key, value, mask = case
    laid = (data.draw(any_layout(query, label="query")), data.draw(any_layout(key, label="key")),
            data.draw(any_layout(value, label="value")),
            None if mask is None else data.draw(any_layout(
                mask, kinds=(*VALUE_LAYOUTS, "expanded"), label="mask")))
    case = (query, key, value, laid[3])  # an expanded mask repeats its first slice
    attend = attend_where(case)
    expected = sdpa_output(case)
    got = impl.attention(*laid)
    out, p = output_and_weights(got, case)
    rows = attend.any(-1)  # torch leaves fully masked rows undefined; the spec does not
    with scale_named(got, case):
        assert_same(out[rows], expected[rows],
                    what="output (rows with a key to attend) vs F.scaled_dot_product_attention, "
                         "with the inputs in the memory layouts drawn")


@pytest.mark.weight(2)
@settings(max_examples=25)
@given(attention_cases(), st.sampled_from([30.0, 100.0]))
def test_large_scores_stay_finite(impl, case, scale):
    """query and key up to a few hundred: scores in the tens of thousands. exp(score)
    overflows to inf (inf / inf = nan); softmax subtracts the row's max and does not.
    Anchored on the same input unscaled, so a failure is this property's own only where
    that is right; the advice only where the output holds inf or nan."""
    query, key, value, mask = case
    unscaled, case = case, (query * scale, key * scale, value, mask)
    expected = sdpa_output(case)
    with harder_than(lambda: impl.attention(*clones(unscaled)), lambda: sdpa_output(unscaled),
                     compare=output_like_sdpa(unscaled, " on the same input unscaled"),
                     what="output on the same input unscaled vs F.scaled_dot_product_attention"):
        out, _ = output_and_weights(impl.attention(*clones(case)), case)
        rows = attend_where(case).any(-1)
        advice = ": it holds inf or nan: use softmax, not exp / exp.sum()" if overflowed(out[rows], expected[rows]) else ""
        assert_same(out[rows], expected[rows],
                    what=f"output with query and key scaled by {scale:g} (large scores) vs "
                         f"F.scaled_dot_product_attention{advice}")


@pytest.mark.weight(2)
@settings(max_examples=20)
@given(attention_cases(low=-2.0, high=2.0), st.sampled_from([torch.bfloat16, torch.float16]))
def test_reduced_precision_on_cpu(impl, case, dtype):
    """bfloat16 (with or without a mask) and float16 (without: -1e9 overflows it) on the CPU:
    output and p_attn keep the inputs' dtype, the output is close to float64 of the same
    rounded values. Anchored on those values in float64: a failure is this property's own
    only where the answer is right there."""
    low = [t.to(dtype) for t in case[:3]]
    mask = None if dtype == torch.float16 else case[3]
    exact = (*(t.double() for t in low), mask)
    with harder_than(lambda: impl.attention(*clones(exact)), lambda: sdpa_output(exact),
                     compare=output_like_sdpa(exact, " on the same values in float64"),
                     what="output on the same values in float64 vs F.scaled_dot_product_attention"):
        out, p = output_and_weights(impl.attention(*(t.clone() for t in low), mask), exact)
        for name, t in (("output", out), ("p_attn", p)):
            assert t.dtype == dtype, f"{name} is {t.dtype}; expected {dtype}, like the inputs"
        rows = attend_where(exact).any(-1)
        assert_same(out.double()[rows], sdpa_output(exact)[rows], **CPU_TOLERANCE[dtype],
                    what=f"output in {dtype} on the CPU vs float64 of the same values")


@pytest.mark.weight(2)
@settings(max_examples=60)  # each example also checks an ordinary input against the oracle
@given(attention_cases(), ordinary_attention_cases())
def test_rows_of_p_attn_sum_to_one(impl, case, ordinary):
    with on_ordinary_input(impl, ordinary):
        _, p = output_and_weights(impl.attention(*clones(case)), case)
        assert_same(p.sum(-1), torch.ones(p.shape[:-1], dtype=p.dtype),
                    what="p_attn.sum(-1) (softmax over the keys, the last dim)")


@pytest.mark.weight(2)
@settings(max_examples=60)  # each example also checks an ordinary input against the oracle
@given(attention_cases(mask="always"), ordinary_attention_cases())
def test_masked_weights_are_zero(impl, case, ordinary):
    attend = attend_where(case)
    blocked = ~attend & attend.any(-1, keepdim=True)
    with on_ordinary_input(impl, ordinary):
        _, p = output_and_weights(impl.attention(*clones(case)), case)
        assert_same(p[blocked], torch.zeros(int(blocked.sum()), dtype=p.dtype),
                    what="p_attn where mask == 0 (in rows that have a key to attend)")


@settings(max_examples=50)
@given(attention_cases(mask="never"), ordinary_attention_cases(), st.data())
def test_fully_masked_rows_attend_uniformly(impl, case, ordinary, data):
    query, key, value, _ = case
    l_q, l_k = query.shape[-2], key.shape[-2]
    open_rows = data.draw(int_tensors((*query.shape[:-2], l_q, 1), 0, 1), label="row mask").bool()
    open_rows[..., 0, :] = False  # at least one fully masked row
    with on_ordinary_input(impl, ordinary):
        out, p = output_and_weights(impl.attention(query.clone(), key.clone(), value.clone(),
                                                   open_rows.clone()), case)
        closed = ~open_rows.squeeze(-1)
        assert_same(p[closed], torch.full((int(closed.sum()), l_k), 1 / l_k, dtype=p.dtype),
                    what="p_attn of fully masked rows (every score -1e9, so uniform weights 1/L_k)")
        uniform = value.mean(-2, keepdim=True).expand(out.shape)
        assert_same(out[closed], uniform[closed],
                    what="output of fully masked rows (the mean of the values)")


@pytest.mark.weight(3)
@settings(max_examples=50)
@given(attention_cases())
def test_gradients_match_reference(impl, ref, case):
    query, key, value, mask = case

    def grads(fn, student: bool):
        leaves = [t.clone().requires_grad_() for t in (query, key, value)]
        got = fn(*leaves, None if mask is None else mask.clone())
        out, p = output_and_weights(got, case) if student else got
        manual_seed(1)
        loss = (out * random_weights(out)).sum() + (p * random_weights(p)).sum()
        if not loss.requires_grad:
            raise AssertionError("the outputs are detached from query, key and value: "
                                 "backward cannot reach them (no .detach() or no_grad)")
        found = torch.autograd.grad(loss, leaves, allow_unused=True)
        for name, g in zip(("query", "key", "value"), found):
            if g is None:
                raise AssertionError(f"no gradient reaches {name}: keep it in the graph")
        return found

    expected = grads(ref.attention, student=False)
    got = grads(impl.attention, student=True)
    for name, g, e in zip(("query", "key", "value"), got, expected):
        assert_same(g, e, what=f"gradient of a weighted sum of (output, p_attn) w.r.t. {name}")


@pytest.mark.cuda
@pytest.mark.weight(2)
@settings(max_examples=25)
@given(attention_cases(low=-2.0, high=2.0), st.sampled_from([torch.float32, torch.bfloat16]))
def test_low_precision_on_gpu(impl, ref, case, dtype):
    low = [t.to(dtype) for t in case[:3]]  # round first: the reference sees the same inputs
    mask = case[3]
    expected = ref.attention(*(t.double() for t in low), mask)
    got = impl.attention(*(t.cuda() for t in low), None if mask is None else mask.cuda())
    for name, g, e in zip(("output", "p_attn"), output_and_weights(got, case), expected):
        assert g.dtype == dtype and g.device.type == "cuda", (
            f"{name} is {g.dtype} on {g.device}; expected {dtype} on the GPU, like the inputs")
        assert_same(g.double().cpu(), e, what=f"{name} in {dtype} on the GPU vs float64 on the CPU",
                    **GPU_TOLERANCE[dtype])


# ------------------------------------------------------------------ masks

@pytest.mark.weight(2)
@example(3)  # the spec's example
@given(st.integers(0, 8))
def test_subsequent_mask(impl, size):
    expected = (torch.nn.Transformer.generate_square_subsequent_mask(size) == 0).unsqueeze(0)
    assert_same(impl.subsequent_mask(size), expected,
                what=f"subsequent_mask({size}) (bool, True where key j <= query i)")


@st.composite
def lengths_and_max(draw) -> tuple[torch.Tensor, int]:
    max_len = draw(st.integers(0, wide(6, official=12)))
    batch = draw(st.integers(0, wide(5)))
    dtype = draw(st.sampled_from([torch.int64, torch.int32]))
    return draw(int_tensors((batch,), 0, max_len, dtype=dtype)), max_len


@pytest.mark.weight(2)
@settings(max_examples=50)  # a small space: max_len <= 6, B <= 5
@example((torch.tensor([2, 0, 3]), 3))  # the spec's example
@given(lengths_and_max())
def test_padding_mask(impl, ref, case):
    lengths, max_len = case
    expected = ref.padding_mask(lengths, max_len)
    assert_same(impl.padding_mask(lengths.clone(), max_len), expected,
                what=f"padding_mask({lengths.tolist()}, {max_len}) (bool, True on real tokens)")


def check_prefix_rows(got: Any, lengths: torch.Tensor, max_len: int) -> None:
    """A (B, 1, max_len) bool mask whose row b holds lengths[b] Trues, all before any False:
    that is the padding mask, and nothing else is."""
    call = f"padding_mask({lengths.tolist()}, {max_len})"
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bool, (
        f"{call} should return a bool tensor, got {getattr(got, 'dtype', type(got).__name__)}")
    assert got.shape == (len(lengths), 1, max_len), (
        f"{call} has shape {tuple(got.shape)}, expected {(len(lengths), 1, max_len)}")
    rows = got[:, 0, :].long()
    assert_same(rows.sum(-1), lengths.long(), what=f"{call}: Trues per row (the real tokens)")
    assert bool((rows[:, 1:] <= rows[:, :-1]).all()), (
        f"{call}: a True follows a False; real tokens come first, then padding")


@given(lengths_and_max())
def test_padding_mask_rows_are_a_prefix_of_their_length(impl, case):
    """Public (no reference needed): row b holds lengths[b] Trues, all before any False."""
    lengths, max_len = case
    check_prefix_rows(impl.padding_mask(lengths.clone(), max_len), lengths, max_len)


@given(lengths_and_max(), st.sampled_from(["negative", "too long"]), st.integers(1, 3), st.data())
def test_padding_mask_raises_value_error(impl, case, how, excess, data):
    lengths, max_len = case
    # The ordinary input beside it: these lengths plus an empty and a full row.
    max_len = max(max_len, 1)
    ordinary = torch.cat([lengths.clamp(0, max_len), torch.tensor([0, max_len], dtype=lengths.dtype)])
    if lengths.numel() == 0:
        lengths = torch.zeros(1, dtype=lengths.dtype)
    where = data.draw(st.integers(0, lengths.numel() - 1), label="position")
    lengths[where] = -excess if how == "negative" else max_len + excess
    with anchored(lambda: impl.padding_mask(ordinary.clone(), max_len), lambda: None,
                  compare=lambda got, _, what: check_prefix_rows(got, ordinary, max_len),
                  what=f"padding_mask({ordinary.tolist()}, {max_len}) beside the error case"):
        with expect_raises(ValueError, when=f"a length is {how} ({int(lengths[where])}, "
                                            f"max_len {max_len})"):
            impl.padding_mask(lengths, max_len)
