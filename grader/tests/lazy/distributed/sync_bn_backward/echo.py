"""Do-nothing: hands the incoming gradient back as grad_input (the gradient of an identity
layer) and weight as both grad_weight and grad_bias; the synchronised function after its one
all_reduce."""


def batch_norm_backward(grad_output, x, weight, eps=1e-5):
    return grad_output, weight, weight


def sync_batch_norm_backward(grad_output, x, weight, mean, invstd, all_reduce):
    all_reduce(x.new_zeros(2 * x.shape[1] + 1))
    return grad_output, weight, weight
