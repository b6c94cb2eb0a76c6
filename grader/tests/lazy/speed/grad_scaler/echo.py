"""Do-nothing: hands the state back as it came (the gradients still scaled, the scale and
tracker unchanged, the step neither taken nor skipped but reported taken)."""


def unscale_grads(grads, scale):
    return [None if g is None else g.clone() for g in grads], False


def update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000):
    return float(scale), int(growth_tracker)


def scaled_step(model, optimizer, inputs, targets, scale, growth_tracker, max_norm=None,
                growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
    return float(scale), int(growth_tracker), True
