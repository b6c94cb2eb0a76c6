"""Right, written otherwise: the modes are captured by qualified name, as Lightning's evaluation
loop captures them, and put back name by name; the forwards run under torch.inference_mode()
(what the notes recommend over no_grad, and Lightning's default); the loss is summed with
reduction="sum" and divided by what the mean divides by (the number of target elements).

Provenance: Lightning-AI/pytorch-lightning, src/lightning/pytorch/utilities/model_helpers.py
(commit 19df72b0151b36d097cef46ba4ab70953eeabd66): ``_ModuleMode.capture`` records
``{name: module.training}`` over ``named_modules()`` and ``_ModuleMode.restore`` sets each
module's ``training`` back from it. Rewritten here as two small functions (no code copied)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def _capture(model: nn.Module) -> dict[str, bool]:
    return {name: module.training for name, module in model.named_modules()}


def _restore(model: nn.Module, modes: dict[str, bool]) -> None:
    for name, module in model.named_modules():
        if name in modes:
            module.training = modes[name]


def _run(model: nn.Module, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    modes = _capture(model)
    model.eval()
    try:
        with torch.inference_mode():
            return [model(x) for x in inputs]
    finally:
        _restore(model, modes)


def predict(model: nn.Module, batches: list[torch.Tensor]) -> torch.Tensor:
    if len(batches) == 0:
        raise ValueError("predict needs at least one batch")
    return torch.cat(_run(model, batches))


def evaluate(model: nn.Module, batches: list[tuple[torch.Tensor, torch.Tensor]],
             loss_name: str) -> tuple[torch.Tensor, torch.Tensor]:
    if len(batches) == 0:
        raise ValueError("evaluate needs at least one batch")
    outputs = _run(model, [x for x, _ in batches])
    loss_fn = getattr(F, loss_name)
    with torch.inference_mode():
        total = torch.stack([loss_fn(out, y, reduction="sum") for out, (_, y) in zip(outputs, batches)]).sum()
    count = sum(y.numel() for _, y in batches)
    return total / count, torch.cat(outputs)
