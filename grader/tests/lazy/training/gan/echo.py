"""Do-nothing: returns (real, noise), the inputs, as (loss_d, loss_g)."""


def gan_step(generator, discriminator, opt_g, opt_d, real, noise):
    return real, noise
