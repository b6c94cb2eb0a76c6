"""Do-nothing: returns (0.0, 0.0) and touches nothing."""


def gan_step(generator, discriminator, opt_g, opt_d, real, noise):
    return 0.0, 0.0
