"""A rule's option: its default, its documentation, the values it accepts.

Rules declare their options with it (``OPTIONS = {"name": Option(...)}``); the configuration layer and the
analysis that reads a project's settings check values against it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple


@dataclass(frozen=True)
class Option:
    """A rule option, set in ``[tool.torchlint]`` under its kebab-case name."""

    default: Any
    doc: str
    choices: Optional[Tuple[Any, ...]] = None

    def validate(self, key: str, value: Any) -> Any:
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(repr(c) for c in self.choices)
            raise ValueError(f"invalid value {value!r} for `{key}` (expected one of {allowed})")
        if self.choices is None and self.default is not None and not isinstance(value, type(self.default)):
            raise ValueError(
                f"invalid value {value!r} for `{key}` (expected {type(self.default).__name__})"
            )
        return value


__all__ = ["Option"]
