"""Right, written otherwise: the gradient through the variance (dvar) and through the mean (dmu)
kept apart, as the paper's chain rule writes them, with the mean's path carrying the term
dvar * mean(-2 (x - mu)) that is 0 on paper. The synchronised version reduces three sums in
its one all_reduce (of dx_hat, of dx_hat * (x - mean), of x - mean) and the count, and
returns grad_weight and grad_bias from the same reduced tensor.

Provenance: oilneck/prml_python, prml/deepL_module/nn/layers/hipstar_tech.py (commit
a84eb6fa22446518c843246bc37e3e6d5518683d), Batch_norm_Layer.backward: ``dvar = -0.5 *
sum(dX_norm * x_mu) * std_inv ** 3``, ``dmu = sum(dX_norm * -std_inv) + dvar *
mean(-2 * x_mu)``, ``dx = dX_norm * std_inv + 2 * dvar * x_mu / N + dmu / N``, in numpy for
(N, D) with eps 1e-8; rewritten here in torch for (N, C, *spatial) with the spec's eps
(no code copied).
"""

import torch


def _shape(x):
    return (1, x.shape[1]) + (1,) * (x.dim() - 2)


def _gradients(grad_output, x, weight, mean, std_inv, all_reduce):
    dims = tuple(d for d in range(x.dim()) if d != 1)
    c = x.shape[1]
    x_mu = x - mean.view(_shape(x))
    dx_norm = grad_output * weight.view(_shape(x))
    x_norm = x_mu * std_inv.view(_shape(x))
    sums = torch.cat([dx_norm.sum(dims), (dx_norm * x_mu).sum(dims), x_mu.sum(dims),
                      grad_output.sum(dims), (grad_output * x_norm).sum(dims),
                      torch.tensor([float(x.numel() // c)], dtype=x.dtype)])
    all_reduce(sums)
    s_dxn, s_dxn_xmu, s_xmu, dbeta, dgamma = sums[:-1].view(5, c)
    n = sums[-1]
    dvar = -0.5 * s_dxn_xmu * std_inv ** 3
    dmu = -std_inv * s_dxn + dvar * (-2.0 * s_xmu / n)
    dx = dx_norm * std_inv.view(_shape(x)) + (2.0 * dvar / n).view(_shape(x)) * x_mu + (dmu / n).view(_shape(x))
    return dx, dgamma.clone(), dbeta.clone()


def batch_norm_backward(grad_output, x, weight, eps=1e-5):
    dims = tuple(d for d in range(x.dim()) if d != 1)
    mean = x.mean(dims)
    var = ((x - mean.view(_shape(x))) ** 2).mean(dims)
    return _gradients(grad_output, x, weight, mean, 1.0 / torch.sqrt(var + eps), lambda t: None)


def sync_batch_norm_backward(grad_output, x, weight, mean, invstd, all_reduce):
    return _gradients(grad_output, x, weight, mean, invstd, all_reduce)
