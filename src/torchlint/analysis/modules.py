"""Is this value an ``nn.Module``?  Evidence from how it was built, for the module rules (direct `forward` calls, submodules in plain containers).

A value is a module when it was built by a ``torch.nn`` layer class (or a model factory of torchvision,
timm or transformers), or by a class of the file that derives from ``nn.Module`` (directly, through
same-file bases, or through an imported base named like a module: ``...Module``, ``...Model``).
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.evaluation import MODEL_BASES, module_classes
from torchlint.analysis.names import dotted_name

MODULE_FACTORIES = ("torch.nn.", "torchvision.models.", "timm.", "transformers.")
#: ``torch.nn`` names that are not modules (functions, parameters, helpers)
_NOT_MODULES = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.Parameter",
                "torch.nn.parameter.")
_MOVES = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "bfloat16", "requires_grad_"})


def is_module_class(ctx: FileContext, cls: cst.ClassDef, depth: int = 0) -> bool:
    for base in cls.bases:
        qn = ctx.names.qualified_names(base.value)
        if any(q.startswith("torch.nn.") for q in qn):
            return True
        local = module_classes(ctx).get(dotted_name(base.value) or "")
        if local is not None and depth < 5 and is_module_class(ctx, local, depth + 1):
            return True
        if not qn and local is None and MODEL_BASES.search(dotted_name(base.value) or ""):
            return True
    return False


def builds_module(ctx: FileContext, value: Optional[cst.BaseExpression]) -> bool:
    """``nn.Linear(4, 4)``, ``Block(...).to(device)``, ``torchvision.models.resnet18()``."""
    root = value
    while isinstance(root, cst.Call) and isinstance(root.func, cst.Attribute) and root.func.attr.value in _MOVES:
        root = root.func.value
    if not isinstance(root, cst.Call):
        return False
    qn = ctx.names.qualified_names(root.func)
    if qn:
        # `nn.Module()` itself is a bare base class; `nn.ModuleList`/`nn.ModuleDict` are containers of modules
        return any(q.startswith(MODULE_FACTORIES) and not q.startswith(_NOT_MODULES) and q != "torch.nn.Module"
                   for q in qn)
    cls = module_classes(ctx).get(dotted_name(root.func) or "")
    return cls is not None and is_module_class(ctx, cls)


def nn_prefix(ctx: FileContext) -> Optional[str]:
    """How the file spells ``torch.nn`` where the walk is (``nn`` or ``torch.nn``), or None."""
    for candidate, wanted in (("nn", "torch.nn"), ("torch", "torch")):
        b = ctx.names.lookup(candidate)
        if b is not None and list(b.imports) == [wanted] and not any(v is not None for v in b.values):
            return "nn" if candidate == "nn" else "torch.nn"
    return None
