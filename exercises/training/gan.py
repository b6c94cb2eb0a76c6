"""One training step of a GAN: the discriminator's update, then the generator's.

A generator G turns noise into fake samples; a discriminator D scores samples
with a logit (large = "real"). Each step first teaches D to tell real from fake,
then teaches G to fool the freshly updated D.
"""

import torch
import torch.nn.functional as F
from torch import nn


def gan_step(generator: nn.Module, discriminator: nn.Module,
             opt_g: torch.optim.Optimizer, opt_d: torch.optim.Optimizer,
             real: torch.Tensor, noise: torch.Tensor) -> tuple[float, float]:
    """Run one GAN step and return ``(loss_d, loss_g)`` as Python floats.

    Shapes:
        - ``real``: ``(N, data_dim)``, a batch of real samples.
        - ``noise``: ``(M, noise_dim)``; ``generator(noise)`` is ``(M, data_dim)``.
          M may differ from N.
        - ``discriminator(x)`` returns logits of shape ``(len(x), 1)``, not
          probabilities.
        - ``opt_g`` updates only the generator's parameters, ``opt_d`` only the
          discriminator's.

    Spec, in this order (``bce`` = ``F.binary_cross_entropy_with_logits``, mean
    reduction; build the targets with ``torch.ones_like`` / ``torch.zeros_like``
    of the logits so they have the logits' shape and dtype):
        1. ``fake = generator(noise)``.
        2. Discriminator step: ``opt_d.zero_grad()``;
           ``loss_d = bce(D(real), 1) + bce(D(fake.detach()), 0)`` (the sum of
           the two means); ``loss_d.backward()``; ``opt_d.step()``.
        3. Generator step: ``opt_g.zero_grad()``;
           ``loss_g = bce(D(fake), 1)``, scored by the discriminator as it is
           *after* step 2; ``loss_g.backward()``; ``opt_g.step()``.
        4. Return ``(loss_d.item(), loss_g.item())``: a tuple of two floats.

    Example:
        >>> G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
        >>> D = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
        >>> _ = nn.init.zeros_(D[2].weight), nn.init.zeros_(D[2].bias)
        >>> opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
        >>> opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        >>> loss_d, loss_g = gan_step(G, D, opt_g, opt_d, torch.randn(16, 3), torch.randn(4, 2))
        >>> type(loss_d), round(loss_d, 4)  # D said "50/50" to every sample: 2 * ln 2
        (<class 'float'>, 1.3863)

    Why each detail matters (the usual mistakes):
        - ``fake.detach()`` in the D step: the D loss must not reach the
          generator. Without it, ``loss_d.backward()`` runs back through G, frees
          G's graph (the G step then fails with "backward through the graph a
          second time") or, with ``retain_graph=True``, leaves D-loss gradients
          in G's ``.grad``.
        - ``zero_grad()`` first, for both optimizers: ``backward()`` *adds* to
          ``.grad``. The G step's backward also leaves gradients in D's
          parameters, so a missing ``opt_d.zero_grad()`` leaks them into the
          next D step.
        - The G loss uses target **1** (real) on fake samples: the
          non-saturating loss. Maximising log D(G(z)) gives G strong gradients
          while D still rejects its samples easily; target 0 would train G to
          look *more* fake.
        - The G loss uses D *after* its update: compute ``D(fake)`` for it after
          ``opt_d.step()``, not before.
        - Step only ``opt_g`` in the G step: D's parameters hold G-loss
          gradients at that point, and ``opt_d.step()`` would apply them.
        - Return ``.item()`` floats, not tensors (a tensor keeps its graph alive).
        - Leave ``real`` and ``noise`` unchanged.

    Allowed: ``F.binary_cross_entropy_with_logits`` (or ``nn.BCEWithLogitsLoss``).
    Forbidden: ``F.binary_cross_entropy`` / ``nn.BCELoss`` on ``sigmoid(logits)``;
    it loses precision where the sigmoid saturates. Work on the logits: a formula by
    hand on probabilities, ``-(t * log(sigmoid(l)) + (1 - t) * log(1 - sigmoid(l)))``,
    has the same flaw (past a logit of ~37, ``sigmoid`` is exactly 1.0 in float64 and
    ``log(1 - 1)`` is ``-inf``); the grader tries a discriminator that confident.
    """
    raise NotImplementedError
