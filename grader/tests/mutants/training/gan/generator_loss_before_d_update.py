"""Mistake: the G loss (and its backward) is computed with D *before* D's update; G
follows gradients from a discriminator that no longer exists. D itself comes out
right, because opt_d.zero_grad() wipes the G loss's gradients from D first."""

import torch
import torch.nn.functional as F
from torch import nn


def _bce(logits: torch.Tensor, target: float) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


CAUGHT_BY = ("test_losses_match_reference", "test_generator_params_match_reference")


def gan_step(generator, discriminator, opt_g, opt_d, real, noise):
    fake = generator(noise)
    opt_g.zero_grad()
    loss_g = _bce(discriminator(fake), 1.0)
    loss_g.backward()
    opt_d.zero_grad()
    loss_d = _bce(discriminator(real), 1.0) + _bce(discriminator(fake.detach()), 0.0)
    loss_d.backward()
    opt_d.step()
    opt_g.step()
    return loss_d.item(), loss_g.item()
