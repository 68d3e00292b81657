"""Vectorized batch gather: ``output[i] = tensor[i, indices[i]]`` without a Python loop.

This is what TL302's fix calls in place of the loop from Effective PyTorch::

    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)

One indexing operation does the whole batch: the row numbers ``0 .. B-1`` are shaped so that they
broadcast against ``indices``, and ``tensor[rows, indices]`` picks ``tensor[i, indices[i, ...]]`` for
every ``i`` at once (for a ``[B, N]`` tensor, ``torch.gather`` along dim 1 does the same, faster).
The row numbers are created on ``tensor``'s own device, so the function works on CPU and on any GPU
alike, and the result is differentiable with respect to ``tensor``.
"""
from __future__ import annotations

from typing import Any

__all__ = ["batch_gather"]


def batch_gather(tensor: Any, indices: Any) -> Any:
    """Gather one set of entries per batch row: ``output[i] = tensor[i][indices[i]]``.

    Args:
        tensor: a tensor of shape ``[B, N, *rest]`` (any trailing shape ``rest``).
        indices: integer indices of shape ``[B, *idx]`` (any shape after the batch dimension; ``[B]``
            picks one entry per row), values in ``[-N, N)``; or a boolean mask of shape ``[B, N, ...]``
            selecting the same number of entries in every row.  A nested list or an array is accepted
            and converted.  Indices on another device are moved to ``tensor``'s device.

    Returns:
        A tensor of shape ``[B, *idx, *rest]`` (for a mask, ``[B, k, *rest']``) with ``tensor``'s dtype,
        on ``tensor``'s device, differentiable with respect to ``tensor`` — the same values as stacking
        ``tensor[i][indices[i]]`` over ``i``.

    Raises:
        TypeError: ``tensor`` is not a tensor, or the indices are not integers or booleans.
        ValueError: the batch sizes differ, ``tensor`` has fewer than two dimensions, or a mask selects a
            different number of entries in different rows (stacking the rows would fail the same way).
        IndexError: an index is out of range.
    """
    import torch

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"batch_gather() expects a tensor, got {type(tensor).__name__}")
    if tensor.dim() < 2:
        raise ValueError(f"batch_gather() needs a tensor with at least 2 dimensions, got shape {tuple(tensor.shape)}")
    indices = torch.as_tensor(indices, device=tensor.device)
    if indices.dim() == 0:
        raise ValueError("batch_gather() needs indices with a batch dimension, got a scalar")
    batch = tensor.size(0)
    if indices.size(0) != batch:
        raise ValueError(
            f"batch_gather(): tensor has {batch} rows but indices have {indices.size(0)}"
        )
    if indices.dtype == torch.bool:
        return _gather_mask(tensor, indices)
    if indices.is_floating_point() or indices.is_complex():
        raise TypeError(f"batch_gather() expects integer or boolean indices, got {indices.dtype}")
    if indices.dtype != torch.long:
        indices = indices.long()
    if tensor.dim() == 2 and tensor.size(1) > 0:
        return _gather_rows(tensor, indices)
    rows = torch.arange(batch, device=tensor.device).view((batch,) + (1,) * (indices.dim() - 1))
    return tensor[rows, indices]


def _gather_rows(tensor: Any, indices: Any) -> Any:
    """``[B, N]`` tensors: ``torch.gather`` along dim 1 on the flattened index set of each row, about
    twice as fast as two-tensor advanced indexing.  Negative indices count from the end, as in
    ``tensor[i][indices[i]]``; out-of-range ones raise ``IndexError`` like indexing does."""
    import torch

    n = tensor.size(1)
    flat = indices if indices.dim() == 2 else indices.reshape(indices.size(0), -1)
    if flat.device.type != "cpu":
        flat = torch.where(flat < 0, flat + n, flat)  # no host sync on accelerators
    elif flat.numel() and flat.min().item() < 0:
        flat = torch.where(flat < 0, flat + n, flat)
    try:
        out = torch.gather(tensor, 1, flat)
    except RuntimeError as exc:
        if "out of bounds" in str(exc):
            raise IndexError(str(exc)) from exc
        raise
    return out if indices.dim() == 2 else out.reshape(indices.shape)


def _gather_mask(tensor: Any, mask: Any) -> Any:
    """``tensor[i][mask[i]]`` stacked: boolean indexing keeps row-major order, so the selected entries
    of row ``i`` are contiguous in ``tensor[mask]``."""
    batch = tensor.size(0)
    if mask.dim() > tensor.dim() or tuple(mask.shape) != tuple(tensor.shape[: mask.dim()]):
        raise IndexError(
            f"batch_gather(): mask of shape {tuple(mask.shape)} does not match tensor of shape {tuple(tensor.shape)}"
        )
    counts = mask.reshape(batch, -1).sum(dim=1)
    if batch and bool((counts != counts[0]).any()):
        raise ValueError("batch_gather(): the mask selects a different number of entries in different rows")
    per_row = int(counts[0]) if batch else 0
    return tensor[mask].reshape((batch, per_row) + tuple(tensor.shape[mask.dim():]))
