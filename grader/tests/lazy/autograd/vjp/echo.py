"""Do-nothing: hands the inputs back (x and v; x for the Jacobian)."""


def vjp(f, x, v):
    return x, v


def jacobian(f, x):
    return x
