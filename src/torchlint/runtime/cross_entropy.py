"""Softmax cross-entropy that stays finite for any finite logits.

This is the stable formulation from the Effective PyTorch notes (``shared/seeds/002``, section 7): the
log-probabilities are ``logits - logsumexp(logits)``, never ``log(softmax(logits))``, so no probability
is formed, none underflows to 0, and no ``log(0)`` appears.  For logits ``[1000., 0.]`` and labels
``[.5, .5]`` the loss is 500 and its gradient ``[.5, -.5]``.

TL206's fix points here.  torch is imported by this module only; ``import torchlint`` does not need it.
"""
from __future__ import annotations

from typing import Optional

import torch

__all__ = ["softmax_cross_entropy"]

_REDUCTIONS = ("sum", "mean", "none")
_LOW_PRECISION = (torch.float16, torch.bfloat16)


def softmax_cross_entropy(
    labels: torch.Tensor,
    logits: torch.Tensor,
    dim: Optional[int] = -1,
    reduction: str = "sum",
) -> torch.Tensor:
    """Cross-entropy between ``labels`` (a distribution over ``dim``) and ``softmax(logits, dim)``.

    The loss at each position is ``-sum(labels * log_softmax(logits, dim), dim)``; ``labels`` may be soft
    (any non-negative weights: one-hot, smoothed, a teacher's probabilities) and is broadcast against
    ``logits``.  Integer or boolean labels (``F.one_hot(y, C)``) are converted to the compute dtype.

    Args:
        labels: tensor broadcastable to ``logits``.
        logits: floating tensor of unnormalised scores; any finite values.
        dim: the class dimension.  ``None`` normalises over every element, as a softmax written with a
            sum over everything does (``exp / exp.sum()``); the result then has a single position.
        reduction: ``"sum"`` (default) adds the losses of all positions, which is what
            ``-torch.sum(labels * log_probs)`` computes; ``"mean"`` averages them over the positions
            (every index of the broadcast shape except ``dim``: the batch and any spatial dims, like
            ``F.cross_entropy`` with probability targets); ``"none"`` returns one loss per position,
            with the shape of the broadcast inputs without ``dim``.

    Returns:
        A tensor of ``logits.dtype`` on ``logits.device``.  float16 and bfloat16 inputs are computed in
        float32 and the result is cast back, so the loss is as accurate as the output dtype allows.
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {', '.join(map(repr, _REDUCTIONS))}; got {reduction!r}")
    if not isinstance(logits, torch.Tensor) or not isinstance(labels, torch.Tensor):
        raise TypeError("labels and logits must be tensors")
    if not logits.is_floating_point():
        raise TypeError(f"logits must be a floating tensor; got {logits.dtype}")
    out_dtype = logits.dtype
    compute = torch.float32 if out_dtype in _LOW_PRECISION else out_dtype
    x = logits if logits.dtype == compute else logits.to(compute)
    y = labels if labels.dtype == compute else labels.to(compute)
    if dim is None:
        shape = torch.broadcast_shapes(x.shape, y.shape)
        x = x.expand(shape).reshape(-1)
        y = y.expand(shape).reshape(-1)
        dim = 0
    if x.dim() == 0:
        raise ValueError("logits must have at least one dimension (the classes)")
    if x.shape != y.shape:
        shape = torch.broadcast_shapes(x.shape, y.shape)
        x, y = x.expand(shape), y.expand(shape)
    if not -x.dim() <= dim < x.dim():
        raise IndexError(f"dim {dim} is out of range for logits with {x.dim()} dimensions")
    d = dim % x.dim()
    if x.dim() == 1 or d == 1:
        # classes on dim 1 (or a single distribution): torch's fused kernel for probability targets
        # computes the same -sum(y * log_softmax(x)), with the same mean over positions.
        loss = torch.nn.functional.cross_entropy(x, y, reduction=reduction)
    else:
        product = y * torch.log_softmax(x, dim=d)
        if reduction == "none":
            loss = -product.sum(dim=d)
        else:
            loss = -product.sum()
            if reduction == "mean":
                positions = x.numel() // x.shape[d] if x.shape[d] else 0
                loss = loss / positions
    return loss if loss.dtype == out_dtype else loss.to(out_dtype)
