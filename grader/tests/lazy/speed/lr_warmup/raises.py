"""Do-nothing: raises the spec's ValueError on every call."""


def warmup_lr_trace(base_lrs, batch_size, total_steps, base_batch_size=256, warmup_steps=5,
                    start_factor=0.1):
    raise ValueError("no")
