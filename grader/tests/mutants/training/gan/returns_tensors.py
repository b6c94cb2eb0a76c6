"""Mistake: returns the loss tensors (detached) instead of Python floats via .item()."""

import torch
import torch.nn.functional as F
from torch import nn


def _bce(logits: torch.Tensor, target: float) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


CAUGHT_BY = ("test_returns_python_floats",)


def gan_step(generator, discriminator, opt_g, opt_d, real, noise):
    fake = generator(noise)
    opt_d.zero_grad()
    loss_d = _bce(discriminator(real), 1.0) + _bce(discriminator(fake.detach()), 0.0)
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = _bce(discriminator(fake), 1.0)
    loss_g.backward()
    opt_g.step()
    return loss_d.detach(), loss_g.detach()
