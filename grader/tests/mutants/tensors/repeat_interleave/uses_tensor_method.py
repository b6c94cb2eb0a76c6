"""Mistake: calls the forbidden Tensor.repeat_interleave method."""

CAUGHT_BY = ("test_int_repeats_match_torch", "test_tensor_repeats_match_torch")


def repeat_interleave(x, repeats, dim=None):
    try:
        return x.repeat_interleave(repeats, dim=dim)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from None
