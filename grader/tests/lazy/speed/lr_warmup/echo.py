"""Do-nothing: the base learning rates, unscaled and never warmed up, at every step."""


def warmup_lr_trace(base_lrs, batch_size, total_steps, base_batch_size=256, warmup_steps=5,
                    start_factor=0.1):
    return [[float(lr) for lr in base_lrs] for _ in range(total_steps)]
