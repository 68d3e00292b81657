"""Which torch version a project targets, for the version-aware rules (`torch.load` defaults, deprecated APIs).

The ``target-torch`` option is a version ("1.13", "2.4") or "auto".  "auto" reads the project's declared
torch requirement in the nearest folder that declares dependencies: ``pyproject.toml`` (``[project]``
dependencies and optional dependencies, Poetry's ``[tool.poetry.dependencies]`` and dependency groups with
their caret/tilde constraints), ``setup.cfg`` (``install_requires``, ``extras_require``), ``setup.py``
(the literal strings of ``install_requires``/``extras_require``, read without running it),
``environment.yml`` (conda's ``pytorch``/``torch`` and its ``pip:`` list), ``requirements*.txt`` and
``requirements/*.txt``; it takes the lowest version a requirement allows.  With no declared requirement,
or one without a lower bound, the project is taken to run torch 2.6 or later (the version that made
``torch.load(weights_only=True)`` the default).
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


def _poetry_requirements(data: dict) -> List[str]:
    """Poetry's torch constraints (``torch = "^1.10"``, ``{version = "~1.12"}``, a list of those), as PEP 508
    lines: a caret or tilde allows its own version upwards, so its lower bound is that version."""
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if not isinstance(poetry, dict):
        return []
    tables = [poetry.get("dependencies"), poetry.get("dev-dependencies")]
    groups = poetry.get("group")
    if isinstance(groups, dict):
        tables += [g.get("dependencies") for g in groups.values() if isinstance(g, dict)]
    out: List[str] = []
    for table in tables:
        if not isinstance(table, dict):
            continue
        for name, spec in table.items():
            if str(name).lower() != "torch":
                continue
            for one in spec if isinstance(spec, list) else [spec]:
                text = one.get("version") if isinstance(one, dict) else one
                if isinstance(text, str):
                    out.append("torch " + _poetry_spec(text))
    return out


def _poetry_spec(text: str) -> str:
    """``^1.10`` / ``~1.10`` / ``~=1.10`` / ``1.10.*`` / ``>=1.10,<1.13`` / ``1.12`` -> a PEP 440 specifier."""
    clauses = []
    for part in text.split(","):
        part = part.strip()
        if part.startswith("^") or (part.startswith("~") and not part.startswith("~=")):
            clauses.append(">=" + part.lstrip("^~").strip())
        elif part and part[0].isdigit():
            clauses.append("==" + part.rstrip(".*"))
        else:
            clauses.append(part)
    return ",".join(clauses)


def _pyproject_all(path: str) -> Optional[List[str]]:
    reqs = _pyproject_requirements(path)
    try:
        data = tomllib.loads(read_limited(path, CONFIG_MAX_BYTES)[0].decode("utf-8"))
    except (OSError, ValueError):
        return reqs
    return (reqs or []) + _poetry_requirements(data)


def _requirements_txt(path: str) -> Optional[List[str]]:
    try:
        return read_text(path, CONFIG_MAX_BYTES).splitlines()
    except OSError:
        return None


def _setup_cfg(path: str) -> Optional[List[str]]:
    """``[options] install_requires`` and ``[options.extras_require]`` of a setup.cfg (one per line)."""
    import configparser

    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(read_text(path, CONFIG_MAX_BYTES))
    except (OSError, configparser.Error, ValueError):
        return None
    out: List[str] = []
    if parser.has_option("options", "install_requires"):
        out += parser.get("options", "install_requires").splitlines()
    if parser.has_section("options.extras_require"):
        for _, value in parser.items("options.extras_require"):
            out += value.splitlines()
    return [line.split(";", 1)[0] if "python_version" in line else line for line in out]


def _setup_py(path: str) -> Optional[List[str]]:
    """The string literals of ``install_requires=[...]`` / ``extras_require={...}`` in a setup.py (parsed,
    never run; a list built by code is not read)."""
    import ast

    try:
        tree = ast.parse(read_text(path, CONFIG_MAX_BYTES))
    except (OSError, SyntaxError, ValueError):
        return None
    out: List[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "extras_require"):
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    out.append(sub.value)
    return out


_CONDA = re.compile(r"^\s*-\s*(?:[\w.-]+::)?(?P<name>pytorch|torch)\s*(?P<spec>[<>=!~].*)?$", re.IGNORECASE)


def _environment_yml(path: str) -> Optional[List[str]]:
    """conda's ``- pytorch=1.12`` / ``- pytorch>=1.10`` (one ``=`` is a version prefix), and ``- torch==...``
    under ``pip:``; read line by line (no YAML parser is needed for dependency lists)."""
    try:
        lines = read_text(path, CONFIG_MAX_BYTES).splitlines()
    except OSError:
        return None
    out: List[str] = []
    for line in lines:
        m = _CONDA.match(line.split("#", 1)[0])
        if m is None:
            continue
        text = (m.group("spec") or "").strip()
        if text.startswith("=") and not text.startswith("=="):
            text = "==" + text[1:].split("=", 1)[0].rstrip(".*")  # `=1.12` / `=1.12.1=py3.9_cuda...`
        out.append("torch " + text)
    return out


#: the readers of each kind of dependency file, by file name
def _reader(path: str):
    name = os.path.basename(path)
    if name == "pyproject.toml":
        return _pyproject_all
    if name == "setup.cfg":
        return _setup_cfg
    if name == "setup.py":
        return _setup_py
    if name in ("environment.yml", "environment.yaml"):
        return _environment_yml
    return _requirements_txt


_DECLARING = ("pyproject.toml", "setup.cfg", "setup.py", "environment.yml", "environment.yaml")


def _declarations(folder: str) -> Optional[List[str]]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    found = [os.path.join(folder, n) for n in names
             if (n in _DECLARING or (n.startswith("requirements") and n.endswith(".txt")))
             and os.path.isfile(os.path.join(folder, n))]
    sub = os.path.join(folder, "requirements")
    if os.path.isdir(sub):
        try:
            found += [os.path.join(sub, n) for n in sorted(os.listdir(sub))
                      if n.endswith(".txt") and os.path.isfile(os.path.join(sub, n))]
        except OSError:
            pass
    return found or None


def declared_torch_source(start: str) -> Optional[Tuple[Version, str]]:
    """The lower bound of torch declared by the project around ``start`` (a file or folder) and the file
    that gave it (the one declaring the lowest bound), if any.

    Looks upwards for the first folder that holds a dependency file and reads every one there.
    """
    files = find_upwards(folder_of(start), _declarations)
    if files is None:
        return None
    best: Optional[Tuple[Version, str]] = None
    for file in files:
        bound = _lowest(_reader(file)(file) or [])
        if bound is not None and (best is None or bound < best[0]):
            best = (bound, file)
    return best


def declared_torch(start: str) -> Optional[Version]:
    """The lower bound of torch declared by the project around ``start`` (a file or folder), if any."""
    found = declared_torch_source(start)
    return found[0] if found is not None else None


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
    "declared in the project's pyproject.toml (PEP 621 or Poetry), setup.cfg, setup.py, environment.yml or "
    "requirements files, else 2.6.",
)


def resolve_auto(options: dict, start: str) -> Optional[str]:
    """Replace a missing or "auto" ``target-torch`` by the project's declared lower bound, when there is one;
    returns the file that declared it."""
    if options.get("target-torch", "auto") != "auto":
        return None
    declared = declared_torch_source(start)
    if declared is None:
        return None
    options["target-torch"] = f"{declared[0][0]}.{declared[0][1]}"
    return declared[1]
