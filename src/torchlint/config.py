"""``[tool.torchlint]`` in the nearest ``pyproject.toml`` (or a ``.torchlint.toml`` / ``torchlint.toml``
with the same keys at the top level), merged with command-line flags, which win.

Which file configures a folder (as ruff finds ``.ruff.toml``, ``ruff.toml``, ``pyproject.toml``): from the
file's folder up, the first folder holding one of :data:`CONFIG_FILES`; in that folder ``.torchlint.toml``
wins over ``torchlint.toml``, which wins over ``pyproject.toml`` (a ``pyproject.toml`` without a
``[tool.torchlint]`` table configures nothing and the search goes on up).  Files are never merged: the
one found is the whole configuration; ``--config FILE`` replaces it, and ``--config 'KEY = VALUE'`` and
the other flags win over it.

Rule selection follows ruff: ``select`` replaces the default set, ``extend-select`` adds to it,
``ignore``/``extend-ignore`` remove; entries are code prefixes (``TL1`` is the family, ``ALL`` is every
rule), and for a given rule the most specific matching entry decides.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Type

from torchlint.analysis.project import Project
from torchlint.analysis.torch_version import resolve_auto
from torchlint.folders import find_upwards, folder_of
from torchlint.reading import CONFIG_MAX_BYTES, ReadRefused, read_limited
from torchlint.rule import LintRule

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    pass


_LIST_KEYS = ("select", "ignore", "extend-select", "extend-ignore", "exclude", "extend-exclude", "fixable", "unfixable")
_BOOL_KEYS = ("force-exclude", "respect-gitignore", "unsafe-fixes")
CORE_KEYS = frozenset(_LIST_KEYS + _BOOL_KEYS + ("per-file-ignores", "cache-dir", "max-file-size", "file-timeout",
                                                  "docs-url"))


@dataclass
class Config:
    path: Optional[str] = None  # the file it came from
    root: str = "."
    select: Optional[List[str]] = None
    extend_select: List[str] = field(default_factory=list)
    ignore: List[str] = field(default_factory=list)
    exclude: Optional[List[str]] = None
    extend_exclude: List[str] = field(default_factory=list)
    per_file_ignores: Dict[str, List[str]] = field(default_factory=dict)
    force_exclude: bool = False
    respect_gitignore: bool = True
    cache_dir: Optional[str] = None
    max_file_size: Optional[int] = None
    file_timeout: Optional[float] = None  # seconds per file (scaled up for large files)
    options: Dict[str, Any] = field(default_factory=dict)
    unsafe_fixes: Optional[bool] = None  # None: not set (off)
    fixable: Optional[List[str]] = None  # None: every rule's fix may be applied
    unfixable: List[str] = field(default_factory=list)
    #: where the project publishes the rule pages: a URL template with `{code}` (and maybe `{name}`)
    docs_url: Optional[str] = None
    #: the dependency file `target-torch = "auto"` was read from (None: set explicitly, or nothing declared)
    target_torch_from: Optional[str] = None


#: configuration files, in the order they win within one folder
CONFIG_FILES = (".torchlint.toml", "torchlint.toml", "pyproject.toml")


def find_config(start: str) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The nearest .torchlint.toml, torchlint.toml, or pyproject.toml with a [tool.torchlint] table,
    from ``start`` up."""
    return find_upwards(folder_of(start), _config_in)


def _config_in(folder: str) -> Optional[Tuple[str, Dict[str, Any]]]:
    for name in CONFIG_FILES:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            table = _read_table(candidate)
            if table is not None:
                return candidate, table
    return None


def _read_table(path: str) -> Optional[Dict[str, Any]]:
    try:
        data = tomllib.loads(read_limited(path, CONFIG_MAX_BYTES)[0].decode("utf-8"))
    except ReadRefused as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML in {path}: {exc}") from None
    except RecursionError:
        raise ConfigError(f"invalid TOML in {path}: values nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict):
            raise ConfigError(f"`tool` in {path} must be a table")
        table = tool.get("torchlint")
        if table is None:
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"[tool.torchlint] in {path} must be a table")
        return table
    return data


def load_config(path: Optional[str], start: str, rules: Sequence[Type[LintRule]]) -> Config:
    """Read ``path`` (given with --config) or the nearest config file above ``start``."""
    if path is not None:
        if not os.path.isfile(path):
            raise ConfigError(f"config file not found: {path}")
        table = _read_table(path)
        if table is None:
            table = {}
        found: Optional[Tuple[str, Dict[str, Any]]] = (path, table)
    else:
        found = find_config(start)
    cfg = Config(root=os.getcwd()) if found is None else parse_table(found[1], found[0], rules)
    resolve_target(cfg, found[0] if found is not None else start, rules)
    return cfg


def resolve_target(cfg: Config, where: str, rules: Sequence[Type[LintRule]]) -> None:
    """``target-torch = "auto"``: the lowest torch the project declared near ``where`` (else 2.6)."""
    if any("target-torch" in r.OPTIONS for r in rules):
        cfg.target_torch_from = resolve_auto(cfg.options, where)


def resolve_target_with(options: Dict[str, Any], where: str, rules: Sequence[Type[LintRule]], project: Project) -> None:
    """:func:`resolve_target` on ``options``, with the declared version as ``project`` knows it (a
    long-running host refreshes its project when a dependency file changes)."""
    if options.get("target-torch", "auto") != "auto" or not any("target-torch" in r.OPTIONS for r in rules):
        return
    declared = project.declared_torch(where)
    if declared is not None:
        options["target-torch"] = f"{declared[0]}.{declared[1]}"


def rule_options(rules: Sequence[Type[LintRule]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for r in rules:
        for key, opt in r.OPTIONS.items():
            out[key] = opt
    return out


def parse_table(table: Mapping[str, Any], path: str, rules: Sequence[Type[LintRule]]) -> Config:
    where = f"[tool.torchlint] in {path}" if path.endswith("pyproject.toml") else path
    cfg = Config(path=path, root=os.path.dirname(os.path.abspath(path)))
    options = rule_options(rules)
    for key, value in table.items():
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"`{key}` in {where} must be a list of strings")
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"`{key}` in {where} must be true or false")
        if key == "select":
            cfg.select = [v.upper() for v in value]
        elif key == "extend-select":
            cfg.extend_select = [v.upper() for v in value]
        elif key in ("ignore", "extend-ignore"):
            cfg.ignore += [v.upper() for v in value]
        elif key == "exclude":
            cfg.exclude = list(value)
        elif key == "extend-exclude":
            cfg.extend_exclude = list(value)
        elif key == "force-exclude":
            cfg.force_exclude = value
        elif key == "respect-gitignore":
            cfg.respect_gitignore = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                isinstance(v, list) and all(isinstance(c, str) for c in v) for v in value.values()
            ):
                raise ConfigError(f"`per-file-ignores` in {where} must map glob patterns to lists of codes")
            cfg.per_file_ignores = {k: [c.upper() for c in v] for k, v in value.items()}
        elif key == "cache-dir":
            if not isinstance(value, str):
                raise ConfigError(f"`cache-dir` in {where} must be a string")
            # relative to the folder of the file that says so (the working folder for `--config`)
            full = os.path.normpath(os.path.join(cfg.root, os.path.expanduser(value)))
            shown = os.path.relpath(full)  # said as briefly as it can be from here
            cfg.cache_dir = full if shown.startswith("..") else shown
        elif key == "max-file-size":
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ConfigError(f"`max-file-size` in {where} must be a positive number of bytes")
            cfg.max_file_size = value
        elif key == "file-timeout":
            cfg.file_timeout = parse_file_timeout(value, where)
        elif key == "docs-url":
            if not isinstance(value, str) or "{code}" not in value:
                raise ConfigError(f"`docs-url` in {where} must be a URL template with `{{code}}` "
                                  "(\"https://example.org/rules/{code}.html\")")
            cfg.docs_url = value
        elif key == "unsafe-fixes":
            cfg.unsafe_fixes = value
        elif key == "fixable":
            cfg.fixable = [v.upper() for v in value]
        elif key == "unfixable":
            cfg.unfixable = [v.upper() for v in value]
        elif key in options:
            try:
                cfg.options[key] = options[key].validate(key, value)
            except ValueError as exc:
                raise ConfigError(f"{exc} in {where}") from None
        else:
            known = ", ".join(sorted(CORE_KEYS | set(options)))
            raise ConfigError(f"unknown key `{key}` in {where} (known keys: {known})")
    for codes in [cfg.select or [], cfg.extend_select, cfg.ignore, cfg.fixable or [], cfg.unfixable] + list(
        cfg.per_file_ignores.values()
    ):
        check_codes(codes, rules, where)
    return cfg


#: the longest ``file-timeout`` accepted (a day): larger values overflow the clocks the watchdog uses
MAX_FILE_TIMEOUT = 86400.0


def parse_file_timeout(value: Any, where: str) -> float:
    """``file-timeout``: a positive number of seconds, at most :data:`MAX_FILE_TIMEOUT`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise ConfigError(f"`file-timeout` in {where} must be a positive number of seconds")
    if value > MAX_FILE_TIMEOUT:
        raise ConfigError(f"`file-timeout` in {where} must be at most {MAX_FILE_TIMEOUT:.0f} seconds (a day), got {value:g}")
    return float(value)


def check_codes(codes: Sequence[str], rules: Sequence[Type[LintRule]], where: str) -> None:
    from torchlint.selection import known

    all_codes = [r.CODE for r in rules]
    for code in codes:
        if not known(code, all_codes):
            raise ConfigError(f"unknown rule selector `{code}` in {where}")


Layer = Tuple[Optional[Sequence[str]], Sequence[str], Sequence[str]]  # select, extend-select, ignore


def select_rules(rules: Sequence[Type[LintRule]], *layers: Layer) -> List[Type[LintRule]]:
    """The rules that selection layers enable (:func:`torchlint.selection.resolve`, which also says
    whether TL000 is reported)."""
    from torchlint.selection import resolve

    return list(resolve(rules, *layers).rules)


def ignored_for(path: str, root: str, per_file_ignores: Mapping[str, Sequence[str]]) -> List[str]:
    """Code prefixes that ``per-file-ignores`` turns off for ``path`` (``ALL``, every rule, is the empty
    prefix; TL000 stays on unless named, as with ``ignore = ["ALL"]``)."""
    if not per_file_ignores:
        return []
    try:
        rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    except ValueError:
        rel = path
    base = os.path.basename(path)
    out: List[str] = []
    for pattern, codes in per_file_ignores.items():
        if fnmatchcase(rel, pattern) or fnmatchcase(base, pattern) or rel.startswith(pattern.rstrip("/") + "/"):
            out.extend("" if c == "ALL" else c for c in codes)
    return out


def parse_override(fragment: str) -> Dict[str, Any]:
    """One ``--config`` value that is not a file: a TOML ``KEY = VALUE`` fragment (``target-torch = "2.0"``,
    ``select = ["TL1"]``), as ruff reads it."""
    try:
        table = tomllib.loads(fragment)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"config file not found: {fragment} (and it is not a `KEY = VALUE` override in TOML: {exc})"
        ) from None
    except RecursionError:
        raise ConfigError("invalid `--config` value: values nested too deeply") from None
    if not table:
        raise ConfigError(f"config file not found: {fragment}")
    return table


#: override key -> the Config attribute it replaces
_REPLACED = {
    "select": "select", "extend-select": "extend_select", "exclude": "exclude", "extend-exclude": "extend_exclude",
    "force-exclude": "force_exclude", "respect-gitignore": "respect_gitignore", "cache-dir": "cache_dir",
    "max-file-size": "max_file_size", "file-timeout": "file_timeout", "unsafe-fixes": "unsafe_fixes",
    "fixable": "fixable", "unfixable": "unfixable", "per-file-ignores": "per_file_ignores", "docs-url": "docs_url",
}


def with_overrides(cfg: Config, table: Mapping[str, Any], rules: Sequence[Type[LintRule]]) -> Config:
    """``cfg`` with the command line's ``KEY = VALUE`` overrides applied; they win over every file.
    ``extend-ignore`` and ``per-file-ignores`` add to the file's, every other key replaces its value."""
    import copy

    over = parse_table(table, "--config", rules)
    new = copy.deepcopy(cfg)
    for key in table:
        if key in _REPLACED:
            value = getattr(over, _REPLACED[key])
            if key == "per-file-ignores":
                value = {**cfg.per_file_ignores, **value}
            setattr(new, _REPLACED[key], value)
        elif key == "ignore":
            new.ignore = list(over.ignore)
        elif key == "extend-ignore":
            if "ignore" not in table:
                new.ignore = cfg.ignore + over.ignore
        else:  # a rule option
            new.options[key] = over.options[key]
    if "target-torch" in table:
        resolve_target(new, cfg.path or cfg.root, rules)
    return new
