"""Submodules of a model class that no code uses.

A submodule counts as used when a method of its class (or of a base or a subclass) reads ``self.<name>``,
when code reads the attribute on a value that may be an instance of the class (``model.head`` outside
the class, a helper's parameter), when a string reaches it by name (``getattr(model, "head")``, a key of
``m._modules``, ``name.startswith("head")`` over ``named_parameters()``), or when the class reaches its
submodules without naming them (``getattr`` with a computed name, ``self._modules``, ``self.children()``,
``vars(self)``, ``self.__dict__``, iterating ``self.modules()`` for anything but initialisation) on the
instance itself (not on a library model it builds).  The same tests apply in the file and in the others.

Other files of the project count too (:func:`read_elsewhere`): the project's Python files and notebooks
(under its root, else beside the file) whose text spells the name are parsed, and an attribute read of
that name there (``model.aux_head(x)`` in ``train.py``) counts as a use when its receiver may be an
instance of the model's class: not ``self.<name>`` in a class that cannot derive from it (its bases
resolve, through the project, to ``nn.Module`` and classes other than it), nor a name annotated with, or
only bound to, another class (a config dataclass, a tensor), a literal or a module-level constant; a
receiver not known counts, while a library module (``F.dropout``), a constructor's parameter that every
construction fills with such a value (:func:`_arguments`), and a value read in the same function for an
attribute no instance of the class can have (``config.n_embd`` beside ``config.dropout``:
:meth:`_View.lacks`) do not.  A string counts only where it reaches an attribute by name on such a
receiver (``getattr``/``setattr``/``get_submodule``, a helper's parameter given to one of those, a key
read from a mapping of members such as ``_modules``, a dotted key of a state dict), not in a docstring, a
message, a list, a dict literal, a key map, a renaming, an options mapping or a ``hasattr`` test (it asks
whether the layer is there; it does not run it).  A notebook is
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
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

import libcst as cst

import os

from torchlint.analysis import effects
from torchlint.analysis.context import Fact, FileContext, arg, method_name
from torchlint.analysis.mode_layers import DROPOUT_LAYERS, MODE_FREE_LAYERS

from torchlint.analysis.definitions import (bind_arguments, class_body, constructions, definition_of, depends_on,
                                            strip_moves)
from torchlint.analysis.roles import is_module_value, module_class
from torchlint.analysis.names import dotted_name
from torchlint.analysis.ops import moves_itself
from torchlint.analysis.project import project_of
from torchlint.analysis.walk import iter_nodes

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: attribute reads through which a class reaches its submodules without naming them
_REFLECTIVE_ATTRS = frozenset({"_modules", "__dict__", "children", "named_children", "_parameters",
                               "__getattr__", "__getattribute__"})
_ITERATE_MODULES = frozenset({"modules", "named_modules"})
#: the public attributes of every ``torch.nn.Module`` (``dir(nn.Module)`` and an instance's own), which a
#: read on an instance may reach whatever its class sets
_MODULE_API = frozenset({
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu",
    "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state",
    "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers",
    "named_children", "named_modules", "named_parameters", "parameters", "register_backward_hook",
    "register_buffer", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty",
    "train", "training", "type", "xpu", "zero_grad"})
#: the qualified names of ``torch.nn.Module`` itself
_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
#: methods whose results name an instance's members: iterating one and comparing a name with a string
#: (``name.startswith("head")``) reaches the member by its name
_MEMBER_ITERATORS = frozenset({"named_parameters", "named_modules", "named_children", "named_buffers",
                               "state_dict"})
#: mappings of an instance's members, keyed by the member's name (``m._modules["head"]``)
_MEMBER_MAPPINGS = frozenset({"_modules", "__dict__", "_parameters", "_buffers"})
#: library calls that may return any object (a copy or a load of the instance itself)
_ANY_OBJECT = ("copy.", "pickle.", "joblib.", "dill.", "cloudpickle.", "torch.load", "torch.jit.", "torch.hub.",
               "torch.compile", "hydra.", "builtins.")

class NamesRead:
    """The attribute reads of a file (not as an assignment target, nor only initialising a layer) and its
    string literals, by the name they spell, collected by the rule's own visitors during the engine's walk
    (no second pass over the file): :meth:`attribute` for each ``cst.Attribute``, :meth:`string` for each
    string literal.  Which of them read a layer of a given class is decided after the walk (:meth:`reads`):
    a read on a value that may be an instance of the class, a string that reaches an attribute by name."""

    __slots__ = ("attributes", "strings", "assigned", "_views", "_by_receiver")

    def __init__(self) -> None:
        self.attributes: Dict[str, List[cst.Attribute]] = {}
        self.strings: Dict[str, List[cst.BaseExpression]] = {}
        #: attribute names written anywhere in the file (``cfg.size = 3``): an object may have them
        self.assigned: Set[str] = set()
        self._views: Dict[cst.ClassDef, "_View"] = {}
        #: the reads by the dotted spelling of their receiver (``config.model``), built on first use
        self._by_receiver: Optional[Dict[str, List[cst.Attribute]]] = None

    def attribute(self, ctx: FileContext, node: cst.Attribute) -> None:
        parent = ctx.parent(node)
        if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
            self.assigned.add(node.attr.value)
            return
        if effects.initialising_read(ctx, node):
            return  # `nn.init.zeros_(self.fc.bias)`: initialising a layer does not run it
        if _tested_only(ctx, node):
            return  # `if self.norm:`, `if self.norm is not None:`: asking whether it is there does not run it
        if _deep_copied(ctx, node):
            return  # `copy.deepcopy(self.block)`: the copy has parameters of its own; the block itself does not run
        self.attributes.setdefault(node.attr.value, []).append(node)

    def string(self, node: cst.BaseExpression, text: str) -> None:
        for word in set(_WORD.findall(text)):
            self.strings.setdefault(word, []).append(node)

    def reads(self, ctx: FileContext, name: str, cls: cst.ClassDef, built: Optional[cst.Assign] = None) -> bool:
        """Whether the file reads the attribute ``name`` on a value that may be an instance of ``cls``
        (:meth:`_View.counts`), or names it in a string that reaches an attribute by name
        (:func:`_names_by_string`).  With ``built`` (the assignment of ``__init__`` that builds the layer),
        a read of ``self.<name>`` in that function that runs before it reads what the attribute held
        before (``self.dropout = p`` read as ``nn.Dropout(self.dropout)``, then rebound to the layer).  Ask
        after the walk."""
        attributes = self.attributes.get(name, ())
        strings = self.strings.get(name, ())
        if not attributes and not strings:
            return False
        view = self.view(ctx, cls)
        if built is not None:
            attributes = [node for node in attributes if not _read_before(ctx, node, built)]
        return any(view.counts(node) for node in attributes) or any(
            _names_by_string(ctx, node, name, view.target, view.kin) for node in strings)

    def view(self, ctx: FileContext, cls: cst.ClassDef) -> "_View":
        """The reads of the file as they may reach the layers of ``cls`` (made once per class)."""
        view = self._views.get(cls)
        if view is None:
            view = self._views[cls] = _View(ctx, cls, self)
        return view

    def by_receiver(self, spelled: str) -> List[cst.Attribute]:
        """The attribute reads of the file whose receiver is spelled ``spelled`` (a name or a dotted
        path of names)."""
        if self._by_receiver is None:
            self._by_receiver = {}
            for nodes in self.attributes.values():
                for node in nodes:
                    key = dotted_name(node.value)
                    if key is not None:
                        self._by_receiver.setdefault(key, []).append(node)
        return self._by_receiver.get(spelled, [])


class _View:
    """One class of the file whose layers are asked about: the reads of the file that may reach them."""

    __slots__ = ("ctx", "cls", "read", "target", "kin", "_mine", "_members")

    def __init__(self, ctx: FileContext, cls: cst.ClassDef, read: NamesRead) -> None:
        self.ctx = ctx
        self.cls = cls
        self.read = read
        self.target = (os.path.abspath(ctx.path) if ctx.path else "<text>", cls.name.value)
        self.kin = _Kin(ctx, cls)
        #: the classes of the file whose ``self`` is an instance of ``cls``: it and its ancestors
        self._mine = [cls] + _ancestors(ctx, cls)
        self._members: Optional[Set[str]] = None  # computed on first use: :meth:`members`

    def counts(self, node: cst.Attribute) -> bool:
        """Whether the read ``node`` (``<receiver>.<name>``) may read the layer of an instance of the class:
        not ``self.<name>`` in a class that cannot derive from it (its own attribute), nor a read on a
        value known to be something else (data, a literal, an instance of another class: directly, or as
        every argument its parameter is given: :func:`_other_receiver`), nor on a value that has an
        attribute no instance of the class has (:meth:`lacks`)."""
        ctx, recv = self.ctx, node.value
        if _hyperparameter(ctx, node):
            return False  # `nn.Dropout(cfg.drop)`, `Attn(cfg.dim, p=cfg.drop)`: a number a layer is built with
        if isinstance(recv, cst.Name):
            function = ctx.enclosing(node, cst.FunctionDef)
            if isinstance(function, cst.FunctionDef) and _self_name(function) == recv.value \
                    and ctx.enclosing(function, (cst.ClassDef, cst.FunctionDef)) in self._mine:
                return True  # `self.<name>` in the class or one of its bases
            if effects.data_name(ctx, recv) or _other_class_layer(ctx, node, self.cls, self.target):
                return False
        if _other_receiver(ctx, recv, self.target, self.kin):
            return False
        return not self.lacks(recv)

    def lacks(self, recv: cst.BaseExpression) -> bool:
        """Whether the value ``recv`` (a name, or a dotted path of names: ``config.model``) is read, in the
        same function and without a guard, for an attribute that no instance of the class can have (not
        set on it, not in its class body or its bases' in the file, not ``nn.Module``'s, not written on any
        object of the file): ``config.n_embd`` beside ``config.dropout`` says that ``config`` is no
        instance of a block whose attributes are ``c_fc`` and ``dropout``.  The name must be bound once
        there (a parameter or one assignment), and the attributes of every class the instance may be
        known (no subclass in another file, no reflection, no library base other than ``nn.Module``)."""
        def may_have(attr: str) -> Optional[bool]:
            if attr in self.read.assigned:
                return True
            members = self.members()
            if members is None:
                return None
            return attr in members or _set_by_name(self.ctx, self.read, attr)

        return _read_for_another_attribute(self.ctx, recv, lambda spelled, scope: self.read.by_receiver(spelled),
                                           may_have)

    def members(self) -> Optional[Set[str]]:
        """The attribute names an instance of the class may have beyond ``nn.Module``'s: set on ``self``
        or named in the class body of the class, its bases and its subclasses in the file; None when
        they cannot be known (a library base other than ``nn.Module``, a subclass in another file,
        reflection, ``__getattr__``)."""
        if self._members is not None:
            return self._members or None
        self._members = set()
        ctx = self.ctx
        if not self.kin.known or self.kin.library - _MODULE_BASES:
            return None
        family = list(self._mine) + _subclasses_in_file(ctx, self.cls)
        if _subclassed_elsewhere(ctx, self.cls, {c.name.value for c in family}):
            return None
        out: Set[str] = set()
        for cls in family:
            if reaches_modules_by_reflection(ctx, cls):
                return None
            for stmt in class_body(cls):
                for node in iter_nodes(stmt):
                    if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is stmt:
                        out.add(node.name.value)
                    elif isinstance(node, cst.Name) and node is not stmt and ctx.enclosing(
                            node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) is cls:
                        out.add(node.value)  # a class attribute, and any name of the class body
                    elif isinstance(node, cst.Attribute) and _on_self_or_written(ctx, node):
                        out.add(node.attr.value)  # read or set on `self`, or set on any value in the class
        if "__getattr__" in out or "__getattribute__" in out:
            return None
        self._members = out
        return out


#: torch.nn layers built from settings only (sizes, rates, flags), never from another module
_LEAF_LAYERS = MODE_FREE_LAYERS | frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d",
                                            "InstanceNorm2d", "InstanceNorm3d", "LSTM", "GRU", "RNN",
                                            "MultiheadAttention"}) | DROPOUT_LAYERS


def _hyperparameter(ctx: FileContext, node: cst.Attribute, depth: int = 0) -> bool:
    """Whether the read ``node`` is handed, as an argument, to a torch.nn layer's constructor (not a
    container's: ``nn.Dropout(cfg.drop)``), or to a parameter of a project module class's constructor that
    its ``__init__`` hands only to such constructors (``Attn(cfg.dim, p=cfg.drop)`` with
    ``self.drop = nn.Dropout(p)``): a setting a layer is built with, which no layer can be."""
    parent = ctx.parent(node)
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) and parent.value is node else None
    if not isinstance(call, cst.Call) or parent.star:  # type: ignore[union-attr]
        return False
    return _layer_setting(ctx, call, parent, depth)  # type: ignore[arg-type]


def _layer_setting(ctx: FileContext, call: cst.Call, given: cst.Arg, depth: int) -> bool:
    names = ctx.names.qualified_names_at(call.func)
    if names:
        return all(q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in _LEAF_LAYERS for q in names)
    if depth > 1:
        return False
    found = definition_of(ctx, call.func)
    if found is None or not isinstance(found[1], cst.ClassDef) or found[0] is not ctx:
        return False
    init = next((s for s in class_body(found[1]) if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None:
        return False
    bound = bind_arguments(call, init, 1)
    param = next((name for name, value in (bound or {}).items() if value is given.value), None)
    if param is None:
        return False
    uses = ctx.names_in(init.body, param)
    if not uses:
        return False
    for use in uses:
        holder = ctx.parent(use)
        inner = ctx.parent(holder) if isinstance(holder, cst.Arg) and holder.value is use else None
        if not isinstance(inner, cst.Call) or holder.star or not _layer_setting(ctx, inner, holder, depth + 1):  # type: ignore[union-attr]
            return False
    return True


def _read_before(ctx: FileContext, node: cst.Attribute, built: cst.Assign) -> bool:
    """Whether the read ``node`` of ``self.<name>`` runs before the assignment ``built`` of the same
    function binds the layer, on every pass: in its value (evaluated before the binding), or earlier in the
    function and in no loop with it."""
    function = ctx.enclosing(built, cst.FunctionDef)
    if function is None or ctx.enclosing(node, (cst.FunctionDef, cst.Lambda)) is not function:
        return False  # (a lambda or a nested function runs later: `lambda h: self.drop(h)`)
    target = built.targets[0].target if len(built.targets) == 1 else None
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
            and isinstance(node.value, cst.Name) and node.value.value == target.value.value):
        return False
    if ctx.is_inside(node, built.value):
        return True
    return not ctx.may_run_before(built, node)


def _deep_copied(ctx: FileContext, node: cst.Attribute) -> bool:
    """``copy.deepcopy(self.block)``: the read only hands the layer to a deep copy."""
    parent = ctx.parent(node)
    call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
    return isinstance(call, cst.Call) and len(call.args) == 1 and call.args[0] is parent \
        and ctx.names.matches(call.func, frozenset({"copy.deepcopy"}))


def _tested_only(ctx: FileContext, node: cst.Attribute) -> bool:
    """Whether the read ``node`` only asks whether the attribute holds something: the whole test of an
    ``if``/``while``/conditional expression, the operand of ``not``, or compared with ``None`` by identity."""
    parent = ctx.parent(node)
    if isinstance(parent, (cst.If, cst.While, cst.IfExp)):
        return parent.test is node
    if isinstance(parent, cst.UnaryOperation):
        return isinstance(parent.operator, cst.Not)
    if isinstance(parent, cst.Comparison) and parent.left is node and len(parent.comparisons) == 1:
        only = parent.comparisons[0]
        return isinstance(only.operator, (cst.Is, cst.IsNot)) and isinstance(only.comparator, cst.Name) \
            and only.comparator.value == "None"
    return False


def _on_self_or_written(ctx: FileContext, node: cst.Attribute) -> bool:
    """Whether ``node`` is read or set on the ``self`` of its method, or set on any value."""
    parent = ctx.parent(node)
    if isinstance(parent, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor)) \
            and parent.target is node or isinstance(parent, (cst.Element, cst.StarredElement, cst.AsName)):
        return True  # set, or perhaps unpacked into (any element of a tuple or list counts)
    function = ctx.enclosing(node, cst.FunctionDef)
    return isinstance(node.value, cst.Name) and isinstance(function, cst.FunctionDef) \
        and _self_name(function) == node.value.value


def _guarded(ctx: FileContext, node: cst.CSTNode, scope: cst.CSTNode) -> bool:
    """Whether ``node`` runs only under a condition or a handler inside ``scope``: in the branch of an
    ``if`` (or a conditional expression, the right of ``and``/``or``, a comprehension's filter), the body of
    a ``while`` or a ``try``, a nested function."""
    child: cst.CSTNode = node
    for a in ctx.ancestors(node):
        if a is scope:
            return False
        if isinstance(a, (cst.If, cst.IfExp, cst.While)) and child is not a.test:
            return True
        if isinstance(a, cst.BooleanOperation) and child is a.right:
            return True
        if isinstance(a, (cst.Try, cst.TryStar, cst.CompIf, cst.FunctionDef, cst.Lambda)):
            return True
        child = a
    return True


def _set_by_name(ctx: FileContext, read: NamesRead, attr: str) -> bool:
    """Whether a string of the file spelling ``attr`` sets or registers an attribute by name
    (``setattr(obj, "size", 3)``, ``self.register_buffer("size", ...)``)."""
    for node in read.strings.get(attr, ()):
        parent = ctx.parent(node)
        call = ctx.parent(parent) if isinstance(parent, cst.Arg) else None
        if isinstance(call, cst.Call) and (
                isinstance(call.func, cst.Name) and call.func.value == "setattr"
                or method_name(call) in ("register_buffer", "register_parameter", "add_module", "register_module")):
            return True
    return False


def _subclasses_in_file(ctx: FileContext, cls: cst.ClassDef) -> List[cst.ClassDef]:
    """The classes of the file that derive from ``cls``, directly or through each other."""
    out: List[cst.ClassDef] = []
    family = [cls]
    classes = [node for node in iter_nodes(ctx.module) if isinstance(node, cst.ClassDef) and node.bases]
    grew = True
    while grew and len(out) < 32:
        grew = False
        for node in classes:
            if node not in family and any(a in family for a in _ancestors(ctx, node)):
                family.append(node)
                out.append(node)
                grew = True
    return out


def may_be_subclassed(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """Whether a class of the file, or (by the text of its class statements) of another project file,
    may derive from ``cls``: a method of ``cls`` may then run overridden."""
    family = [cls] + _subclasses_in_file(ctx, cls)
    return len(family) > 1 or _subclassed_elsewhere(ctx, cls, {cls.name.value})


def _subclassed_elsewhere(ctx: FileContext, cls: cst.ClassDef, here: Set[str]) -> bool:
    """Whether a class of another project file may derive from ``cls`` (by the text of the class
    statements, as :func:`_subclass_names`): ``here``, the names of the class and its kin in this file.
    True when the project's files cannot be listed."""
    path = ctx.path
    if not path or path.startswith("<") or path in ("-",) or not os.path.isfile(path):
        return False
    project = project_of(ctx)
    key, files = project.sources(path)
    depends_on(ctx, key)
    if files is None:
        return True
    me = os.path.abspath(path)
    others = tuple(f for f in files if f != me)
    return bool(_subclass_names(project, others, cls.name.value) - here)


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
    modules that only initialises them, or switches their mode (``m.eval()`` of each batch norm), does not
    run any of them.  Its body writes weights (``torch.nn.init``,
    an in-place method, ``reset_parameters()`` of a module) and otherwise computes numbers (``math.sqrt``
    of a kernel's size); the loop's module is neither called nor handed to anything but a type test or a
    function of the file that only initialises."""
    loop = ctx.parent(call)
    if not isinstance(loop, cst.For) or loop.iter is not call:
        return False
    loop_names = {n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)}
    inits = 0
    for c in ctx.calls_in(loop.body):
        names = ctx.names.qualified_names_at(c.func)
        name = method_name(c) or ""
        if any(q.startswith("torch.nn.init.") for q in names) or name.endswith("_") and not name.startswith("_") \
                or name == "reset_parameters" and not c.args:
            inits += 1
        elif isinstance(c.func, cst.Name) and c.func.value in ("isinstance", "hasattr", "type", "len", "getattr"):
            continue
        elif name in _MODE_SWITCHES and _touches(c.func, loop_names):
            inits += 1  # `m.eval()` of a batch norm (`freeze_bn`): sets a flag, runs nothing
        elif _touches(c.func, loop_names) or any(
                isinstance(a.value, cst.Name) and a.value.value in loop_names for a in c.args) \
                and not effects.initialiser(ctx, c.func):
            return False  # `m(x)`, `m.register_forward_hook(...)`, `collect(m)`: more than initialising
    return inits > 0


#: what a loop over the modules may call on each besides initialising it: a mode switch, a freeze
_MODE_SWITCHES = frozenset({"eval", "train", "requires_grad_"})


def _touches(expr: cst.BaseExpression, names: Set[str]) -> bool:
    """Whether ``expr`` (a callee) is one of ``names`` or a method or attribute path of one."""
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value in names


def reaches_modules_by_reflection(ctx: FileContext, cls: cst.ClassDef) -> bool:
    """Whether code of ``cls`` reaches its submodules without naming them: reflection (``self._modules``,
    ``self.children()``, ``vars(self)``, ``getattr(self, name)`` with a computed name, iterating
    ``self.modules()`` for anything but initialisation) on a value that may be the instance itself, not on
    a library model it builds (``resnet._modules["conv1"]``), a member (``self.body.children()``) or an
    imported module (``torchvision.models.__dict__``)."""
    return reflected_prefixes(ctx, cls) != frozenset()


def reflected_prefixes(ctx: FileContext, cls: cst.ClassDef) -> Optional[FrozenSet[str]]:
    """What the reflection of :func:`reaches_modules_by_reflection` in ``cls`` may reach: the literal
    prefixes of names computed from one (``getattr(self, "block{}".format(i))``, ``f"fc{i}"``,
    ``"bn%d" % i``: only attributes spelled so), empty without reflection; None where it may reach any
    attribute."""
    prefixes: Set[str] = set()
    for node in iter_nodes(cls):
        if isinstance(node, cst.Attribute) and node.attr.value in _REFLECTIVE_ATTRS:
            if _may_be_the_instance(ctx, node.value):
                return None
            continue
        if not isinstance(node, cst.Call):
            continue
        if isinstance(node.func, cst.Name) and node.func.value in ("getattr", "setattr", "hasattr", "delattr"):
            if len(node.args) < 2 or not isinstance(node.args[1].value, cst.SimpleString):
                if not node.args or _may_be_the_instance(ctx, node.args[0].value):
                    prefix = _literal_prefix(node.args[1].value) if len(node.args) > 1 else None
                    if not prefix:
                        return None
                    prefixes.add(prefix)
        if isinstance(node.func, cst.Name) and node.func.value == "vars":
            if not node.args or _may_be_the_instance(ctx, node.args[0].value):
                return None
        if method_name(node) in _ITERATE_MODULES and not _initialisation_only(ctx, node) \
                and _may_be_the_instance(ctx, node.func.value):  # type: ignore[attr-defined]
            return None
    return frozenset(prefixes)


def _literal_prefix(expr: cst.BaseExpression) -> Optional[str]:
    """The literal start of a name computed from a string (``"block{}".format(i)``, ``f"block{i}"``,
    ``"block%d" % i``, ``"block" + str(i)``): ``"block"``; None when it has none."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format" \
            and isinstance(expr.func.value, cst.SimpleString):
        return expr.func.value.evaluated_value.split("{", 1)[0] or None  # type: ignore[union-attr]
    if isinstance(expr, cst.FormattedString) and expr.parts and isinstance(expr.parts[0], cst.FormattedStringText):
        return expr.parts[0].value or None
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.left, cst.SimpleString):
        text = expr.left.evaluated_value
        if isinstance(text, str) and isinstance(expr.operator, cst.Modulo):
            return text.split("%", 1)[0] or None
        if isinstance(text, str) and isinstance(expr.operator, cst.Add):
            return text or None
    return None


def _may_be_the_instance(ctx: FileContext, recv: cst.BaseExpression) -> bool:
    """Whether ``recv``, reflected on in a method of a class, may be the instance itself: ``self``,
    ``super()``, a parameter, a value not known; not a member of it (``self.body``), an imported module
    (``torchvision.models``), nor a name bound only to such values or to what a library call returns (a
    pretrained model it builds) or to data, nor to itself moved (``donor = donor.to(device)``: the module
    it held)."""
    if isinstance(recv, cst.Call):
        return not _library_call(ctx, recv)
    if isinstance(recv, cst.Subscript):
        return _may_be_the_instance(ctx, recv.value)
    if isinstance(recv, cst.Attribute):
        if effects.self_attr(ctx, recv) is not None:
            return False  # a member's own children or modules
        root: cst.BaseExpression = recv
        while isinstance(root, cst.Attribute):
            root = root.value
        return not (isinstance(root, cst.Name) and _imported_library(ctx, root))
    if not isinstance(recv, cst.Name):
        return True
    if _imported_library(ctx, recv):
        return False
    b = ctx.names.binding_at(recv, recv.value)
    if b is None or b.imports or not b.values or any(v is None for v in b.values):
        return True
    # a value that is the name's own module moved or switched adds nothing to what the name may hold
    values = [v for v in b.values if not moves_itself(v, recv)]
    return not values or not all(
        isinstance(v, cst.Call) and (_library_call(ctx, v) or effects.data_value(ctx, v))
        or isinstance(v, cst.Attribute) and not _may_be_the_instance(ctx, v) for v in values)



def _imported_library(ctx: FileContext, name: cst.Name) -> bool:
    """Whether ``name`` is bound by an import of a module outside the project (``torchvision``)."""
    b = ctx.names.binding_at(name, name.value)
    if b is None or not b.imports or b.values:
        return False
    if not ctx.path or ctx.path.startswith("<") or ctx.path == "-":
        return False  # text without a file: which imports are the project's is not known
    project = project_of(ctx)
    for q in b.imports:
        if q.startswith(".") or project.module_file(ctx.path, q, 0) is not None:
            return False
        top = q.split(".", 1)[0]
        if project.module_file(ctx.path, top, 0) is not None:
            return False
    return True


def _library_call(ctx: FileContext, call: cst.Call) -> bool:
    """Whether ``call`` calls a library (its callee reached from a module imported from outside the project,
    ``torchvision.models.resnet18(pretrained=True)``) that cannot return the instance calling it: not a copy
    or a load, no ``self`` among its arguments."""
    func: cst.BaseExpression = call.func
    while isinstance(func, (cst.Attribute, cst.Subscript, cst.Call)):
        func = func.func if isinstance(func, cst.Call) else func.value
    if not isinstance(func, cst.Name) or not _imported_library(ctx, func):
        return False
    if any(q.startswith(_ANY_OBJECT) for q in ctx.names.qualified_names_at(call.func)):
        return False
    function = ctx.enclosing(call, cst.FunctionDef)
    me = _self_name(function) if isinstance(function, cst.FunctionDef) else None
    return not any(isinstance(a.value, cst.Name) and a.value.value == me for a in call.args)


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
        if name in candidates or not isinstance(strip_moves(a.value), cst.Call) \
                or ctx.enclosing(a, (cst.FunctionDef, cst.Lambda)) is not init or read.reads(ctx, name, cls, a):
            continue  # a module is built by a call; the reads of the file are judged only for those
        # nn.Buffer/nn.Parameter build tensors: not modules; a loss or an activation kept as an attribute
        # holds no parameter that could miss a gradient
        if is_module_value(ctx, a.value) and not effects.holds_nothing(ctx, a.value) \
                and not effects.holds_only_buffers(ctx, a.value) and not _empty_container_never_filled(ctx, a, target):
            candidates[name] = a
    reached = reflected_prefixes(ctx, cls) if candidates else None
    if reached is None:
        return []
    # `getattr(self, "block{}".format(i))` reaches `block1`, `block2`, ...: not `dropout`
    candidates = {name: a for name, a in candidates.items() if not name.startswith(tuple(reached))}
    candidates = {name: a for name, a in candidates.items() if not _rate_applied_otherwise(ctx, cls, init, me, a)}
    elsewhere = read_elsewhere(ctx, cls, set(candidates), read.view(ctx, cls).members()) if candidates else set()
    return [(name, a) for name, a in candidates.items() if name not in elsewhere]


#: containers of modules (or parameters) that hold only what is put into them
_CONTAINERS = frozenset({"torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.Sequential",
                         "torch.nn.ParameterList", "torch.nn.ParameterDict"})


def _empty_container_never_filled(ctx: FileContext, assign: cst.Assign, target: cst.Attribute) -> bool:
    """``self.upsamples = nn.ModuleList()`` built empty, and no code of the file spells the attribute
    again (no ``append``, ``extend``, item assignment, ``add_module``): it holds nothing to miss a gradient."""
    core = strip_moves(assign.value)
    if not isinstance(core, cst.Call) or core.args or not ctx.names.qualified_names_at(core.func) & _CONTAINERS:
        return False
    attr = target.attr.value
    return not any(isinstance(n, cst.Attribute) and n.attr.value == attr and n is not target
                   for n in iter_nodes(ctx.module))


def _rate_applied_otherwise(ctx: FileContext, cls: cst.ClassDef, init: cst.FunctionDef, me: str,
                            assign: cst.Assign) -> bool:
    """``self.idrop = nn.Dropout(dropouti)`` left unused while ``__init__`` also keeps the rate
    (``self.dropouti = dropouti``) and ``forward`` hands it to a call (``self.lockdrop(x, self.dropouti)``):
    the dropout is applied by other means at that rate, the layer is a leftover that takes no parameter (a
    rate read only to build other layers, or in another method, proves nothing)."""
    value = strip_moves(assign.value)
    if not isinstance(value, cst.Call) or not any(
            q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in DROPOUT_LAYERS
            for q in ctx.names.qualified_names_at(value.func)):
        return False
    rate = arg(value, 0, "p")
    if rate is None or not isinstance(rate.value, cst.Name):
        return False
    kept = set()
    for a in ctx.contents(init).assigns:
        if isinstance(a, cst.Assign) and isinstance(a.value, cst.Name) and a.value.value == rate.value.value:
            for t in a.targets:
                if isinstance(t.target, cst.Attribute) and isinstance(t.target.value, cst.Name) \
                        and t.target.value.value == me:
                    kept.add(t.target.attr.value)
    if not kept:
        return False
    for method in class_body(cls):
        if not isinstance(method, cst.FunctionDef) or method.name.value != "forward":
            continue
        me_there = _self_name(method)
        for call in ctx.calls_in(method):
            if any(isinstance(a.value, cst.Attribute) and a.value.attr.value in kept
                   and isinstance(a.value.value, cst.Name) and a.value.value.value == me_there for a in call.args):
                return True  # `self.lockdrop(x, self.dropouti)` in the forward pass
    return False


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


def read_elsewhere(ctx: FileContext, cls: cst.ClassDef, names: Set[str],
                   members: Optional[Set[str]] = None) -> Set[str]:
    """Of ``names`` (attributes of instances of ``cls``), those another file of the project may read (see
    the module's documentation); all of them when the project's files cannot be listed.  ``members``: the
    attributes an instance of ``cls`` may have (:meth:`_View.members`), when known: a value read there for
    another one is no instance of it (:func:`_lacks_member`)."""
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
    # an instance of the class reaches only files linked to this one by imports (and, whatever their
    # imports say, the files beside it and the notebooks)
    linked = project.import_connected(path)
    for other in files:
        if other == me or linked is not None and os.path.abspath(other) not in linked \
                and not other.endswith(".ipynb") and os.path.dirname(os.path.abspath(other)) != os.path.dirname(me):
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
        out |= _reads_in(octx, spelled, (os.path.abspath(ctx.path), cls.name.value), kin, members)
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
#: argument of ``getattr``/``setattr``/``delattr``, or of ``get_submodule`` and its kin; up to the string's
#: opening quote (a docstring or a message that spells the name reads nothing)
_STRING_READ = (r"(?:\[\s*|\b(?:getattr|setattr|delattr)\s*\([^\'\"]*?,\s*"
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


def _reads_in(octx: FileContext, names: Set[str], target: Tuple[str, str], kin: "_Kin",
              members: Optional[Set[str]] = None) -> Set[str]:
    """Which of ``names`` the other file ``octx`` reads as an attribute of a value that may be an
    instance of the class, or names in a string that reaches an attribute or a state dict by name;
    ``target``: the file and name of the class whose layers they are; ``kin``: its ancestors;
    ``members``: the attributes its instances may have, when known."""
    out: Set[str] = set()
    written: Optional[Set[str]] = None
    for node in iter_nodes(octx.module):
        if isinstance(node, cst.Attribute) and node.attr.value in names:
            parent = octx.parent(node)
            if isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is node:
                continue
            if _own_layer(octx, node, target) or _other_receiver(octx, node.value, target, kin) \
                    or effects.initialising_read(octx, node):
                continue
            if members is not None:
                if written is None:
                    written = _written_attributes(octx, target)
                if _lacks_member(octx, node.value, members | written):
                    continue
            out.add(node.attr.value)
        elif isinstance(node, (cst.SimpleString, cst.FormattedString)):
            for name in names & set(_WORD.findall(_string_text(node))) - out:
                if _names_by_string(octx, node, name, target, kin):
                    out.add(name)
    return out


def _written_attributes(octx: FileContext, target: Tuple[str, str]) -> Set[str]:
    """The attribute names the file ``octx`` sets on a value that may be an instance of the ``target``
    class (any value but ``self`` of a class that cannot derive from it); every name it spells when it sets
    attributes by name (``setattr``)."""
    out: Set[str] = set()
    for node in iter_nodes(octx.module):
        if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign)) and isinstance(node.target, cst.Attribute) \
                and not _own_layer(octx, node.target, target):
            out.add(node.target.attr.value)
        elif isinstance(node, cst.Name) and node.value == "setattr":
            return set(_WORD.findall(octx.bare_code(octx.module)))
    return out


def _lacks_member(octx: FileContext, recv: cst.BaseExpression, members: Set[str]) -> bool:
    """:func:`_read_for_another_attribute` in another file ``octx``, whose reads are scanned here: ``members``
    is what an instance of the class may have, and what that file sets on values that may be one
    (``configs.seq_len`` beside ``configs.dropout`` says that ``configs`` is no attention block whose
    attributes are ``factor`` and ``dropout``)."""
    def reads(spelled: str, scope: cst.CSTNode) -> Iterable[cst.Attribute]:
        for other in octx.nodes(scope):
            if isinstance(other, cst.Attribute) and dotted_name(other.value) == spelled:
                parent = octx.parent(other)
                if not (isinstance(parent, (cst.AssignTarget, cst.AnnAssign)) and parent.target is other):
                    yield other

    return _read_for_another_attribute(octx, recv, reads, lambda attr: attr in members)


def _read_for_another_attribute(ctx: FileContext, recv: cst.BaseExpression,
                                reads: Callable[[str, cst.CSTNode], Iterable[cst.Attribute]],
                                may_have: Callable[[str], Optional[bool]]) -> bool:
    """Whether the value ``recv`` (a name, or a dotted path of names: ``config.model``) is read, in the same
    function and without a guard, for an attribute that no instance of the class can have: ``config.n_embd``
    beside ``config.dropout`` says that ``config`` is no instance of a block whose attributes are ``c_fc``
    and ``dropout``.  The name must be bound once there (a parameter or one assignment); ``self`` of a method
    is not judged.  ``reads(spelled, scope)``: the attribute reads of the file on a receiver spelled so;
    ``may_have(attr)``: whether an instance may have ``attr`` (None: its attributes are not known)."""
    spelled = dotted_name(recv)
    root = recv
    while isinstance(root, cst.Attribute):
        root = root.value
    if spelled is None or not isinstance(root, cst.Name):
        return False
    function = ctx.enclosing(recv, (cst.FunctionDef, cst.Lambda))
    for outer in ctx.ancestors(recv):
        if isinstance(outer, cst.FunctionDef) and _self_name(outer) == root.value \
                and isinstance(ctx.enclosing(outer, (cst.ClassDef, cst.FunctionDef)), cst.ClassDef):
            return False  # `self` of a method (or of one around a closure): not judged here
    b = ctx.names.binding_at(root, root.value)
    if b is None or b.imports or b.changed or len(b.values) != 1 \
            or b.values[0] is None and not ctx.names.is_param_at(root):
        return False  # bound more than once, or a loop's target: one object is not known
    scope = function if function is not None else ctx.module
    for other in reads(spelled, scope):
        attr = other.attr.value
        if attr.startswith("_") or attr in _MODULE_API:
            continue
        other_root = other.value
        while isinstance(other_root, cst.Attribute):
            other_root = other_root.value
        if ctx.names.binding_at(other_root, root.value) is not b \
                or ctx.enclosing(other, (cst.FunctionDef, cst.Lambda)) is not function or _guarded(ctx, other, scope):
            continue
        has = may_have(attr)
        if has is None:
            return False
        if not has:
            return True
    return False


#: functions and methods whose string argument names an attribute or a submodule of an object and hands it
#: over, replaces or removes it (``hasattr`` only asks whether it is there: the layer does not run)
_BY_NAME_FUNCTIONS = frozenset({"getattr", "setattr", "delattr"})
_BY_NAME_METHODS = frozenset({"get_submodule", "get_parameter", "get_buffer"})


def _string_text(node: cst.BaseExpression) -> str:
    """The literal text of a string (a formatted string's parts outside its ``{...}``), quotes included."""
    if isinstance(node, cst.SimpleString):
        return node.value
    if isinstance(node, cst.FormattedString):
        return "".join(p.value for p in node.parts if isinstance(p, cst.FormattedStringText))
    return ""


def _names_by_string(octx: FileContext, string: cst.BaseExpression, name: str, target: Tuple[str, str],
                     kin: "_Kin") -> bool:
    """Whether the string ``string``, which spells ``name``, reaches the attribute ``name`` by name, on a
    value that may be an instance of the class or its state (:func:`_other_receiver`): the name argument
    of ``getattr``, ``setattr``, ``delattr`` or ``get_submodule`` (not ``hasattr``); a key read from a mapping of
    the instance's members (``m._modules["head"]``, ``vars(m)["head"]``), or, as part of a dotted key, from
    a state dict (``state["head.weight"]``); a name compared with it that iterates the instance's named
    members (``for name, p in self.named_parameters(): name.startswith("head")``).  A docstring, a message,
    a string in a list, a dict literal (a configuration's ``"dropout": 0.1``), a key renaming
    (``.replace(...)``), a key written into a mapping, or a key that is only the name read from a mapping
    not known to hold members (a dict of options) only names it."""
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
        if method_name(call) in ("startswith", "endswith") and call.args[0] is parent:
            return _member_name(octx, call.func.value, target, kin)  # type: ignore[attr-defined]
        if method_name(call) in _BY_NAME_METHODS:
            return not _other_receiver(octx, call.func.value, target, kin)  # type: ignore[attr-defined]
        return _name_parameter(octx, call, parent)
    if isinstance(parent, cst.Comparison):
        first = parent.comparisons[0]
        return parent.left is node and isinstance(first.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)) \
            and _member_name(octx, first.comparator, target, kin)
    if isinstance(parent, cst.ComparisonTarget):
        comparison = octx.parent(parent)
        return isinstance(comparison, cst.Comparison) and comparison.comparisons[0] is parent \
            and isinstance(parent.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)) \
            and _member_name(octx, comparison.left, target, kin)
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
        if _string_text(string).strip("rRbBuUfF").strip("\'\"") == name:
            return _member_mapping(octx, subscript.value, target, kin)  # only a mapping of members has that key
        return not _other_receiver(octx, subscript.value, target, kin)
    return False


def _name_parameter(octx: FileContext, call: cst.Call, argument: cst.Arg) -> bool:
    """Whether ``argument`` of ``call`` is given to a parameter of a project function that reaches an
    attribute by that name: ``freeze(net, "neck")`` with ``getattr(model, part)`` in ``freeze``."""
    found = definition_of(octx, call.func)
    if found is None or not isinstance(found[1], cst.FunctionDef):
        return False
    fctx, function = found
    in_class = isinstance(fctx.enclosing(function, (cst.ClassDef, cst.FunctionDef)), cst.ClassDef)
    bound = bind_arguments(call, function, 1 if in_class and isinstance(call.func, cst.Attribute) else 0)
    param = next((k for k, v in (bound or {}).items() if v is argument.value), None)
    if param is None:
        return False
    for c in fctx.calls_in(function):
        named: Optional[cst.BaseExpression] = None
        if isinstance(c.func, cst.Name) and c.func.value in _BY_NAME_FUNCTIONS and len(c.args) > 1:
            named = c.args[1].value
        elif method_name(c) in _BY_NAME_METHODS and c.args:
            named = c.args[0].value
        if isinstance(named, cst.Name) and named.value == param and fctx.names.is_param_at(named):
            return True
    return False


def _member_mapping(octx: FileContext, expr: cst.BaseExpression, target: Tuple[str, str], kin: "_Kin",
                    hops: int = 0) -> bool:
    """Whether ``expr`` may be a mapping of the members of an instance of the class, keyed by their names:
    ``m._modules``, ``m.__dict__``, ``vars(m)``, ``dict(m.named_children())``, or a name bound to one."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in _MEMBER_MAPPINGS:
        return not _other_receiver(octx, expr.value, target, kin)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.args:
        inner = expr.args[0].value
        if expr.func.value == "vars":
            return not _other_receiver(octx, inner, target, kin)
        if expr.func.value in ("dict", "OrderedDict") and isinstance(inner, cst.Call) \
                and method_name(inner) in _MEMBER_ITERATORS:
            return not _other_receiver(octx, inner.func.value, target, kin)  # type: ignore[attr-defined]
        return False
    if isinstance(expr, cst.Name) and hops < 2:
        value = octx.names.value_of(expr)
        return value is not None and _member_mapping(octx, value, target, kin, hops + 1)
    return False


def _member_name(octx: FileContext, expr: cst.BaseExpression, target: Tuple[str, str], kin: "_Kin") -> bool:
    """Whether ``expr`` is the name of a member of an instance of the class: the target of a loop around it
    (a ``for`` statement or a comprehension) over the instance's ``named_parameters()``,
    ``named_modules()``, ``named_children()``, ``named_buffers()`` or ``state_dict()`` (their ``keys()`` and
    ``items()`` too)."""
    if not isinstance(expr, cst.Name):
        return False
    for a in octx.ancestors(expr):
        loops: List[Tuple[cst.BaseExpression, cst.BaseExpression]] = []
        if isinstance(a, cst.For):
            loops.append((a.target, a.iter))
        elif isinstance(a, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            comp: Optional[cst.CompFor] = a.for_in
            while comp is not None:
                loops.append((comp.target, comp.iter))
                comp = comp.inner_for_in
        for bound, iterated in loops:
            if not any(isinstance(n, cst.Name) and n.value == expr.value for n in iter_nodes(bound)):
                continue
            while isinstance(iterated, cst.Call) and method_name(iterated) in ("keys", "items") \
                    or isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name) \
                    and iterated.func.value in ("list", "sorted", "enumerate") and iterated.args:
                iterated = iterated.func.value if method_name(iterated) in ("keys", "items") \
                    else iterated.args[0].value  # type: ignore[attr-defined]
            return isinstance(iterated, cst.Call) and method_name(iterated) in _MEMBER_ITERATORS \
                and not _other_receiver(octx, iterated.func.value, target, kin)  # type: ignore[attr-defined]
        if isinstance(a, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
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


def _other_receiver(octx: FileContext, recv: cst.BaseExpression, target: Tuple[str, str], kin: _Kin,
                    depth: int = 0) -> bool:
    """Whether the value ``recv`` (whose attribute is read) is known to be no instance of the ``target``
    class: a literal, data, a name annotated with, or only ever bound to an instance of, a class that is
    neither the target, a class that may derive from it, nor one of its ancestors (a dataclass or config
    object, a tensor), or a constructor's parameter that every construction of its class passes such a
    value (:func:`_arguments`).  Unknown receivers are not."""
    if isinstance(recv, _LITERALS):
        return True
    if isinstance(recv, _OPERATIONS):
        return not _defines_operators(octx)  # `(grads + eps).norm(2, dim=1)`: a number or a tensor
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
    if _imported_library(octx, recv):
        return True  # `F.dropout`: a library module (or what it defines) is no instance of a project class
    b = octx.names.binding_at(recv, recv.value)
    if b is None or b.imports or b.changed or not b.values:
        return False
    if any(v is None for v in b.values):
        if len(b.values) != 1:
            return False
        owner = _instance_owner(octx, recv)
        if owner is not None:
            # `getattr(self, f"norm{i}")` in a method of another class: an instance of that class
            return not _related(octx, owner, target, kin)
        function = octx.enclosing(recv, (cst.FunctionDef, cst.Lambda))
        param = _param_named(function, recv.value) if isinstance(function, cst.FunctionDef) else None
        if param is None:
            return False
        if param.annotation is not None:
            return _other_class(octx, param.annotation.annotation, target, kin)
        if depth >= _ARGUMENT_DEPTH:
            return False
        args = _arguments(octx, function, param)  # type: ignore[arg-type]
        return bool(args) and all(_other_receiver(c, a, target, kin, depth + 1)  # type: ignore[union-attr]
                                  for c, a in args)  # type: ignore[union-attr]
    return all(_other_value(octx, v, target, kin) for v in b.values)  # type: ignore[arg-type]


#: expressions whose value is what an operator computes: a number, a tensor, a bool (a module class
#: defines no arithmetic unless the file says so)
_OPERATIONS = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison)


def _defines_operators(octx: FileContext) -> bool:
    """Whether a class of the file defines an operator method (``__add__``, ``__neg__``, ...): then what an
    operator computes may be an instance of it."""
    return _OPERATORS_DEFINED.of(octx)


def _operators_defined(octx: FileContext) -> bool:
    return any(
        isinstance(stmt, cst.FunctionDef) and stmt.name.value.startswith("__") and stmt.name.value.endswith("__")
        and stmt.name.value.strip("_") in _OPERATOR_METHODS
        for cls in octx.classes().values() for stmt in class_body(cls)
    )


_OPERATOR_METHODS = frozenset(
    prefix + name
    for name in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
                 "rshift", "divmod")
    for prefix in ("", "r", "i")
) | {"neg", "pos", "invert"}
_OPERATORS_DEFINED: "Fact[bool]" = Fact("gradflow.operators_defined", _operators_defined)


def _instance_owner(octx: FileContext, name: cst.Name) -> Optional[cst.ClassDef]:
    """The class of the file whose instance ``name`` is: the first parameter of a method of the class (not
    a static method or a class method), never bound again in it."""
    function = octx.enclosing(name, (cst.FunctionDef, cst.Lambda))
    if not isinstance(function, cst.FunctionDef) or _self_name(function) != name.value:
        return None
    cls = octx.enclosing(function, (cst.ClassDef, cst.FunctionDef))
    if not isinstance(cls, cst.ClassDef):
        return None
    for d in function.decorators:
        if isinstance(d.decorator, cst.Name) and d.decorator.value in ("staticmethod", "classmethod"):
            return None
        if not isinstance(d.decorator, cst.Name):
            return None  # a decorator that may change what the method is given
    return cls


#: how many constructors deep a parameter's arguments are followed (``MLP(config)`` in ``Block.__init__``)
_ARGUMENT_DEPTH = 3
#: how many constructions of a class are read for a parameter's arguments
_ARGUMENTS_MAX = 16
_LITERALS = (cst.Dict, cst.List, cst.Tuple, cst.Set, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
             cst.Integer, cst.Float, cst.DictComp, cst.ListComp, cst.SetComp)


def _arguments(octx: FileContext, function: cst.FunctionDef,
               param: cst.Param) -> Optional[List[Tuple[FileContext, cst.BaseExpression]]]:
    """What every construction of the class whose ``__init__`` is ``function`` passes for ``param`` (its
    default where a construction passes nothing), with the file each is in: in the file and the project
    files that build it (:func:`definitions.constructions`).  None for another function, a parameter other
    than a plain one after ``self``, or when a construction may be out of view or passes ``*args``."""
    if function.name.value != "__init__":
        return None
    cls = octx.enclosing(function, (cst.ClassDef, cst.FunctionDef))
    if not isinstance(cls, cst.ClassDef) or param.star or param.name.value == _self_name(function):
        return None
    built = constructions(octx, cls)
    if not built or len(built) > _ARGUMENTS_MAX:
        return None
    out: List[Tuple[FileContext, cst.BaseExpression]] = []
    for c, call in built:
        bound = bind_arguments(call, function, 1)
        if bound is None:
            return None
        value = bound.get(param.name.value)
        if value is None:
            if param.default is None:
                return None
            out.append((octx, param.default))
        else:
            out.append((c, value))
    return out


def _param_named(function: cst.FunctionDef, name: str) -> Optional[cst.Param]:
    p = function.params
    for param in list(p.posonly_params) + list(p.params) + list(p.kwonly_params):
        if param.name.value == name:
            return param
    return None


def _other_value(octx: FileContext, value: cst.BaseExpression, target: Tuple[str, str], kin: _Kin) -> bool:
    if isinstance(value, _LITERALS):
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

__all__ = ["NamesRead", "may_be_subclassed", "parameter_free", "reaches_modules_by_reflection", "read_elsewhere", "reflected_prefixes",
           "unused_submodules"]
