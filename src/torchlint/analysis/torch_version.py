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

from torchlint.reading import CONFIG_MAX_BYTES, read_limited, read_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from torchlint.folders import find_upwards, folder_of
from torchlint.options import Option

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
        data = tomllib.loads(read_limited(path, CONFIG_MAX_BYTES)[0].decode("utf-8"))
    except (OSError, ValueError):
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
        return read_text(path, CONFIG_MAX_BYTES).splitlines()
    except OSError:
        return None


def _declarations(folder: str) -> Optional[List[str]]:
    found = [os.path.join(folder, n) for n in ("pyproject.toml", "requirements.txt")
             if os.path.isfile(os.path.join(folder, n))]
    return found or None


def declared_torch(start: str) -> Optional[Version]:
    """The lower bound of torch declared by the project around ``start`` (a file or folder), if any.

    Looks upwards for the first folder with a ``pyproject.toml`` or ``requirements.txt`` and reads them.
    """
    files = find_upwards(folder_of(start), _declarations)
    if files is None:
        return None
    reqs: List[str] = []
    for file in files:
        reader = _pyproject_requirements if os.path.basename(file) == "pyproject.toml" else _requirements_txt
        reqs += reader(file) or []
    return _lowest(reqs)


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
    """"auto" or a whole version ("2", "2.4", "2.4.1"): "2.x" or "2.4-ish" are refused, not read as 2.0."""
    return value == "auto" or (isinstance(value, str) and re.fullmatch(r"\s*\d+(?:\.\d+){0,2}\s*", value) is not None)


class TargetTorch(Option):
    """The ``target-torch`` option: a version, or "auto"."""

    def validate(self, key, value):
        if not validate_target(value):
            raise ValueError(f'invalid value {value!r} for `{key}` (expected a version like "2.4", or "auto")')
        return value


#: The ``target-torch`` option, shared by the rules that read it.
TARGET_TORCH = TargetTorch(
    "auto",
    'The oldest torch the project supports ("2.4"), or "auto": the lower bound of the torch requirement '
    "declared in the project's pyproject.toml / requirements.txt, else 2.6.",
)


def resolve_auto(options: dict, start: str) -> None:
    """Replace a missing or "auto" ``target-torch`` by the project's declared lower bound, when there is one."""
    if options.get("target-torch", "auto") != "auto":
        return
    declared = declared_torch(start)
    if declared is not None:
        options["target-torch"] = f"{declared[0]}.{declared[1]}"
