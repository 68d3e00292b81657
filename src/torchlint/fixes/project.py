"""Does the linted project depend on ``torchlint[runtime]``?

Fixes that call into :mod:`torchlint.runtime` are only right for projects that install it: under the
``torchlint-fix`` pre-commit hook torchlint lives in pre-commit's own environment, and a program fixed
to import it would fail with ``ModuleNotFoundError`` where it actually runs.  The project is the nearest
folder up from the linted file that holds a ``pyproject.toml``, ``setup.cfg``, ``setup.py``,
``requirements*.txt`` or ``environment.yml``; it declares the runtime when one of those files lists
``torchlint[runtime]`` (or ``torchlint[...,runtime]``) as a dependency.
"""
from __future__ import annotations

import functools
import os
import re
from typing import Optional, Tuple

from torchlint.reading import CONFIG_MAX_BYTES, read_text

#: the option shared by the rules whose fixes can target torchlint.runtime
RUNTIME_FIXES = "runtime-fixes"
RUNTIME_CHOICES = ("auto", "runtime", "torch")

_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")
_REQUIREMENT = re.compile(r"""(?<![\w.-])torchlint\s*\[[^\]]*\bruntime\b[^\]]*\]""", re.IGNORECASE)


def _dependency_files(folder: str) -> Tuple[str, ...]:
    try:
        names = os.listdir(folder)
    except OSError:
        return ()
    found = [n for n in names if n in _MARKERS or (n.startswith("requirements") and n.endswith((".txt", ".in")))]
    return tuple(sorted(os.path.join(folder, n) for n in found))


def _project_files(path: str) -> Tuple[str, ...]:
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        files = _dependency_files(folder)
        if files:
            return files
        parent = os.path.dirname(folder)
        if parent == folder:
            return ()
        folder = parent


def _declares(file: str) -> bool:
    try:
        text = read_text(file, CONFIG_MAX_BYTES)
    except OSError:
        return False
    for line in text.splitlines():
        code = line.split("#", 1)[0]
        if _REQUIREMENT.search(code):
            return True
    return False


@functools.lru_cache(maxsize=256)
def _folder_declares(folder: str) -> bool:
    return any(_declares(f) for f in _project_files(os.path.join(folder, "_")))


def project_declares_runtime(path: Optional[str]) -> bool:
    """True when the project holding ``path`` declares ``torchlint[runtime]`` as a dependency."""
    if not path or path.startswith("<"):
        return False
    return _folder_declares(os.path.dirname(os.path.abspath(path)))


def use_runtime(option: str, path: Optional[str]) -> bool:
    """Whether a fix may call torchlint.runtime: ``runtime-fixes = "auto"`` (the default) follows the
    project's dependencies, ``"runtime"`` always, ``"torch"`` never."""
    if option == "runtime":
        return True
    if option == "torch":
        return False
    return project_declares_runtime(path)
