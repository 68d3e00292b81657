"""Does the linted project depend on ``torchlint[runtime]``?

Fixes that call into :mod:`torchlint.runtime` are only right for projects that install it: under the
``torchlint-fix`` pre-commit hook torchlint lives in pre-commit's own environment, and a program fixed
to import it would fail with ``ModuleNotFoundError`` where it actually runs.  The project is the nearest
folder up from the linted file that holds a ``pyproject.toml``, ``setup.cfg``, ``setup.py``,
``requirements*.txt`` or ``environment.yml``; it declares the runtime when one of those files lists
``torchlint[runtime]`` (or ``torchlint[...,runtime]``) as a dependency.  The answer is the file's
:class:`~torchlint.analysis.project.Project`'s, which reads those files again when they change.
"""
from __future__ import annotations

from typing import Optional

from torchlint.analysis.project import Project

#: the option shared by the rules whose fixes can target torchlint.runtime
RUNTIME_FIXES = "runtime-fixes"
RUNTIME_CHOICES = ("auto", "runtime", "torch")


def project_declares_runtime(path: Optional[str], project: Optional[Project] = None) -> bool:
    """True when the project holding ``path`` declares ``torchlint[runtime]`` as a dependency."""
    return (project if project is not None else Project()).declares_runtime(path)


def use_runtime(option: str, path: Optional[str], project: Optional[Project] = None) -> bool:
    """Whether a fix may call torchlint.runtime: ``runtime-fixes = "auto"`` (the default) follows the
    project's dependencies, ``"runtime"`` always, ``"torch"`` never.  ``project``: the file's project
    (``ctx.project``)."""
    if option == "runtime":
        return True
    if option == "torch":
        return False
    return project_declares_runtime(path, project)


__all__ = ["RUNTIME_CHOICES", "RUNTIME_FIXES", "project_declares_runtime", "use_runtime"]
