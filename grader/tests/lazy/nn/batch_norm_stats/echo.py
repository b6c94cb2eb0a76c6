"""Do-nothing: returns x as it came, from both functions."""


def batch_norm_train(x, running_mean, running_var, num_batches_tracked, weight=None, bias=None,
                     momentum=0.1, eps=1e-5):
    return x


def batch_norm_eval(x, running_mean, running_var, weight=None, bias=None, eps=1e-5):
    return x
