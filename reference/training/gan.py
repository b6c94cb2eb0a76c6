"""Reference solution: one GAN training step (D update, then G update)."""

import torch
import torch.nn.functional as F
from torch import nn


def _bce(logits: torch.Tensor, target: float) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


def gan_step(generator: nn.Module, discriminator: nn.Module,
             opt_g: torch.optim.Optimizer, opt_d: torch.optim.Optimizer,
             real: torch.Tensor, noise: torch.Tensor) -> tuple[float, float]:
    """D step on real vs detached fake, then a non-saturating G step against the new D."""
    fake = generator(noise)

    opt_d.zero_grad()
    loss_d = _bce(discriminator(real), 1.0) + _bce(discriminator(fake.detach()), 0.0)
    loss_d.backward()
    opt_d.step()

    opt_g.zero_grad()
    loss_g = _bce(discriminator(fake), 1.0)
    loss_g.backward()
    opt_g.step()

    return loss_d.item(), loss_g.item()
