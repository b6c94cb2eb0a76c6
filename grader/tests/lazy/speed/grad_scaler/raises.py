"""Do-nothing: raises ValueError on every call."""


def unscale_grads(grads, scale):
    raise ValueError("no")


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    raise ValueError("no")


def scaled_step(model, optimizer, inputs, targets, scale, growth_tracker, max_norm=None,
                growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    raise ValueError("no")
