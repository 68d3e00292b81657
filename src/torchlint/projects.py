"""Each file uses its nearest configuration (as ruff does): in a monorepo, ``pkgA/a.py`` follows
``pkgA/pyproject.toml`` and ``pkgB/b.py`` follows ``pkgB/pyproject.toml``, whatever the order of the
paths on the command line.  ``--config`` and ``--isolated`` give every file the one configuration."""
from __future__ import annotations

import os
from typing import Dict, Optional, Sequence, Tuple, Type

from torchlint.config import Config, ConfigError, find_config, load_config, parse_table, resolve_target
from torchlint.rule import LintRule


class ConfigResolver:
    def __init__(self, rules: Sequence[Type[LintRule]], fixed: Optional[Config] = None) -> None:
        self.rules = rules
        self.fixed = fixed
        self._by_dir: Dict[str, Config] = {}
        self._by_file: Dict[str, Config] = {}

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
                cfg = Config(root=os.getcwd())
                resolve_target(cfg, folder, self.rules)
                key = repr(sorted(cfg.options.items()))
                cfg = self._by_file.setdefault(key, cfg)
            else:
                cfg = self._by_file.get(found[0])
                if cfg is None:
                    cfg = parse_table(found[1], found[0], self.rules)
                    resolve_target(cfg, found[0], self.rules)
                    self._by_file[found[0]] = cfg
            self._by_dir[folder] = cfg
        return cfg

    def for_path(self, path: str) -> Config:
        return self.for_dir(path if os.path.isdir(path) else (os.path.dirname(os.path.abspath(path)) or "."))


def fixed_config(isolated: bool, config_path: Optional[str], start: str, rules: Sequence[Type[LintRule]]) -> Optional[Config]:
    """The one configuration for every file (``--isolated`` or ``--config``), else None."""
    if isolated:
        return Config(root=os.getcwd())
    if config_path is not None:
        return load_config(config_path, start, rules)
    return None


def group_by_config(paths: Sequence[str], resolver: ConfigResolver) -> Dict[int, Tuple[Config, list]]:
    """Files grouped by the configuration object that applies to them (id -> (config, files))."""
    groups: Dict[int, Tuple[Config, list]] = {}
    for p in paths:
        cfg = resolver.for_path(p)
        groups.setdefault(id(cfg), (cfg, []))[1].append(p)
    return groups


__all__ = ["ConfigError", "ConfigResolver", "fixed_config", "group_by_config"]
