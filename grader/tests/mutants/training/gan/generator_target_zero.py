"""Mistake: the G loss uses target 0 on fake samples (copying the D loss's fake term),
which trains G to look *more* fake instead of using the non-saturating target 1."""

import torch
import torch.nn.functional as F
from torch import nn


def _bce(logits: torch.Tensor, target: float) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


CAUGHT_BY = ("test_losses_match_reference", "test_generator_params_match_reference")


def gan_step(generator, discriminator, opt_g, opt_d, real, noise):
    fake = generator(noise)
    opt_d.zero_grad()
    loss_d = _bce(discriminator(real), 1.0) + _bce(discriminator(fake.detach()), 0.0)
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = _bce(discriminator(fake), 0.0)
    loss_g.backward()
    opt_g.step()
    return loss_d.item(), loss_g.item()
