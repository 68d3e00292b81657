"""Small helpers the API-migration rules (TL5) share to build their fixes."""
from __future__ import annotations

import libcst as cst

from torchlint.analysis.context import FileContext


def torch_in_scope(ctx: FileContext, root: str = "torch") -> bool:
    """True when the name ``root`` (``torch``) is bound, where the walk is, to that module and nothing else,
    so a fix may write ``torch.<...>``."""
    b = ctx.names.lookup(root)
    return b is not None and list(b.imports) == [root] and not any(v is not None for v in b.values)


def literal_value(expr: cst.BaseExpression) -> object:
    """``True``/``False``/``None`` -> the Python value; anything else -> the sentinel ``UNKNOWN``."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[expr.value]
    return UNKNOWN


class _Unknown:
    def __repr__(self) -> str:  # pragma: no cover
        return "UNKNOWN"


UNKNOWN = _Unknown()

