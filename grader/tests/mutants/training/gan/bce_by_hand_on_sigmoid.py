"""Mistake: writes the binary cross-entropy by hand on probabilities,
-(t * log(sigmoid(l)) + (1 - t) * log(1 - sigmoid(l))), which dodges the forbidden
F.binary_cross_entropy but not its flaw: once a logit passes ~37, sigmoid(l) is exactly 1.0 in
float64, log(1 - 1) = -inf and loss_d is inf (and its gradient nan). Work on the logits."""

import torch
from torch import nn

CAUGHT_BY = ("test_saturated_discriminator_stays_finite",)


def _bce(logits: torch.Tensor, target: float) -> torch.Tensor:
    p = torch.sigmoid(logits)
    return -(target * torch.log(p) + (1 - target) * torch.log(1 - p)).mean()


def gan_step(generator: nn.Module, discriminator: nn.Module,
             opt_g: torch.optim.Optimizer, opt_d: torch.optim.Optimizer,
             real: torch.Tensor, noise: torch.Tensor) -> tuple[float, float]:
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
