"""Numeric helpers the drills' tests share: full float32 precision on a GPU, float32
on a device against a float64 CPU oracle, random output weights that ignore memory
layout, and per-parameter gradient checks."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from grader.testing import assert_same

# torch.manual_seed also queues a seed for every lazily initialised device (CUDA,
# XPU, MTIA), formatting a Python stack trace for each: dear for a call, and the
# tests seed hundreds of times a grading. Without CUDA, seeding the CPU generator alone
# leaves exactly the same CPU random state.
_SEED_EVERY_DEVICE = torch.cuda.is_available()


def manual_seed(seed: int) -> None:
    """``torch.manual_seed(seed)``, without the per-device cost where only the CPU draws."""
    if _SEED_EVERY_DEVICE:
        torch.manual_seed(seed)
    else:
        torch.random.default_generator.manual_seed(seed)


@contextmanager
def full_float32() -> Iterator[None]:
    """No TF32 while the block runs, in matmuls and in cuDNN convolutions.

    On Ampere and later GPUs float32 matmuls and convolutions may round their inputs
    to TF32 (~1e-3 relative error), which would fail a correct answer against a
    float64 oracle at float32 tolerances.
    """
    previous = torch.backends.cudnn.allow_tf32, torch.get_float32_matmul_precision()
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = previous[0]
        torch.set_float32_matmul_precision(previous[1])


def float32_on_device_and_float64_oracle(
        device: str, fn: Callable[..., object], oracle: Callable[..., torch.Tensor],
        tensors: Sequence[torch.Tensor | None], kwargs: dict[str, object],
) -> tuple[object, torch.Tensor]:
    """``(fn on float32 copies on device, oracle in float64 on the CPU)`` from the same
    float32-rounded values (None stays None), with TF32 off while ``fn`` runs."""
    rounded = [None if t is None else t.float() for t in tensors]
    expected = oracle(*(None if t is None else t.double() for t in rounded), **kwargs)
    with full_float32():
        got = fn(*(None if t is None else t.to(device) for t in rounded), **kwargs)
    return got, expected


def random_weights(out: torch.Tensor) -> torch.Tensor:
    """Random weights of ``out``'s shape for ``(out * w).sum()`` in a gradient check.

    Not ``torch.randn_like``: it follows ``out``'s strides, so a correct answer laid
    out differently in memory (an einsum result, a transposed view) would be weighted
    with other numbers than the oracle's output and fail. Drawn in float64 on the CPU,
    then cast: an answer in another dtype or on another device meets the same weights
    (drawn in its own dtype they were other numbers, and a float32 answer to a float64
    question showed as a gradient 19 times off instead of a wrong dtype).
    """
    return torch.randn(out.shape, dtype=torch.float64).to(dtype=out.dtype, device=out.device)


def weighted_grads(fn: Callable[..., Any], leaves: list[torch.Tensor | None], names: str = "its inputs",
                   **kwargs: Any) -> tuple[torch.Tensor | None, ...]:
    """Gradients w.r.t. the non-None ``leaves`` of a random weighted sum of ``fn(*leaves, **kwargs)``
    (the weights seeded, so the student's function and the oracle get the same ones). ``names``:
    the inputs, for the message when the output is not connected to them."""
    out = fn(*leaves, **kwargs)
    if not isinstance(out, torch.Tensor):
        raise AssertionError(f"the function returned {type(out).__name__}, not a tensor")
    if not out.requires_grad:
        raise AssertionError(f"the output is not connected to {names}: backward cannot reach "
                             "them (no .item(), torch.tensor(...) or .detach())")
    dtypes = {t.dtype for t in leaves if t is not None and t.is_floating_point()}
    if len(dtypes) == 1 and out.dtype not in dtypes:
        raise AssertionError(f"the output's dtype is {out.dtype}, the inputs' {dtypes.pop()}: compute "
                             "in the inputs' dtype (the gradients are compared only then)")
    manual_seed(1)
    inputs = [t for t in leaves if t is not None]
    return torch.autograd.grad((out * random_weights(out)).sum(), inputs, allow_unused=True)


def grads_of(model: nn.Module) -> list[torch.Tensor | None]:
    return [p.grad for p in model.parameters()]


def assert_same_grads(got: object, expected: list[torch.Tensor | None], names: Sequence[str],
                      where: str) -> None:
    """A list with one gradient (or None for a frozen parameter) per parameter, each
    compared under its parameter's name."""
    assert type(got) is list and len(got) == len(expected), (
        f"{where}: expected a list of {len(expected)} gradients (one per parameter, None for "
        f"a frozen one), got {type(got).__name__} {got!r}")
    for name, g, e in zip(names, got, expected):
        if e is None:
            assert g is None, (f"{where}: {name} is frozen (requires_grad=False), so its "
                               f"gradient must stay None; got {type(g).__name__}")
            continue
        assert_same(g, e, what=f"{where}: gradient of {name}")


def overflowed(got: Any, expected: Any) -> bool:
    """Whether the answer ``got`` holds inf or nan where ``expected`` is finite: what an
    overflow (exp of a large number, inf / inf) or a blend (0 * inf) leaves. Advice about
    those mistakes goes in a message only when this holds: the answer shows the mistake."""
    if not (type(got) is torch.Tensor and isinstance(expected, torch.Tensor) and got.shape == expected.shape
            and (got.is_floating_point() or got.is_complex())):
        return False
    return bool((~torch.isfinite(got.detach().cpu()) & torch.isfinite(expected.detach().cpu())).any())
