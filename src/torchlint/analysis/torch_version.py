"""Which torch version a project targets, for the version-aware rules (`torch.load` defaults, deprecated APIs).

The ``target-torch`` option is a version ("1.13", "2.4") or "auto".  "auto" reads the project's declared
torch requirement (``[project] dependencies`` and optional dependencies in the nearest ``pyproject.toml``,
else a ``requirements.txt`` beside it) and takes the lowest version the requirement allows; with no
declared requirement, or one without a lower bound, the project is taken to run torch 2.6 or later (the
version that made ``torch.load(weights_only=True)`` the default).
"""
from __future__ import annotations

import os
import re
import sys
from typing import Iterable, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Version = Tuple[int, int]

#: What "auto" means when the project declares no lower bound for torch.
DEFAULT_TARGET: Version = (2, 6)

_REQ = re.compile(r"^\s*torch\s*(\[[^\]]*\])?\s*(?P<spec>[<>=!~][^;#]*)?(;.*)?(#.*)?$", re.IGNORECASE)
_CLAUSE = re.compile(r"(?P<op>~=|==|>=|>|<=|<|!=)\s*(?P<ver>\d+(?:\.\d+)*)")


def parse_version(text: str) -> Optional[Version]:
    """"2.4" / "2.4.1" / "1.13.0+cu117" -> (2, 4) / (2, 4) / (1, 13); None when it is not a version."""
    m = re.match(r"^\s*(\d+)(?:\.(\d+))?", str(text))
    if m is None:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def lower_bound(requirement: str) -> Optional[Version]:
    """The lowest torch version a PEP 508 requirement line allows, or None (not torch / no lower bound)."""
    m = _REQ.match(requirement)
    if m is None:
        return None
    spec = m.group("spec") or ""
    best: Optional[Version] = None
    for clause in _CLAUSE.finditer(spec):
        if clause.group("op") in ("~=", "==", ">=", ">"):
            v = parse_version(clause.group("ver"))
            if v is not None and (best is None or v > best):
                best = v
    return best


def _pyproject_requirements(path: str) -> Optional[List[str]]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return None
    project = data.get("project")
    if not isinstance(project, dict):
        return None
    reqs: List[str] = []
    deps = project.get("dependencies")
    if isinstance(deps, list):
        reqs += [d for d in deps if isinstance(d, str)]
    optional = project.get("optional-dependencies")
    if isinstance(optional, dict):
        for group in optional.values():
            if isinstance(group, list):
                reqs += [d for d in group if isinstance(d, str)]
    return reqs


def _requirements_txt(path: str) -> Optional[List[str]]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return None


def declared_torch(start: str) -> Optional[Version]:
    """The lower bound of torch declared by the project around ``start`` (a file or folder), if any.

    Looks upwards for the first folder with a ``pyproject.toml`` or ``requirements.txt`` and reads them.
    """
    cur = os.path.abspath(start)
    if not os.path.isdir(cur):
        cur = os.path.dirname(cur)
    while True:
        found = False
        reqs: List[str] = []
        for name, reader in (("pyproject.toml", _pyproject_requirements), ("requirements.txt", _requirements_txt)):
            candidate = os.path.join(cur, name)
            if os.path.isfile(candidate):
                found = True
                reqs += reader(candidate) or []
        if found:
            return _lowest(reqs)
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _lowest(reqs: Iterable[str]) -> Optional[Version]:
    bounds = [b for b in (lower_bound(r) for r in reqs) if b is not None]
    return min(bounds) if bounds else None


def target_version(option: object) -> Version:
    """The version a rule should assume from the resolved ``target-torch`` option value."""
    if isinstance(option, str) and option != "auto":
        v = parse_version(option)
        if v is not None:
            return v
    return DEFAULT_TARGET


def validate_target(value: object) -> bool:
    return value == "auto" or (isinstance(value, str) and parse_version(value) is not None)


def _target_option():
    from torchlint.rule import Option

    class TargetTorch(Option):
        def validate(self, key, value):
            if not validate_target(value):
                raise ValueError(f'invalid value {value!r} for `{key}` (expected a version like "2.4", or "auto")')
            return value

    return TargetTorch(
        "auto",
        'The oldest torch the project supports ("2.4"), or "auto": the lower bound of the torch requirement '
        "declared in the project's pyproject.toml / requirements.txt, else 2.6.",
    )


#: The ``target-torch`` option, shared by the rules that read it.
TARGET_TORCH = _target_option()


def resolve_auto(options: dict, start: str) -> None:
    """Replace a missing or "auto" ``target-torch`` by the project's declared lower bound, when there is one."""
    if options.get("target-torch", "auto") != "auto":
        return
    declared = declared_torch(start)
    if declared is not None:
        options["target-torch"] = f"{declared[0]}.{declared[1]}"
