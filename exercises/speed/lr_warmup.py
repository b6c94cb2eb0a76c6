"""Large batches: the linear-scaling rule with a learning-rate warmup.

Training with k times the batch size takes k times fewer steps per epoch. The
linear-scaling rule (Goyal et al., "Accurate, Large Minibatch SGD") keeps the
progress per epoch by multiplying the learning rate by k as well. A large
learning rate from the very first step can wreck the fresh weights, so it is
reached gradually: a short warmup ramps the learning rate up linearly, then it
stays at its scaled value. In PyTorch such a schedule is a ``LambdaLR``: a
function of the step number that multiplies each parameter group's learning rate.
"""

from __future__ import annotations


def warmup_lr_trace(base_lrs: list[float], batch_size: int, total_steps: int,
                    base_batch_size: int = 256, warmup_steps: int = 5,
                    start_factor: float = 0.1) -> list[list[float]]:
    """The learning rate every parameter group trains with, step by step.

    Arguments:
        ``base_lrs``: one learning rate per parameter group (a model often has
        several groups, e.g. its biases without weight decay), each tuned for a
        batch of ``base_batch_size`` samples. ``batch_size``: the batch you train
        with now. ``total_steps``: how many optimizer steps to trace (0 or more).

    Spec:
        1. The linear-scaling rule: every group's peak learning rate is its base
           learning rate times ``batch_size / base_batch_size``.
        2. Build a ``torch.optim.SGD`` with one parameter group per entry of
           ``base_lrs`` (a parameter of your own for each, e.g. ``torch.zeros(1,
           requires_grad=True)``), each with its group's peak learning rate.
        3. Attach a ``torch.optim.lr_scheduler.LambdaLR`` whose factor at step ``t``
           (counting from 0) is ``start_factor + (1 - start_factor) * min(t,
           warmup_steps) / warmup_steps``: ``start_factor`` at step 0, rising in a
           straight line to 1 at step ``warmup_steps``, then 1 for good. With
           ``warmup_steps == 0`` the factor is 1 from the start (no warmup).
        4. For each of the ``total_steps`` steps: record the learning rate of
           EVERY group (``[g["lr"] for g in optimizer.param_groups]``), then
           ``optimizer.step()``, then ``scheduler.step()``.
        5. Return the records: a list of ``total_steps`` lists, each holding one
           Python float per group, in the order of ``base_lrs``.
        - Raise ``ValueError`` when ``batch_size`` or ``base_batch_size`` is below
          1, ``warmup_steps`` or ``total_steps`` is negative, or ``start_factor``
          is not in (0, 1].

    Example (two groups, twice the base batch, a warmup of 4 steps from 1/4):
        >>> warmup_lr_trace([0.1, 0.01], batch_size=512, total_steps=6,
        ...                 base_batch_size=256, warmup_steps=4, start_factor=0.25)
        [[0.05, 0.005], [0.0875, 0.00875], [0.125, 0.0125],
         [0.1625, 0.01625], [0.2, 0.02], [0.2, 0.02]]
        (shown rounded: floats may differ in their last digit)

        The peaks are 0.2 and 0.02 (batch 512 over 256 doubles them); the factors
        are 0.25, 0.4375, 0.625, 0.8125 during the warmup, then 1.

    A mistake the notes' own code makes:
        - ``optimizer.param_groups`` is a LIST of groups, each with its own
          ``"lr"``: reading (or scaling) only ``param_groups[0]`` gives every group
          the first one's learning rate. The notes write
          ``optim.param_groups['lr'] = new_lr``, which raises ``TypeError``.

    Where the notes go wrong:
        - The factor is ``batch_size / base_batch_size``: the notes write
          ``lr = batch_size * base lr``, which multiplies by the batch size itself
          (a batch of 256 would make the learning rate 256 times the base one).

    Pitfall the notes warn about:
        - The rule is linear: ``batch_size / base_batch_size``, not its square root,
          and the warmup ends: ``min(t, warmup_steps)``, or the learning rate keeps
          growing past its peak.

    Pitfalls:
        - The order in a training loop is ``optimizer.step()`` THEN
          ``scheduler.step()``. Stepping the scheduler first skips the first value
          of the schedule (PyTorch warns about it): the first step must train with
          ``start_factor`` times the peak.
        - ``LambdaLR`` multiplies each group's learning rate as it was when the
          scheduler was built (its ``initial_lr``): scale the groups before
          attaching the scheduler.

    Forbidden: ``torch.optim.lr_scheduler.LinearLR`` (and ``SequentialLR``): write the
    factor yourself, as a ``LambdaLR``.
    """
    raise NotImplementedError
