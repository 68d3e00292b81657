"""Submodules of a model class that no code uses.

A submodule counts as used when any code of the file reads an attribute of that name (``self.head(x)``
in any method, ``model.head`` outside the class, a subclass's ``self.head``), names it in a string
(``getattr(self, "head")``, ``"head" in name``), or when the class reaches its submodules without
naming them (``getattr`` with a computed name, ``self._modules``, ``self.children()``,
``vars(self)``, ``self.__dict__``, iterating ``self.modules()`` for anything but initialisation).

Other files of the project count too (:func:`read_elsewhere`): the project's Python files and notebooks
(under its root, else beside the file) whose text spells the name are parsed, and an attribute read of
that name there (``model.aux_head(x)`` in ``train.py``) counts as a use when its receiver may be an
instance of the model's class: not ``self.<name>`` in a class that cannot derive from it (its bases
resolve, through the project, to ``nn.Module`` and classes other than it), nor a name annotated with, or
only bound to, another class (a config dataclass, a tensor), a literal or a module-level constant; a
receiver not known counts.  A string counts only where it reaches an attribute by name on such a
receiver (``getattr``/``setattr``/``hasattr``/``get_submodule``, a key read from a mapping such as
``_modules`` or a state dict), not in a list, a key map or a renaming.  A notebook is
read as its code cells in order.  A file spelling the name that cannot be read or parsed, or a project
too large to list, counts as a use as well.
In every file, a read that only initialises the layer (``nn.init.zeros_(self.fc.bias)``,
``self.fc.weight.data.normal_()``, an initialising helper given it) is no use, and a read on data (a
name bound to a pandas frame, an array or a tensor a library call built) reads no layer.  A layer that
holds nothing (a loss, an activation: :func:`torchlint.analysis.effects.holds_nothing`) is never a
candidate, and a class whose ``forward`` does nothing has none.
The file's answer then depends on those files, and on the project's file list with each file's
modification time and size (for the cache: a file that starts to read the name is seen).
"""
from __future__ import annotations

import re
from typing import Dict, List, Optional, Set, Tuple

import libcst as cst

import os

from torchlint.analysis import effects
from torchlint.analysis.context import FileContext, method_name

from torchlint.analysis.definitions import class_body, definition_of, depends_on, strip_moves
from torchlint.analysis.roles import is_module_value, module_class
from torchlint.analysis.names import dotted_name
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

    __slots__ = ("names", "on_names")

    def __init__(self) -> None:
        self.names: Set[str] = set()
        #: reads on a plain name other than the ones in ``names`` (``df.drop``), decided after the walk
        self.on_names: Dict[str, List[cst.Attribute]] = {}

    def attribute(self, ctx: FileContext, node: cst.Attribute) -> None:
        parent = ctx.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
            return
        if effects.initialising_read(ctx, node):
            return  # `nn.init.zeros_(self.fc.bias)`: initialising a layer does not run it
        name = node.attr.value
        if isinstance(node.value, cst.Name) and name not in self.names:
            self.on_names.setdefault(name, []).append(node)
        else:
            self.names.add(name)

    def reads(self, ctx: FileContext, name: str, cls: Optional[cst.ClassDef] = None) -> bool:
        """Whether the file reads the attribute ``name`` on a value that may be an instance of ``cls``:
        not only on names bound to data (a frame, an array, a tensor), nor only as ``self.<name>`` in
        classes of the file that cannot derive from ``cls`` (their own layers).  Ask after the walk."""
        if name in self.names:
            return True
        target = (os.path.abspath(ctx.path), cls.name.value) if cls is not None and ctx.path else None
        return any(not effects.data_name(ctx, node.value) and not (  # type: ignore[arg-type]
            target is not None and _other_class_layer(ctx, node, cls, target))  # type: ignore[arg-type]
            for node in self.on_names.get(name, ()))

    def string(self, text: str) -> None:
        self.names.update(_WORD.findall(text))


def _other_class_layer(ctx: FileContext, node: cst.Attribute, cls: cst.ClassDef, target: Tuple[str, str]) -> bool:
    """``self.<name>`` in a method of another class of the file that cannot derive from ``cls``."""
    function = ctx.enclosing(node, cst.FunctionDef)
    owner = ctx.enclosing(function, (cst.ClassDef, cst.FunctionDef)) if function is not None else None
    return owner is not cls and owner not in _ancestors(ctx, cls) and _own_layer(ctx, node, target)


def _ancestors(ctx: FileContext, cls: cst.ClassDef) -> List[cst.ClassDef]:
    """The classes of the file ``cls`` derives from (a base's method reads the subclass's layers)."""
    out: List[cst.ClassDef] = []
    todo = [cls]
    while todo and len(out) < 8:
        for base in todo.pop().bases:
            found = definition_of(ctx, base.value)
            if found is not None and isinstance(found[1], cst.ClassDef) and found[1] not in out:
                out.append(found[1])
                todo.append(found[1])
    return out


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
    if _does_nothing(methods["forward"]):
        return []  # no forward pass at all (a skeleton, a class built to show its modules): nothing bypassed
    me = _self_name(init)
    if me is None:
        return []
    candidates: Dict[str, cst.Assign] = {}
    for a in ctx.contents(init).assigns:
        if not isinstance(a, cst.Assign) or len(a.targets) != 1:
            continue
        target = a.targets[0].target
        if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == me):
            continue
        name = target.attr.value
        if name in candidates or read.reads(ctx, name, cls) or ctx.enclosing(a, (cst.FunctionDef, cst.Lambda)) is not init:
            continue
        # nn.Buffer/nn.Parameter build tensors: not modules; a loss or an activation kept as an attribute
        # holds no parameter that could miss a gradient
        if is_module_value(ctx, a.value) and not effects.holds_nothing(ctx, a.value):
            candidates[name] = a
    if not candidates or reaches_modules_by_reflection(ctx, cls):
        return []
    elsewhere = read_elsewhere(ctx, cls, set(candidates))
    return [(name, a) for name, a in candidates.items() if name not in elsewhere]


def _does_nothing(function: cst.FunctionDef) -> bool:
    """Whether the body of ``function`` is only ``pass``, ``...``, a docstring, ``return``/``return None``
    or ``raise NotImplementedError``."""
    body = function.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for stmt in statements:
        smalls = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else (
            stmt.body if isinstance(stmt, cst.SimpleStatementSuite) else None)
        if smalls is None:
            return False
        for small in smalls:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Expr) and isinstance(small.value, (cst.Ellipsis, cst.SimpleString,
                                                                          cst.ConcatenatedString)):
                continue
            if isinstance(small, cst.Return) and (small.value is None or isinstance(small.value, cst.Name)
                                                  and small.value.value == "None"):
                continue
            if isinstance(small, cst.Raise) and small.exc is not None and "NotImplementedError" in (
                    dotted_name(small.exc.func if isinstance(small.exc, cst.Call) else small.exc) or ""):
                continue
            return False
    return True


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
    kin: Optional[_Kin] = None
    kin_names: Optional[Set[str]] = None
    for other in files:
        if other == me:
            continue
        words = project.words(other)
        spelled = names - out if words is None else (names - out) & words
        if not spelled:
            continue
        depends_on(ctx, other)
        if words is not None:
            if kin_names is None:
                kin_names = _subclass_names(project, files, cls.name.value)
            if not _may_read(project.module_text(other), spelled, kin_names):
                continue  # no read the parse could find: not parsed
        octx = project.load(other) if words is not None else None
        if octx is None:
            out |= spelled  # a file that cannot be read or parsed: its reads are unknown
            continue
        if kin is None:
            kin = _Kin(ctx, cls)
        out |= _reads_in(octx, spelled, (os.path.abspath(ctx.path), cls.name.value), kin)
        if out >= names:
            break
    return out


_CLASS_HEADER = re.compile(r"\bclass\s+(\w+)\s*\((.*?)\)\s*:", re.DOTALL)


def _subclass_names(project, files: Tuple[str, ...], name: str) -> Set[str]:
    """``name`` and the names of the classes of the project's files whose class statement names it or one
    of them among its bases, by text (an over-estimate of the class and its subclasses)."""
    headers: List[Tuple[str, Set[str]]] = []
    for f in files:
        text = project.module_text(f)
        if text is None or "class" not in text:
            continue
        for m in _CLASS_HEADER.finditer(text):
            headers.append((m.group(1), set(_WORD.findall(m.group(2)))))
    kin = {name}
    grew = True
    while grew:
        grew = False
        for cname, bases in headers:
            if cname not in kin and bases & kin:
                kin.add(cname)
                grew = True
    return kin


#: where a string may name an attribute the way :func:`_names_by_string` counts: a subscript's key, the name
#: argument of ``getattr``/``setattr``/``hasattr``/``delattr``, or of ``get_submodule`` and its kin; up to
#: the string's opening quote (a docstring or a message that spells the name reads nothing)
_STRING_READ = (r"(?:\[\s*|\b(?:getattr|setattr|hasattr|delattr)\s*\([^\'\"]*?,\s*"
                r"|\b(?:get_submodule|get_parameter|get_buffer)\s*\(\s*)[rRbBfFuU]{0,2}[\'\"]")


def _may_read(text: Optional[str], names: Set[str], kin: Set[str]) -> bool:
    """Whether the text of another file may read one of ``names`` the way :func:`_reads_in` counts: an
    attribute of a value other than ``self``, a string spelling it, or ``self.<name>`` in a file that
    spells the class or a subclass of it (by :func:`_subclass_names`).  True when the text is unknown."""
    if text is None:
        return True
    words = "|".join(re.escape(n) for n in sorted(names))
    own = False
    # `x.name` with the dot on the receiver's line (a sentence ending in a period and a word on the next
    # line is prose), or `.name` opening a line of a chained expression (its receiver is unknown here)
    for m in re.finditer(r"([\w)\]]*)[ \t]*\.[ \t]*(?:" + words + r")\b", text):
        if m.group(1) != "self":
            return True
        own = True
    if re.search(r"^[ \t]*\.[ \t]*(?:" + words + r")\b", text, re.MULTILINE):
        return True
    if re.search(_STRING_READ + r"[^\'\"\n]*\b(?:" + words + r")\b", text):
        return True
    return own and any(re.search(r"\b" + re.escape(k) + r"\b", text) for k in kin)


def _reads_in(octx: FileContext, names: Set[str], target: Tuple[str, str], kin: "_Kin") -> Set[str]:
    """Which of ``names`` the other file ``octx`` reads as an attribute of a value that may be an
    instance of the class, or names in a string that reaches an attribute or a state dict by name;
    ``target``: the file and name of the class whose layers they are; ``kin``: its ancestors."""
    out: Set[str] = set()
    for node in iter_nodes(octx.module):
        if isinstance(node, cst.Attribute) and node.attr.value in names:
            parent = octx.parent(node)
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
                continue
            if _own_layer(octx, node, target) or _other_receiver(octx, node.value, target, kin) \
                    or effects.initialising_read(octx, node):
                continue
            out.add(node.attr.value)
        elif isinstance(node, (cst.SimpleString, cst.FormattedString)):
            spelled = names & set(_WORD.findall(octx.code(node)))
            if spelled and _names_by_string(octx, node, target, kin):
                out |= spelled
    return out


#: functions and methods whose string argument names an attribute or a submodule of an object
_BY_NAME_FUNCTIONS = frozenset({"getattr", "setattr", "hasattr", "delattr"})
_BY_NAME_METHODS = frozenset({"get_submodule", "get_parameter", "get_buffer"})


def _names_by_string(octx: FileContext, string: cst.BaseExpression, target: Tuple[str, str], kin: "_Kin") -> bool:
    """Whether the string ``string`` reaches an attribute by name: the name argument of ``getattr``,
    ``setattr``, ``hasattr``, ``delattr`` or ``get_submodule``, or a key read from a mapping
    (``m._modules["head"]``, ``state["head.weight"]``), on a value that may be an instance of the class
    or its state (:func:`_other_receiver`).  A string in a list, a dict literal, a key
    renaming (``.replace(...)``) or written into a mapping only names it."""
    node: cst.CSTNode = string
    parent = octx.parent(node)
    while isinstance(parent, cst.ConcatenatedString):
        node, parent = parent, octx.parent(parent)
    if isinstance(parent, cst.Arg):
        call = octx.parent(parent)
        if not isinstance(call, cst.Call):
            return False
        if isinstance(call.func, cst.Name) and call.func.value in _BY_NAME_FUNCTIONS:
            return len(call.args) > 1 and call.args[1] is parent \
                and not _other_receiver(octx, call.args[0].value, target, kin)
        return method_name(call) in _BY_NAME_METHODS \
            and not _other_receiver(octx, call.func.value, target, kin)  # type: ignore[attr-defined]
    if isinstance(parent, cst.Index):
        element = octx.parent(parent)
        subscript = octx.parent(element) if element is not None else None
        if not isinstance(subscript, cst.Subscript):
            return False
        holder = octx.parent(subscript)
        if isinstance(holder, (cst.AssignTarget, cst.AugAssign)) and holder.target is subscript:
            return False  # `new_state["head.weight"] = ...`: written, not read
        if isinstance(holder, cst.Del):
            return False
        return not _other_receiver(octx, subscript.value, target, kin)
    return False


class _Kin:
    """The classes an instance of the target class also is: its project ancestors (file, name), the
    library classes among its ancestors (qualified names), and whether all of them are known."""

    __slots__ = ("project", "library", "known")

    def __init__(self, ctx: FileContext, cls: cst.ClassDef) -> None:
        self.project: Set[Tuple[str, str]] = set()
        self.library: Set[str] = set()
        self.known = True
        self._walk(ctx, cls, 0)

    def _walk(self, ctx: FileContext, cls: cst.ClassDef, depth: int) -> None:
        if depth > 6:
            self.known = False
            return
        for base in cls.bases:
            q = ctx.names.qualified_names_at(base.value)
            found = definition_of(ctx, base.value)
            if found is not None and isinstance(found[1], cst.ClassDef):
                self.project.add((os.path.abspath(found[0].path), found[1].name.value))
                self._walk(found[0], found[1], depth + 1)
            elif q:
                self.library |= q
            else:
                self.known = False


#: builtin types a value annotated with cannot be a module
_BUILTIN_TYPES = frozenset({"int", "float", "str", "bool", "bytes", "dict", "list", "tuple", "set", "frozenset"})


def _other_receiver(octx: FileContext, recv: cst.BaseExpression, target: Tuple[str, str], kin: _Kin) -> bool:
    """Whether the value ``recv`` (whose attribute is read) is known to be no instance of the ``target``
    class: a name annotated with, or only ever bound to an instance of, a class that is neither the
    target, a class that may derive from it, nor one of its ancestors (a dataclass or config object, a
    tensor), or to a literal (a module-level constant, a dict).  Unknown receivers are not."""
    if isinstance(recv, (cst.Call, cst.Subscript)):
        return effects.data_value(octx, recv) or isinstance(recv, cst.Call) and _other_value(octx, recv, target, kin)
    if isinstance(recv, cst.Attribute):
        found = effects.self_attr(octx, recv)
        if found is None:
            return False
        try:
            values = effects.self_values(octx, *found)
        except effects.Unknown:
            return False
        return bool(values) and all(_other_value(octx, v, target, kin) for v in values)
    if not isinstance(recv, cst.Name):
        return False
    b = octx.names.binding_at(recv, recv.value)
    if b is None or b.imports or b.changed or not b.values:
        return False
    if any(v is None for v in b.values):
        if len(b.values) != 1:
            return False
        function = octx.enclosing(recv, (cst.FunctionDef, cst.Lambda))
        param = _param_named(function, recv.value) if isinstance(function, cst.FunctionDef) else None
        if param is None or param.annotation is None:
            return False
        return _other_class(octx, param.annotation.annotation, target, kin)
    return all(_other_value(octx, v, target, kin) for v in b.values)  # type: ignore[arg-type]


def _param_named(function: cst.FunctionDef, name: str) -> Optional[cst.Param]:
    p = function.params
    for param in list(p.posonly_params) + list(p.params) + list(p.kwonly_params):
        if param.name.value == name:
            return param
    return None


def _other_value(octx: FileContext, value: cst.BaseExpression, target: Tuple[str, str], kin: _Kin) -> bool:
    if isinstance(value, (cst.Dict, cst.List, cst.Tuple, cst.Set, cst.SimpleString, cst.ConcatenatedString,
                          cst.FormattedString, cst.Integer, cst.Float, cst.DictComp, cst.ListComp, cst.SetComp)):
        return True
    value = strip_moves(value)
    if effects.data_value(octx, value):
        return True  # a frame, an array, a tensor: `df.drop(columns=...)` reads no layer
    if isinstance(value, cst.Call):
        found = definition_of(octx, value.func)
        if found is not None and isinstance(found[1], cst.ClassDef):
            return not _related(found[0], found[1], target, kin)
    return False


def _other_class(octx: FileContext, annotation: cst.BaseExpression, target: Tuple[str, str], kin: _Kin) -> bool:
    """Whether an annotation names one class that an instance of the target class cannot be."""
    if not isinstance(annotation, (cst.Name, cst.Attribute)):
        return False  # `Optional[...]`, a string, a union: not followed
    found = definition_of(octx, annotation)
    if found is not None and isinstance(found[1], cst.ClassDef):
        return not _related(found[0], found[1], target, kin)
    q = octx.names.qualified_names_at(annotation)
    if q:
        if not kin.known or any(n.startswith(("typing.", "typing_extensions.", "builtins.", "collections.abc."))
                                for n in q):
            return False
        return not (q & kin.library or q & _PLAIN_BASES)
    return isinstance(annotation, cst.Name) and annotation.value in _BUILTIN_TYPES \
        and octx.names.binding_at(annotation, annotation.value) is None


def _related(octx: FileContext, cls: cst.ClassDef, target: Tuple[str, str], kin: _Kin) -> bool:
    """Whether an instance of ``cls`` may be an instance of the target class: ``cls`` is it, may derive
    from it, or is one of its ancestors (or those are not all known)."""
    me = (os.path.abspath(octx.path), cls.name.value)
    return me == target or me in kin.project or not kin.known or _may_derive(octx, cls, target, 0)


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


#: whether a layer holds no parameter (for the message), from the table of library effects
parameter_free = effects.parameter_free

__all__ = ["NamesRead", "parameter_free", "reaches_modules_by_reflection", "read_elsewhere", "unused_submodules"]
