"""The rule catalog: one module per rule, each defining one ``LintRule`` subclass.

Modules are named ``tl<code>_<name>.py``; :func:`all_rules` imports them all and returns the rules
sorted by code.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import List, Type

from torchlint.rule import LintRule

_CACHE: List[Type[LintRule]] = []


def all_rules() -> List[Type[LintRule]]:
    if not _CACHE:
        found = {}
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
            if not info.name.startswith("tl"):
                continue
            module = importlib.import_module(f"{__name__}.{info.name}")
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, LintRule)
                    and value is not LintRule
                    and value.__module__ == module.__name__
                    and value.CODE
                ):
                    if value.CODE in found:
                        raise RuntimeError(f"duplicate rule code {value.CODE}")
                    found[value.CODE] = value
        _CACHE.extend(found[c] for c in sorted(found))
    return list(_CACHE)
