"""Do-nothing: every call raises ValueError, the synchronised one after its one all_reduce (so
no rank is left waiting)."""


def batch_norm_backward(grad_output, x, weight, eps=1e-5):
    raise ValueError("no gradient")


def sync_batch_norm_backward(grad_output, x, weight, mean, invstd, all_reduce):
    all_reduce(x.new_zeros(2 * x.shape[1] + 1))
    raise ValueError("no gradient")
