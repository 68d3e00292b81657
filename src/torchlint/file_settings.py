"""The settings of a file, found from the file: one answer for the command line, the language server and
the flake8 plugin.

A file's project says how it is linted: its nearest configuration (``torchlint.toml``, or
``pyproject.toml`` with a ``[tool.torchlint]`` table, from the file's folder up), the torch version
the project declares (``target-torch = "auto"``: read from the ``pyproject.toml`` / ``requirements.txt``
nearest to the configuration file, or to the file when there is none), the configuration's excludes and
per-file ignores.  None of these depends on the folder a tool was started from: ``torchlint check``,
``flake8 --select TL`` and the editor give a file the same settings from the project folder, from its
parent or from ``/``.

The paths a configuration names (excludes, per-file ignores) are relative to the folder of the
configuration file; without one, to the project found from the file (:meth:`SettingsResolver.root_of`).
:func:`engine_settings` turns a file's configuration into the engine's settings, the same way for every
host (each adds only its own selection layer and flags).

``--config`` and ``--isolated`` give every file the one configuration (``fixed``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Type

from torchlint.analysis.project import ROOT_MARKERS, ROOT_SEARCH_DEPTH, Project, dependency_files
from torchlint.config import Config, Layer, find_config, ignored_for, parse_table, resolve_target, resolve_target_with
from torchlint.engine import Settings
from torchlint.files import DEFAULT_EXCLUDE, matches_any
from torchlint.folders import find_upwards
from torchlint.rule import LintRule
from torchlint.selection import Selection, fixable_codes, resolve


@dataclass(frozen=True)
class FileSettings:
    """How the project of one file says it is linted."""

    config: Config  # the file's configuration; its options hold the resolved ``target-torch``
    root: str = "."  # the folder the configuration's paths (excludes, per-file ignores) are relative to
    excluded: bool = False  # the configuration's excludes match the file (as ``--force-exclude`` reads them)
    ignore: Tuple[str, ...] = ()  # codes ``per-file-ignores`` turns off for the file


class SettingsResolver:
    """Configurations by folder, each read once.

    ``default_root`` gives the root of a folder with no configuration file (the command line keeps its
    cache in the folder it was started from); by default, the folder of the nearest project marker
    (``pyproject.toml``, ``setup.py``, ``.git``, ...) above the folder, else the folder itself.  Excludes
    are matched on paths relative to it.  ``project``, when given, answers the declared torch version (a
    long-running host refreshes it when a dependency file changes); else the declaration is read from
    disk once per configuration."""

    def __init__(self, rules: Sequence[Type[LintRule]], fixed: Optional[Config] = None,
                 default_root: Optional[Callable[[str], str]] = None, project: Optional[Project] = None) -> None:
        self.rules = rules
        self.fixed = fixed
        self.project = project
        self._roots = project if project is not None else Project()
        self.default_root = default_root or self._project_root
        self._by_dir: Dict[str, Config] = {}
        self._by_file: Dict[str, Config] = {}
        self._file_roots: Dict[str, Optional[str]] = {}

    def for_dir(self, folder: str) -> Config:
        """The configuration that applies in ``folder`` (raises ConfigError for a bad file)."""
        if self.fixed is not None:
            return self.fixed
        folder = os.path.abspath(folder)
        cfg = self._by_dir.get(folder)
        if cfg is None:
            found = find_config(folder)
            if found is None:
                # no configuration file: the defaults, with the torch version the project declares;
                # folders that resolve alike share one Config (one group, one pool of workers)
                cfg = Config(root=self.default_root(folder))
                self._resolve_target(cfg, folder)
                key = repr((cfg.root, sorted(cfg.options.items())))
                cfg = self._by_file.setdefault(key, cfg)
            else:
                cfg = self._by_file.get(found[0])
                if cfg is None:
                    cfg = parse_table(found[1], found[0], self.rules)
                    self._resolve_target(cfg, found[0])
                    self._by_file[found[0]] = cfg
            self._by_dir[folder] = cfg
        return cfg

    def for_path(self, path: str) -> Config:
        return self.for_dir(path if os.path.isdir(path) else (os.path.dirname(os.path.abspath(path)) or "."))

    def for_file(self, path: str) -> FileSettings:
        """Everything the project of ``path`` says about linting it (raises ConfigError for a bad file)."""
        cfg = self.for_path(path)
        root = self.root_of(path, cfg)
        exclude = list(cfg.exclude if cfg.exclude is not None else DEFAULT_EXCLUDE) + list(cfg.extend_exclude)
        try:
            rel = os.path.relpath(os.path.abspath(path), root)
        except ValueError:  # another drive on Windows
            rel = path
        return FileSettings(config=cfg, root=root, excluded=matches_any(rel, exclude),
                            ignore=tuple(ignored_for(path, root, cfg.per_file_ignores)))

    def root_of(self, path: str, cfg: Optional[Config] = None) -> str:
        """The folder the paths of the settings of ``path`` (a file or a folder) are relative to: the
        folder of its configuration file; without one, the project found from ``path``: the nearest
        folder above it with a project marker (``pyproject.toml``, ``setup.py``, ``.git``, ...) or a
        dependency declaration (``requirements*.txt``, where the torch version is read), never the folder
        a tool was started from.  Only where neither exists (no project at all) does ``default_root``
        decide.  ``--config``/``--isolated``: the one configuration's root."""
        cfg = cfg if cfg is not None else self.for_path(path)
        if self.fixed is not None or cfg.path is not None:
            return cfg.root
        folder = os.path.abspath(path if os.path.isdir(path) else (os.path.dirname(os.path.abspath(path)) or "."))
        if folder not in self._file_roots:
            self._file_roots[folder] = find_upwards(folder, _project_evidence, ROOT_SEARCH_DEPTH)
        return self._file_roots[folder] or self.default_root(folder)

    def _project_root(self, folder: str) -> str:
        return self._roots.root(os.path.join(folder, "_")) or folder

    def _resolve_target(self, cfg: Config, where: str) -> None:
        if self.project is not None:
            resolve_target_with(cfg.options, where, self.rules, self.project)
        else:
            resolve_target(cfg, where, self.rules)


def engine_settings(cfg: Config, rules: Sequence[Type[LintRule]], *layers: Layer, chosen: Optional[Selection] = None,
                    **flags: Any) -> Settings:
    """The engine's settings for files configured by ``cfg``, as every host builds them: the rules the
    configuration's selection and then ``layers`` (the command line's) enable, or those ``chosen`` (flake8
    keeps its own selection); the rule options with the resolved ``target-torch``; the codes whose fixes
    may be applied.  ``flags``: the host's own (``noqa``, ``fix``, ``unsafe_fixes``, ``want_edits``,
    ``project``)."""
    if chosen is None:
        chosen = resolve(rules, (cfg.select, cfg.extend_select, cfg.ignore), *layers)
    return Settings(rules=chosen.rules, parse_errors=chosen.parse_errors, options=dict(cfg.options),
                    fixable=fixable_codes(rules, cfg.fixable, cfg.unfixable), **flags)


def _project_evidence(folder: str) -> Optional[str]:
    """``folder`` when it holds a project marker or declares dependencies, else None."""
    if any(os.path.exists(os.path.join(folder, m)) for m in ROOT_MARKERS) or dependency_files(folder):
        return folder
    return None


__all__ = ["FileSettings", "SettingsResolver", "engine_settings"]
