"""Mistake: the G step calls opt_d.step() as well; D's .grad then holds the G
loss's gradients, so D is pushed towards calling fakes real (with momentum or Adam, a
second step moves D even where those gradients are zero)."""

import torch
import torch.nn.functional as F
from torch import nn


def _bce(logits: torch.Tensor, target: float) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, target))


CAUGHT_BY = ("test_generator_step_leaves_discriminator_alone", "test_each_optimizer_steps_exactly_once",
             "test_discriminator_params_match_reference")


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
    opt_d.step()
    return loss_d.item(), loss_g.item()
