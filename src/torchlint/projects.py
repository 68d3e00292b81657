"""Each file uses its nearest configuration (as ruff does): in a monorepo, ``pkgA/a.py`` follows
``pkgA/pyproject.toml`` and ``pkgB/b.py`` follows ``pkgB/pyproject.toml``, whatever the order of the
paths on the command line.  ``--config`` and ``--isolated`` give every file the one configuration."""
from __future__ import annotations

import os
from typing import Dict, Optional, Sequence, Tuple, Type

from torchlint.config import Config, ConfigError, load_config
from torchlint.file_settings import SettingsResolver
from torchlint.rule import LintRule


class ConfigResolver(SettingsResolver):
    """The command line's resolver: a folder without a configuration file keeps its cache in the folder
    the command was started from; the settings themselves, and the root their paths are relative to,
    are found from each file (only a file in no project at all falls back to that folder)."""

    def __init__(self, rules: Sequence[Type[LintRule]], fixed: Optional[Config] = None) -> None:
        super().__init__(rules, fixed, default_root=lambda folder: os.getcwd())


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
