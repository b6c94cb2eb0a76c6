"""Mistake: no fake.detach() in the D step. The learner hit "backward through the
graph a second time", added retain_graph=True and zeroed both optimizers up front,
so the D loss's gradients flow into G's .grad and G steps on them too."""

import torch
import torch.nn.functional as F
from torch import nn


def _bce(logits: torch.Tensor, target: float) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


CAUGHT_BY = ("test_generator_params_match_reference", "test_stale_grads_change_nothing")


def gan_step(generator, discriminator, opt_g, opt_d, real, noise):
    fake = generator(noise)
    opt_d.zero_grad()
    opt_g.zero_grad()
    loss_d = _bce(discriminator(real), 1.0) + _bce(discriminator(fake), 0.0)
    loss_d.backward(retain_graph=True)
    opt_d.step()
    loss_g = _bce(discriminator(fake), 1.0)
    loss_g.backward()
    opt_g.step()
    return loss_d.item(), loss_g.item()
