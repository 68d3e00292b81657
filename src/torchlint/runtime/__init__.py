"""Correct implementations that torchlint's fixes point to.

Needs torch (the ``runtime`` extra); torch is imported only when a function is used, so
``import torchlint.runtime`` stays cheap and the linter itself never imports torch.
"""
from __future__ import annotations

from typing import Any

__all__ = ["softmax_cross_entropy", "batch_gather"]


def __getattr__(name: str) -> Any:
    if name == "softmax_cross_entropy":
        from torchlint.runtime.cross_entropy import softmax_cross_entropy

        return softmax_cross_entropy
    if name == "batch_gather":
        from torchlint.runtime.gather import batch_gather

        return batch_gather
    raise AttributeError(f"module 'torchlint.runtime' has no attribute {name!r}")
