"""What the spelling of an identifier says: ``snake`` case of a CamelCase name, and whether a name is
spelled like a model (``model``, ``net``, ``model_ema``).  The spelling is weak evidence: the analysis
asks it only where how a value is built cannot tell.
"""
from __future__ import annotations

import re
from functools import lru_cache

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@lru_cache(maxsize=4096)
def snake(name: str) -> str:
    return _CAMEL_BOUNDARY.sub("_", name).lower()


_MODEL_NOUN = re.compile(
    r"(model|models|net|network|classifier|encoder|decoder|backbone|generator|discriminator|detector|"
    r"segmenter|policy|critic|actor|teacher|student)\d*|[a-z]*net\d*|net[a-z]"
)
#: words that may follow the noun in a model's name (`model_ema`, `net_g`, `model_without_ddp`)
_MODEL_SUFFIX = frozenset(
    {"ema", "ddp", "dp", "without", "fp16", "fp32", "bf16", "half", "eval", "train", "orig", "raw", "wrapped",
     "unwrapped", "copy", "old", "new", "g", "d", "a", "b", "c", "s", "t", "q", "v", "pi", "target", "online",
     "base", "ft", "cpu", "gpu", "cuda", "jit", "scripted", "traced", "compiled", "quantized", "int8"}
)


@lru_cache(maxsize=4096)
def is_model_name(name: str) -> bool:
    """``model``, ``net``, ``base_model``, ``model_ema``, ``netG``, ``resnet50``, ``self.encoder`` (the last
    segment); not ``compare_model_with_input`` or ``model_step``: a function, not a model."""
    tokens = [t for t in snake(name).split("_") if t]
    if not tokens:
        return False
    if _MODEL_NOUN.fullmatch(tokens[-1]):
        return True
    return bool(_MODEL_NOUN.fullmatch(tokens[0])) and all(t in _MODEL_SUFFIX or t.isdigit() for t in tokens[1:])


__all__ = ["is_model_name", "snake"]
