"""Softmax cross-entropy that stays finite for any finite logits.

This is the stable formulation from the Effective PyTorch notes (vahidk, "Effective PyTorch", the section on numerical stability): the
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
    """softmax_cross_entropy(labels, logits, dim=-1, reduction="sum"): labels first, then logits.

    The loss at each position is ``-sum(labels * log_softmax(logits, dim), dim)``.  ``labels`` is either

    - a distribution over ``dim`` with **exactly** the shape of ``logits`` (soft labels: one-hot,
      smoothed, a teacher's probabilities; integer or boolean one-hot labels are converted), or
    - integer **class indices** with the shape of ``logits`` without ``dim`` (``[N]`` for ``[N, C]``
      logits), handled like ``F.cross_entropy(logits, labels)`` (including its ``ignore_index=-100``).

    How it relates to ``F.cross_entropy``: with probability targets (torch >= 1.10),
    ``softmax_cross_entropy(labels=y, logits=x, dim=1, reduction=r)`` equals
    ``F.cross_entropy(x, y, reduction=r)`` for every ``r``, values and gradients (the test suite checks
    it over reductions, class dims, dtypes and devices); for another class dim, move it to dim 1 first.
    Only the defaults differ: ``"sum"`` here, because TL206's fix replaces the cookbook's hand-written
    ``-torch.sum(labels * torch.log(torch.softmax(logits, dim)))`` and must keep its value (and the size
    of its gradients, which a learning rate was tuned for), ``"mean"`` there, the usual training loss.
    Use ``F.cross_entropy`` for new code, for class indices, or when you want the mean over the batch;
    use this function to keep a hand-written sum's scale without its overflow, for classes on another
    dim than 1, or for ``dim=None`` (one distribution over every element).

    Nothing is broadcast: any other shape raises ``ValueError`` (a ``[N]`` float tensor against ``[N, C]``
    logits would otherwise be spread silently over the classes).  Call it with keywords
    (``softmax_cross_entropy(labels=y, logits=x, dim=-1)``) so the order cannot be mixed up.

    Args:
        labels: soft labels of ``logits``' shape, or integer class indices (see above).
        logits: floating tensor of unnormalised scores; any finite values.
        dim: the class dimension.  ``None`` normalises over every element, as a softmax written with a
            sum over everything does (``exp / exp.sum()``); the result then has a single position.
        reduction: ``"sum"`` (default) adds the losses of all positions, which is what
            ``-torch.sum(labels * log_probs)`` computes; ``"mean"`` averages them over the positions
            (every index except ``dim``: the batch and any spatial dims, like ``F.cross_entropy``);
            ``"none"`` returns one loss per position, with the shape of ``logits`` without ``dim``.

    Returns:
        A tensor of ``logits.dtype`` on ``logits.device``.  float16 and bfloat16 inputs are computed in
        float32 and the result is cast back, so the loss is as accurate as the output dtype allows.

    Raises:
        ValueError: a bad ``reduction``, labels whose shape is neither of the above, class indices with
            ``dim=None``, or 0-dimensional logits.
        TypeError: non-tensor arguments or integer logits.
        IndexError: ``dim`` out of range.
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
    if labels.shape != logits.shape:
        if labels.is_floating_point() or labels.is_complex() or labels.dtype == torch.bool:
            raise ValueError(
                f"labels of shape {tuple(labels.shape)} do not match logits of shape {tuple(logits.shape)}; "
                "soft labels must have the logits' shape (nothing is broadcast), class indices must be integers"
            )
        return _class_indices(labels, x, dim, reduction, out_dtype)
    y = labels if labels.dtype == compute else labels.to(compute)
    if dim is None:
        x, y, dim = x.reshape(-1), y.reshape(-1), 0
    if x.dim() == 0:
        raise ValueError("logits must have at least one dimension (the classes)")
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


def _class_indices(labels: torch.Tensor, x: torch.Tensor, dim: Optional[int], reduction: str,
                   out_dtype: torch.dtype) -> torch.Tensor:
    """Integer class indices: ``F.cross_entropy`` with the classes moved to dim 1."""
    if dim is None:
        raise ValueError("class-index labels need a class dimension; dim=None normalises over every element")
    if x.dim() == 0:
        raise ValueError("logits must have at least one dimension (the classes)")
    if not -x.dim() <= dim < x.dim():
        raise IndexError(f"dim {dim} is out of range for logits with {x.dim()} dimensions")
    d = dim % x.dim()
    expected = x.shape[:d] + x.shape[d + 1:]
    if labels.shape != expected:
        raise ValueError(
            f"labels of shape {tuple(labels.shape)} match neither the logits' shape {tuple(x.shape)} (soft labels) "
            f"nor its shape without dim {dim}, {tuple(expected)} (class indices)"
        )
    scores = x if x.dim() == 1 or d == 1 else x.movedim(d, 1)
    loss = torch.nn.functional.cross_entropy(scores, labels.long(), reduction=reduction)
    return loss if loss.dtype == out_dtype else loss.to(out_dtype)
