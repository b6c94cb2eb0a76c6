"""Do-nothing with the spec's checks: validates the arguments, then the scaled peak at every
step (no warmup at all)."""


def warmup_lr_trace(base_lrs, batch_size, total_steps, base_batch_size=256, warmup_steps=5,
                    start_factor=0.1):
    if batch_size < 1 or base_batch_size < 1 or warmup_steps < 0 or total_steps < 0:
        raise ValueError("bad")
    if not 0 < start_factor <= 1:
        raise ValueError("bad")
    return [[lr * batch_size / base_batch_size for lr in base_lrs] for _ in range(total_steps)]
