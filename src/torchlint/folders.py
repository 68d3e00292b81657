"""The one search up the folder tree: "the nearest folder above this file that ...".

The project root, the configuration file, the declared torch version and the declared dependencies are
all found by :func:`find_upwards`; they differ only in what they look for (see
:mod:`torchlint.analysis.project` and :mod:`torchlint.config`).
"""
from __future__ import annotations

import os
from typing import Callable, Optional, TypeVar

T = TypeVar("T")


def folder_of(start: str) -> str:
    """``start`` made absolute if it is a folder, else the folder of the file it names."""
    cur = os.path.abspath(start)
    return cur if os.path.isdir(cur) else os.path.dirname(cur)


def find_upwards(folder: str, test: Callable[[str], Optional[T]], depth: Optional[int] = None) -> Optional[T]:
    """The first answer ``test(f)`` gives that is not None, for ``f`` the absolute ``folder`` and each
    folder above it, at most ``depth`` folders; None when none answers."""
    cur = os.path.abspath(folder)
    seen = 0
    while depth is None or seen < depth:
        found = test(cur)
        if found is not None:
            return found
        seen += 1
        parent = os.path.dirname(cur)
        if parent == cur:
            break
        cur = parent
    return None


__all__ = ["find_upwards", "folder_of"]
