"""An independent correct cross_entropy, written from the stub's docstring alone (never
the reference): log_softmax over dim 1, gather, the spec's two terms each divided by W."""

import torch


def cross_entropy(logits, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    out_dtype = logits.dtype
    x = logits.float() if out_dtype in (torch.float16, torch.bfloat16) else logits
    C = x.size(1)
    eps = label_smoothing
    logp = torch.log_softmax(x, dim=1)
    w = torch.ones(C, dtype=x.dtype, device=x.device) if weight is None else weight.to(x.dtype)
    keep = target != ignore_index
    kept = target[keep]
    if kept.numel() > 0 and ((kept < 0).any() or (kept >= C).any()):
        raise IndexError(f"target out of range [0, {C})")
    y = torch.where(keep, target, torch.zeros_like(target))
    nll = -logp.gather(1, y.unsqueeze(1)).squeeze(1)
    w_y = torch.where(keep, w[y], torch.zeros_like(nll))
    picked = torch.where(keep, w_y * nll, torch.zeros_like(nll))
    w_c = w.view([1, C] + [1] * (x.dim() - 2))
    smooth = torch.where(keep, -(logp * w_c).sum(dim=1), torch.zeros_like(nll))
    if reduction == "none":
        loss = (1 - eps) * picked + eps / C * smooth
    elif reduction == "sum":
        loss = ((1 - eps) * picked + eps / C * smooth).sum()
    elif reduction == "mean":
        W = w_y.sum()
        loss = (1 - eps) * picked.sum() / W + eps / C * smooth.sum() / W
    else:
        raise ValueError(f"unknown reduction {reduction!r}")
    return loss.to(out_dtype)
