"""Submodules of a model class that no code uses.

A submodule counts as used when any code of the file reads an attribute of that name (``self.head(x)``
in any method, ``model.head`` outside the class, a subclass's ``self.head``), names it in a string
(``getattr(self, "head")``, ``"head" in name``), or when the class reaches its submodules without
naming them (``getattr`` with a computed name, ``self._modules``, ``self.children()``,
``vars(self)``, ``self.__dict__``, iterating ``self.modules()`` for anything but initialisation).

Other files of the project count too (:func:`read_elsewhere`): the project's Python files and notebooks
(under its root, else beside the file) whose text spells the name are parsed, and any attribute read of
that name there (``model.aux_head(x)`` in ``train.py``) or string naming it counts as a use, except
``self.<name>`` in a class that cannot derive from the model's class (its bases resolve, through the
project, to ``nn.Module`` and classes other than it): that class's own attribute.  A notebook is
read as its code cells in order.  A file spelling the name that cannot be read or parsed, or a project
too large to list, counts as a use as well.
The file's answer then depends on those files, and on the project's file list with each file's
modification time and size (for the cache: a file that starts to read the name is seen).
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext, method_name
import os

from torchlint.analysis.program import class_body, definition_of, depends_on, is_module_value, module_class
from torchlint.analysis.project import project_of
from torchlint.analysis.walk import iter_nodes

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: attribute reads through which a class reaches its submodules without naming them
_REFLECTIVE_ATTRS = frozenset({"_modules", "__dict__", "children", "named_children", "_parameters",
                               "__getattr__", "__getattribute__"})
_ITERATE_MODULES = frozenset({"modules", "named_modules"})

class NamesRead:
    """The attribute names a file reads (not as an assignment target) and the words of its string
    literals, collected by the rule's own visitors during the engine's walk (no second pass over the
    file): :meth:`attribute` for each ``cst.Attribute``, :meth:`string` for each string literal's text."""

    __slots__ = ("names",)

    def __init__(self) -> None:
        self.names: Set[str] = set()

    def attribute(self, ctx: FileContext, node: cst.Attribute) -> None:
        parent = ctx.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
            return
        self.names.add(node.attr.value)

    def string(self, text: str) -> None:
        self.names.update(_WORD.findall(text))


def _initialisation_only(ctx: FileContext, call: cst.Call) -> bool:
    """``for m in self.modules(): if isinstance(m, nn.Linear): nn.init.zeros_(m.bias)``: a loop over the
    modules that only initialises them does not run any of them."""
    loop = ctx.parent(call)
    if not isinstance(loop, cst.For) or loop.iter is not call:
        return False
    inits = 0
    for c in ctx.calls_in(loop.body):
        names = ctx.names.qualified_names_at(c.func)
        name = method_name(c)
        if any(q.startswith("torch.nn.init.") for q in names) or (name or "").endswith("_") and not (name or "").startswith("_"):
            inits += 1
        elif isinstance(c.func, cst.Name) and c.func.value in ("isinstance", "hasattr", "type", "len", "getattr"):
            continue
        else:
            return False
    return inits > 0


def reaches_modules_by_reflection(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """Whether code of ``cls`` reaches its submodules without naming them."""
    for node in iter_nodes(cls):
        if isinstance(node, cst.Attribute) and node.attr.value in _REFLECTIVE_ATTRS:
            return True
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Name) and node.func.value in ("getattr", "setattr", "hasattr", "delattr"):
            if len(node.args) < 2 or not isinstance(node.args[1].value, cst.SimpleString):
                return True
        if isinstance(node.func, cst.Name) and node.func.value == "vars":
            return True
        if method_name(node) in _ITERATE_MODULES and not _initialisation_only(ctx, node):
            return True
    return False


#: library bases whose own code reads no submodule of a subclass by name
_PLAIN_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "pytorch_lightning.LightningModule",
                          "lightning.LightningModule", "lightning.pytorch.LightningModule"})


def _bases_in_view(ctx: FileContext, cls: cst.ClassDef, depth: int = 0) -> bool:
    """Whether all the code that may read a submodule of ``cls`` by name is in this file: every base is
    ``nn.Module`` (or a LightningModule) or a class of this file whose bases are so too.  A base from
    another file or a library may use the submodule in methods this file does not show."""
    if depth > 4:
        return False
    for base in cls.bases:
        expr = base.value
        names = ctx.names.qualified_names_at(expr)
        if names & _PLAIN_BASES:
            continue
        if names:
            return False
        found = definition_of(ctx, expr)
        if found is None or found[0] is not ctx or not isinstance(found[1], cst.ClassDef):
            return False
        if not _bases_in_view(ctx, found[1], depth + 1):
            return False
    return bool(cls.bases)


def _self_name(function: cst.FunctionDef) -> Optional[str]:
    params = list(function.params.posonly_params) + list(function.params.params)
    return params[0].name.value if params else None


def unused_submodules(ctx: FileContext, cls: cst.ClassDef, read: NamesRead) -> List[Tuple[str, cst.Assign]]:
    """``(name, assignment)`` for each submodule that ``__init__`` of the ``nn.Module`` subclass ``cls``
    builds (``self.drop = nn.Dropout(0.5)``, ``self.head = Head()`` with ``Head`` a module class) and
    that no code of the file uses (``read``: what the whole file reads, see :class:`NamesRead`).  Only classes that define ``forward`` themselves, and whose bases are
    all in view (``nn.Module``, or classes of this file built on it), are looked at: a base class from
    elsewhere may use the submodule, and a class's subclasses may live in other files.  Ask after the
    walk."""
    methods: Dict[str, cst.FunctionDef] = {
        s.name.value: s for s in class_body(cls) if isinstance(s, cst.FunctionDef)
    }
    init = methods.get("__init__")
    # the cheap questions first: the bases in view, then the names no code reads; whether a value is a
    # module may read other project files, so it is asked only of attributes nothing reads
    if init is None or "forward" not in methods or not _bases_in_view(ctx, cls) or not module_class(ctx, cls):
        return []
    me = _self_name(init)
    if me is None:
        return []
    used = read.names
    candidates: Dict[str, cst.Assign] = {}
    for a in ctx.contents(init).assigns:
        if not isinstance(a, cst.Assign) or len(a.targets) != 1:
            continue
        target = a.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == me):
            continue
        name = target.attr.value
        if name in used or name in candidates or ctx.enclosing(a, (cst.FunctionDef, cst.Lambda)) is not init:
            continue
        if is_module_value(ctx, a.value):  # nn.Buffer/nn.Parameter build tensors: not modules
            candidates[name] = a
    if not candidates or reaches_modules_by_reflection(ctx, cls):
        return []
    elsewhere = read_elsewhere(ctx, cls, set(candidates))
    return [(name, a) for name, a in candidates.items() if name not in elsewhere]


def read_elsewhere(ctx: FileContext, cls: cst.ClassDef, names: Set[str]) -> Set[str]:
    """Of ``names`` (attributes of instances of ``cls``), those another file of the project may read (see
    the module's documentation); all of them when the project's files cannot be listed."""
    path = ctx.path
    if not path or path.startswith("<") or path in ("-",) or not os.path.isfile(path):
        return set()  # text without a file: no project around it
    project = project_of(ctx)
    key, files = project.sources(path)
    depends_on(ctx, key)  # a file added, removed or written changes the answer
    if files is None:
        return set(names)
    me = os.path.abspath(path)
    out: Set[str] = set()
    for other in files:
        if other == me:
            continue
        words = project.words(other)
        spelled = names - out if words is None else (names - out) & words
        if not spelled:
            continue
        depends_on(ctx, other)
        octx = project.load(other) if words is not None else None
        if octx is None:
            out |= spelled  # a file that cannot be read or parsed: its reads are unknown
            continue
        out |= _reads_in(octx, spelled, (os.path.abspath(ctx.path), cls.name.value))
        if out >= names:
            break
    return out


def _reads_in(octx: FileContext, names: Set[str], target: Tuple[str, str]) -> Set[str]:
    """Which of ``names`` the other file ``octx`` reads as an attribute or names in a string (not a
    docstring); ``target``: the file and name of the class whose layers they are."""
    out: Set[str] = set()
    for node in iter_nodes(octx.module):
        if isinstance(node, cst.Attribute) and node.attr.value in names:
            parent = octx.parent(node)
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
                continue
            if _own_layer(octx, node, target):
                continue
            out.add(node.attr.value)
        elif isinstance(node, cst.SimpleString) and not isinstance(octx.parent(node), cst.Expr):
            out |= names & set(_WORD.findall(node.value))  # a docstring or a bare string reads nothing
        elif isinstance(node, cst.FormattedStringText):
            out |= names & set(_WORD.findall(node.value))
    return out


def _own_layer(octx: FileContext, node: cst.Attribute, target: Tuple[str, str]) -> bool:
    """``self.<name>`` in a method of a class that cannot derive from the ``target`` class: that class's
    own attribute."""
    if not isinstance(node.value, cst.Name):
        return False
    function = octx.enclosing(node, cst.FunctionDef)
    if not isinstance(function, cst.FunctionDef) or _self_name(function) != node.value.value:
        return False
    cls = octx.enclosing(function, (cst.ClassDef, cst.FunctionDef))
    return isinstance(cls, cst.ClassDef) and not _may_derive(octx, cls, target, 0)


def _may_derive(octx: FileContext, cls: cst.ClassDef, target: Tuple[str, str], depth: int) -> bool:
    """Whether ``cls`` may be a subclass of the ``target`` class: a base that is the target, or that is
    not known (a library class other than ``nn.Module``, a name not resolved), or that may be one."""
    if depth > 4:
        return True
    for base in cls.bases:
        if octx.names.qualified_names_at(base.value) & _PLAIN_BASES:
            continue
        found = definition_of(octx, base.value)
        if found is None or not isinstance(found[1], cst.ClassDef):
            return True
        if (os.path.abspath(found[0].path), found[1].name.value) == target:
            return True
        if _may_derive(found[0], found[1], target, depth + 1):
            return True
    return False


__all__ = ["NamesRead", "reaches_modules_by_reflection", "read_elsewhere", "unused_submodules"]
