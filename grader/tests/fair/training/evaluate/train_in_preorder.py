"""Right, written otherwise: the flags are put back with ``module.train(flag)``, which is
recursive, module by module in ``model.modules()`` order. That order visits a parent before its
children, so each child's own flag is set after its parent's call has overwritten it: the end
state is every module's own flag. (The reverse order would leave every child with its parent's
flag.) The loss is accumulated as Python floats, each batch's mean times its size, and handed
back as a 0-d tensor of the outputs' dtype."""

import torch
import torch.nn.functional as F


def _flags(model):
    return [m.training for m in model.modules()]


def _put_back(model, flags):
    for module, flag in zip(list(model.modules()), flags):
        module.train(flag)


def predict(model, batches):
    if not batches:
        raise ValueError("empty batches")
    flags = _flags(model)
    outputs = []
    model.train(False)
    try:
        for x in batches:
            with torch.no_grad():
                outputs.append(model(x))
    finally:
        _put_back(model, flags)
    return torch.cat(outputs, dim=0)


def evaluate(model, batches, loss_name):
    if not batches:
        raise ValueError("empty batches")
    flags = _flags(model)
    total, seen, outputs = 0.0, 0, []
    model.train(False)
    try:
        with torch.no_grad():
            for x, y in batches:
                out = model(x)
                total += getattr(F, loss_name)(out, y).item() * x.shape[0]
                seen += x.shape[0]
                outputs.append(out)
    finally:
        _put_back(model, flags)
    joined = torch.cat(outputs)
    return torch.tensor(total / seen, dtype=joined.dtype, device=joined.device), joined
