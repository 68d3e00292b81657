"""Definitions and the call graph of the program model: which class or function a name or call names,
in this file or in a project module it imports (followed at most :data:`MAX_DEPTH` files deep, parsed
once per project and content), the project files a file's answers depend on, the bodies, methods and
bases of classes, the calls of a function in its file and across the project, and the arguments a
call binds to a function's parameters.

What a value is (roles, class summaries) is :mod:`torchlint.analysis.roles`; values followed through
calls are :mod:`torchlint.analysis.values`.  Queries are made once the file's walk is done
(``leave_Module``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from torchlint.analysis.context import Fact, FileContext, arg
from torchlint.analysis.names import dotted_name
from torchlint.analysis.ops import same_reference, strip_moves
from torchlint.analysis.project import dependencies, depends_on, inherit_dependencies, project_of
from torchlint.analysis.walk import children, iter_nodes, target_names

#: how many files an import chain, and how many classes a chain of bases, is followed
MAX_DEPTH = 4


# -- names, read after the walk (the names layer answers: NameResolver.binding_at & co.) ---------
def built_values(ctx: FileContext, expr: cst.BaseExpression) -> List[cst.BaseExpression]:
    """The values assigned to ``expr`` (``NameResolver.values_at``) without the rebindings that move the same object: ``model = model.to(device)``,
    ``net = net.cuda().eval()`` keep the value ``model`` had."""
    return [v for v in ctx.names.values_at(expr) if not same_reference(strip_moves(v), expr)]


# -- the project's files ----------------------------------------------------------------------------
#: function of the file -> the calls of it in the file
_CALL_INDEX: Fact[Dict[cst.FunctionDef, List[cst.Call]]] = Fact("definitions.call_index")


def definition_of(ctx: FileContext, expr: cst.BaseExpression, depth: int = 0, words: Tuple[str, ...] = ()):
    """The class or function definition ``expr`` names: ``(file context, node)``, in this file or in a
    project module it imports; None when unknown (a library, a variable)."""
    if depth > MAX_DEPTH:
        return None
    if isinstance(expr, cst.Name):
        b = ctx.names.binding_at(expr, expr.value)
        if b is None:
            return _star_definition(ctx, expr.value, depth, words)
        if not ctx.names.holds_import(expr):
            if ctx.names.module_scope.bindings.get(expr.value) is not b:
                return _nested_definition(ctx, expr, b)
            return local_definition(ctx, expr.value, expr)
    for q in sorted(ctx.names.qualified_names_at(expr)):
        found = _imported_definition(ctx, q, depth, words)
        if found is not None:
            return found
    return None


def _nested_definition(ctx: FileContext, expr: cst.Name, binding) -> Optional[Tuple[FileContext, cst.CSTNode]]:
    """A name bound in a function (not at module level): the function or class defined under that name
    directly in the body of a function (``def eval_loss(): ...`` inside ``train``) whose scope holds the
    binding ``expr`` reads, when that definition is the name's one binding there; None otherwise (a
    parameter, a variable, a name bound twice)."""
    if len(binding.values) != 1:
        return None
    found = [(outer, d) for outer, d in _NESTED_DEFINITIONS.of(ctx).get(expr.value, ())
             if (scope := ctx.names.scope_of(outer)) is not None and scope.bindings.get(expr.value) is binding]
    return (ctx, found[0][1]) if len(found) == 1 else None


def _nested_definitions(ctx: FileContext) -> Dict[str, List[Tuple[cst.FunctionDef, cst.CSTNode]]]:
    out: Dict[str, List[Tuple[cst.FunctionDef, cst.CSTNode]]] = {}
    for function in _compound_statements(ctx.module):
        if type(function) is cst.FunctionDef and isinstance(function.body, cst.IndentedBlock):
            for s in function.body.body:
                if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
                    out.setdefault(s.name.value, []).append((function, s))
    return out


#: the node types that hold statements, or are statements holding them: a definition sits only below these
_BLOCKS = frozenset({cst.Module, cst.IndentedBlock, cst.FunctionDef, cst.ClassDef, cst.If, cst.Else, cst.For,
                     cst.While, cst.With, cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler,
                     cst.Finally, cst.Match, cst.MatchCase})


def _compound_statements(root: cst.CSTNode) -> List[cst.CSTNode]:
    """``root`` and the blocks and compound statements under it (no expression is visited: a walk of the
    statements only, a small part of the nodes of a file)."""
    out: List[cst.CSTNode] = []
    stack = [root]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(kid for kid in children(node) if type(kid) in _BLOCKS)
    return out


#: name -> (the function around it, the definition) for each class or function defined directly in a
#: function's body, per file
_NESTED_DEFINITIONS: "Fact[Dict[str, List[Tuple[cst.FunctionDef, cst.CSTNode]]]]" = Fact(
    "definitions.nested_definitions", _nested_definitions)


def _star_definition(ctx: FileContext, name: str, depth: int, words: Tuple[str, ...] = ()):
    """A name bound nowhere in the file, read from the project modules it imports everything from at
    module level (``from models import *``): the one definition of that name among them (None when
    none or several define it, or a module is not the project's)."""
    found = []
    for module, level in _star_imports(ctx):
        mod = "." * level + module
        hit = _imported_definition(ctx, f"{mod}.{name}" if mod and not mod.endswith(".") else f"{mod}{name}",
                                   depth, words)
        if hit is not None and hit not in found:
            found.append(hit)
    return found[0] if len(found) == 1 else None


def _star_imports(ctx: FileContext):
    """``(module, level)`` of each module-level ``from <module> import *`` other than of torch, numpy or
    builtins (``level``: the leading dots of a relative import)."""
    for stmt in ctx.module.body:
        if type(stmt) is not cst.SimpleStatementLine:
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and isinstance(small.names, cst.ImportStar):
                module = (dotted_name(small.module) or "") if small.module else ""
                if small.relative or module.split(".")[0] not in ("torch", "numpy", "builtins"):
                    yield module, len(small.relative)


def local_definition(ctx: FileContext, name: str, at: Optional[cst.CSTNode] = None, imported: bool = False):
    """The module-level class or function ``name`` of ``ctx``.  Defined several times (a notebook
    redefining a helper in a later cell): the one bound when the statement holding ``at`` runs; for an
    ``imported`` module, the last one (importers see the module once it has run); else None (which one
    runs depends on the path taken)."""
    index = _TOP_DEFINITIONS.get(ctx)
    if index is None:
        index = {}
        for stmt in ctx.module.body:
            if isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
                index.setdefault(stmt.name.value, []).append(stmt)
        _TOP_DEFINITIONS.put(ctx, index)
    found = index.get(name, [])
    if len(found) == 1 or (found and imported):
        return ctx, found[-1]
    if found and at is not None and ctx.enclosing(at, (cst.FunctionDef, cst.Lambda)) is None:
        # module-level code (a notebook cell) runs once, with the definition bound above it; a function
        # body runs whenever it is called, after any of them
        bound = ctx.definition_before(found, at)
        if bound is not None:
            return ctx, bound
    return None


#: name -> the module-level classes and functions of that name, in source order, per file
_TOP_DEFINITIONS: "Fact[Dict[str, List[cst.CSTNode]]]" = Fact("definitions.top_definitions")


def _imported_definition(ctx: FileContext, qualified_name: str, depth: int, words: Tuple[str, ...] = ()):
    """``pkg.models.Net`` -> the class ``Net`` in the project's ``pkg/models.py`` (asked once per name,
    depth and words in a file)."""
    cache = _IMPORTED.of(ctx)
    key = (qualified_name, depth, words)
    if key not in cache:
        cache[key] = _find_imported(ctx, qualified_name, depth, words)
        return cache[key]
    found = cache[key]
    if found is not None and found[0] is not ctx:
        # what the defining module depends on may have grown since (read for another question)
        inherit_dependencies(ctx, found[0])
    return found


#: (qualified name, depth, words) -> the definition found, per file
_IMPORTED: Fact[dict] = Fact("definitions.imported", lambda ctx: {})


def definition_named(ctx: FileContext, qualified_name: str):
    """``(file context, definition)`` of a project module's function or class by its qualified name as
    this file's imports spell it (``models.resnet32`` for ``import models``), re-exports followed;
    None for a library's or an unknown name."""
    return _imported_definition(ctx, qualified_name, 0)


def module_members(ctx: FileContext, module: str) -> Optional[List[Tuple[FileContext, cst.CSTNode]]]:
    """The classes and functions a project module offers by name (``getattr(models, name)`` with the
    name read from a configuration): each public name its module scope binds (defined there or
    imported into it, a package's ``__init__``) whose definition is found, as ``(file context,
    definition)``.  ``module``: its qualified name as this file's imports spell it.  None when the
    module is not a file of the project, or binds a name through ``import *``."""
    project = project_of(ctx)
    path = project.module_file(ctx.path, module, 0)
    if path is None:
        return None
    depends_on(ctx, os.path.abspath(path))
    other = project.load(path)
    if other is None:
        return None
    inherit_dependencies(ctx, other)
    if next(_star_imports(other), None) is not None:
        return None  # a name it binds may come from anywhere
    out: List[Tuple[FileContext, cst.CSTNode]] = []
    for name in sorted(other.names.module_scope.bindings):
        if name.startswith("_"):
            continue
        found = local_definition(other, name, imported=True)
        if found is None and other.names.module_scope.bindings[name].imports:
            found = _imported_definition(ctx, f"{module}.{name}", 1)
        if found is not None:
            out.append(found)
    return out


def _find_imported(ctx: FileContext, qualified_name: str, depth: int, words: Tuple[str, ...] = ()):
    level = 0
    name = qualified_name
    while name.startswith("."):
        level += 1
        name = name[1:]
    module, _, attr = name.rpartition(".")
    if not attr:
        return None
    project = project_of(ctx)
    path = project.module_file(ctx.path, module, level) if (module or level) else None
    if path is None:
        return None
    # the answer depends on this file's content from here on, whether it is parsed or not
    depends_on(ctx, os.path.abspath(path))
    if words and not project.mentions(path, words):
        return None  # the question is about these words, and the module never spells them
    text = project.module_text(path)
    if text is not None and attr not in text and "import *" not in text:
        return None  # a module that never spells the name neither defines nor re-exports it: no parse
    other = project.load(path)
    if other is None:
        return None
    inherit_dependencies(ctx, other)
    local = local_definition(other, attr, imported=True)
    if local is not None:
        return local
    b = other.names.module_scope.bindings.get(attr)
    if b is not None and b.imports:  # re-exported: `from .net import Net` in a package's __init__
        for q in sorted(b.imports):
            found = _imported_definition(other, _relative_to(other, q), depth + 1, words)
            if found is not None:
                return found
    if b is None and depth < MAX_DEPTH:
        return _star_definition(other, attr, depth + 1, words)  # `from .resnet import *` in the package
    return None


def star_imported_names(ctx: FileContext, expr: cst.BaseExpression) -> FrozenSet[str]:
    """The qualified names of a Name/Attribute chain whose first name this file binds only through
    ``from <project module> import *``, where that module imports it (``nn`` of ``import torch.nn as nn``
    in ``unet_parts.py``, read in ``unet_model.py`` as ``class UNet(nn.Module)``): what an import of it here
    would give; empty otherwise."""
    rest: List[str] = []
    root = expr
    while isinstance(root, cst.Attribute):
        rest.insert(0, root.attr.value)
        root = root.value
    if not isinstance(root, cst.Name) or ctx.names.binding_at(root, root.value) is not None:
        return frozenset()
    project = project_of(ctx)
    for module, level in _star_imports(ctx):
        path = project.module_file(ctx.path, module, level)
        if path is None:
            continue
        depends_on(ctx, os.path.abspath(path))
        text = project.module_text(path)
        if text is not None and root.value not in text:
            continue
        other = project.load(path)
        b = other.names.module_scope.bindings.get(root.value) if other is not None else None
        if b is not None and b.imports and not root.value.startswith("_"):
            tail = "".join("." + r for r in rest)
            return frozenset(q + tail for q in b.imports)
    return frozenset()


def _relative_to(ctx: FileContext, q: str) -> str:
    return q


def base_classes(ctx: FileContext, cls: cst.ClassDef, depth: int):
    for base in cls.bases:
        expr = base.value.value if isinstance(base.value, cst.Subscript) else base.value
        yield expr, definition_of(ctx, expr, depth)


def class_body(cls: cst.ClassDef) -> Sequence[cst.CSTNode]:
    """The statements of ``cls``'s indented body; empty for a one-line class (``class A: pass``)."""
    return cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()


def function_returns(function: cst.FunctionDef) -> List[cst.Return]:
    """The ``return`` statements of ``function`` itself (not of functions or classes inside it)."""
    out: List[cst.Return] = []
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return):
            out.append(node)
            continue
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if isinstance(node, (cst.BaseSmallStatement,)) and not isinstance(node, cst.Return):
            continue
        for child in node.children:
            if isinstance(child, (cst.BaseStatement, cst.BaseSuite, cst.BaseSmallStatement, cst.Else,
                                  cst.ExceptHandler, cst.Finally, cst.IndentedBlock)):
                stack.append(child)
            elif isinstance(child, (list, tuple)):
                stack.extend(child)
    return out


def returned_values(ctx: FileContext, function: cst.FunctionDef, index: Optional[int] = None,
                    depth: int = 0) -> Optional[List[Tuple[FileContext, cst.BaseExpression]]]:
    """What ``function`` (of ``ctx``) returns, each value with the file it is written in, through the local
    names it returns (``model = Net()`` ... ``return model``): every value, or with ``index`` the element at
    that position of the tuple every ``return`` builds (``return model, transforms``), also through a
    project function whose return it passes on (``def build_model(args): return build(args)``).  None when
    a ``return`` gives nothing, no tuple of that length, or a name whose value the function does not show."""
    out: List[Tuple[FileContext, cst.BaseExpression]] = []
    returns = function_returns(function)
    if not returns or depth > MAX_DEPTH:
        return None
    for ret in returns:
        value = ret.value
        if value is None:
            return None
        if index is not None:
            if isinstance(value, cst.Call):
                found = definition_of(ctx, value.func, depth + 1)
                if found is None or not isinstance(found[1], cst.FunctionDef) or found[1] is function:
                    return None
                passed = returned_values(found[0], found[1], index, depth + 1)
                if passed is None:
                    return None
                out.extend(passed)
                continue
            if not isinstance(value, cst.Tuple) or index >= len(value.elements) or any(
                    isinstance(e, cst.StarredElement) for e in value.elements):
                return None
            value = value.elements[index].value
        # `return model.to(device)`: the object a move is called on (a module's `.to()` returns itself)
        moved = strip_moves(value)
        if isinstance(moved, cst.Name) and ctx.enclosing(moved, cst.FunctionDef) is function:
            value = moved
        if isinstance(value, cst.Name) and ctx.enclosing(value, cst.FunctionDef) is function:
            values = built_values(ctx, value)
            if not values or ctx.names.unpacked_values(value) or ctx.names.is_param_at(value):
                return None
            out.extend((ctx, v) for v in values)
        else:
            out.append((ctx, value))
    return out


def appended_values(ctx: FileContext, name: cst.Name) -> List[cst.BaseExpression]:
    """The values ``name.append(v)`` (``extend``, ``insert``) adds to the list ``name`` in its function (or
    at module level, for a module-level name)."""
    scope = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda)) or ctx.module
    out = []
    for call in ctx.calls_in(scope):
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name.value \
                and func.attr.value in ("append", "extend", "insert") and call.args:
            out.append(call.args[-1].value)
    return out


def list_elements(ctx: FileContext, name: cst.Name) -> Tuple[List[cst.BaseExpression], bool]:
    """The elements the list ``name`` may hold (``layers`` in ``nn.Sequential(*layers)``): those of the list
    and tuple displays assigned to it (a comprehension's element), of the displays added with ``+=``
    (``k * [layer]`` too), and what ``append``/``insert`` add and ``extend`` adds from a display, in its
    function (or at module level); with whether that is all of them (False when some value is another
    thing: a call's result, a parameter, a starred element)."""
    complete = True
    out: List[cst.BaseExpression] = []

    def add(value: cst.BaseExpression, display_only: bool) -> None:
        nonlocal complete
        held = _display_elements(value)
        if held is None:
            if display_only:
                complete = False
            else:
                out.append(value)
            return
        out.extend(e for e in held if e is not None)
        complete = complete and None not in held

    values = built_values(ctx, name)
    if not values:
        complete = False
    for v in values:
        add(v, True)
    scope = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda)) or ctx.module
    for node in ctx.contents(scope).assigns:
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) \
                and node.target.value == name.value and isinstance(node.operator, cst.AddAssign):
            add(node.value, True)
    for v in appended_values(ctx, name):
        add(v, False)  # (`append(layer)`: the layer; `extend([a, b])`: its elements)
    if complete and _handed_on(ctx, scope, name.value):
        complete = False  # `add_block(layers, width)` may append to it; `more = layers` too
    return out, complete


#: containers that only take what they are given
_CONTAINER_BUILDERS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict"})


def _handed_on(ctx: FileContext, scope: cst.CSTNode, name: str) -> bool:
    """Whether the list ``name`` is given (not unpacked) to a call other than a container's construction, or
    bound to another name: code that may add to it."""
    for use in ctx.names_in(scope, name):
        parent = ctx.parent(use)
        if isinstance(parent, cst.Arg) and parent.value is use and not parent.star:
            call = ctx.parent(parent)
            names = ctx.names.qualified_names(call.func) if isinstance(call, cst.Call) else frozenset()
            if not names or not names <= _CONTAINER_BUILDERS | {"builtins.len"}:
                return True
        elif isinstance(parent, (cst.Assign, cst.AnnAssign)) and parent.value is use:
            return True
    return False


def _display_elements(value: cst.BaseExpression) -> Optional[List[Optional[cst.BaseExpression]]]:
    """The elements of a list or tuple display (None for a starred one), the element of a comprehension,
    those of ``k * [layer]``; None for anything else."""
    if isinstance(value, (cst.List, cst.Tuple)):
        return [None if isinstance(e, cst.StarredElement) else e.value for e in value.elements]
    if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
        return [value.elt]
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        for side in (value.left, value.right):
            if isinstance(side, (cst.List, cst.Tuple)):
                return _display_elements(side)
    return None


def returned_argument(ctx: FileContext, call: cst.Call, function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """For ``call`` of ``function`` (written in ``ctx``), when every ``return`` of the function gives back
    one of its parameters, never rebound there, as it is or moved (``def init_net(net): ...; return net``,
    a helper that initialises or wraps in place): the argument ``call`` passes for it (for a name, its
    one value before the call: ``model = wrap(model)``); None otherwise."""
    returns = function_returns(function)
    names = set()
    for ret in returns:
        core = strip_moves(ret.value) if ret.value is not None else None
        if not isinstance(core, cst.Name):
            return None
        names.add(core.value)
    if len(names) != 1:
        return None
    name = names.pop()
    params = list(function.params.posonly_params) + list(function.params.params) + list(function.params.kwonly_params)
    targets = [t.target for t in iter_nodes(function.body) if isinstance(t, (cst.AssignTarget, cst.AugAssign,
                                                                          cst.AnnAssign, cst.For))]
    if not any(p.name.value == name for p in params) or any(n.value == name for t in targets for n in target_names(t)):
        return None  # (rebound: what it returns may be another object)
    bound = bind_arguments(call, function, 0)
    passed = bound.get(name) if bound else None
    if isinstance(passed, cst.Name):  # `model = wrap(model)`: the value the name held before the call
        before = [v for v in ctx.names.values_before(passed) if not ctx.is_inside(passed, v)]
        return before[-1] if len(before) == 1 else None
    return passed


def held_values(ctx: FileContext, expr: cst.BaseExpression,
                depth: int = 0) -> Optional[List[Tuple[FileContext, cst.BaseExpression]]]:
    """What ``expr`` (a name, ``self.<attr>``) may hold, each value with the file it is written in: the values
    assigned to it (:func:`built_values`) and, for a name unpacked from a call of a project function
    (``model, transforms = build(3)``), the element that function returns at the name's position
    (:func:`returned_values`).  None when an unpacked binding is not explained so."""
    out: List[Tuple[FileContext, cst.BaseExpression]] = [(ctx, v) for v in built_values(ctx, expr)]
    if not out and isinstance(expr, cst.Attribute):
        unpacked = _unpacked_attr_values(ctx, expr, depth)
        if unpacked is not None:
            return unpacked
        return inherited_attr_values(ctx, expr, depth)
    if not isinstance(expr, cst.Name):
        return _through_constructions(out, depth)
    later = _later_than(ctx, expr)
    out = [(c, v) for c, v in out if not later(v)]
    for value, index in ctx.names.unpacked_values(expr):
        if later(value):
            continue
        element = _literal_element(ctx, value, index)
        if element is not None:
            out.append((ctx, element))  # `model, criterion = Net(), FocalLoss()`
            continue
        core = strip_moves(value)
        found = definition_of(ctx, core.func, depth) if isinstance(core, cst.Call) else None
        if found is None or not isinstance(found[1], cst.FunctionDef):
            return None
        elements = returned_values(found[0], found[1], index, depth)
        if elements is None:
            return None
        out.extend(elements)
    return out


def _literal_element(ctx: FileContext, value: cst.BaseExpression, index: int) -> Optional[cst.BaseExpression]:
    """The element at ``index`` of a tuple or list display unpacked into as many names, none starred
    (``G, D = Generator(), Discriminator()``); None for any other value."""
    assign = ctx.parent(value)
    if not isinstance(value, (cst.Tuple, cst.List)) or not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return None
    target = assign.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(value.elements) or any(
            isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)) or index >= len(value.elements):
        return None
    return value.elements[index].value


def _through_constructions(values: List[Tuple[FileContext, cst.BaseExpression]],
                           depth: int) -> List[Tuple[FileContext, cst.BaseExpression]]:
    """``self.model = model`` in ``__init__``: the values the constructions pass for ``model`` stand for
    it (what each name passed holds, in its file); a parameter no construction in view explains stays."""
    out: List[Tuple[FileContext, cst.BaseExpression]] = []
    for vctx, v in values:
        passed = constructor_arguments(vctx, v) if isinstance(v, cst.Name) and depth < MAX_DEPTH else None
        if not passed:
            out.append((vctx, v))
            continue
        for actx, a in passed:
            held = held_values(actx, a, depth + 1) if isinstance(a, (cst.Name, cst.Attribute)) else None
            out.extend(held if held else [(actx, a)])
    return out


def _unpacked_attr_values(ctx: FileContext, expr: cst.Attribute,
                          depth: int) -> Optional[List[Tuple[FileContext, cst.BaseExpression]]]:
    """For ``self.<attr>`` that its class sets only by unpacking what a call returns (``self.model,
    self.aug = self.initModel()``): the element each such call's function returns at that position
    (:func:`returned_values`); None when the class sets it no such way, or a call is not explained so."""
    if not (isinstance(expr.value, cst.Name) and expr.value.value == "self") or depth > MAX_DEPTH:
        return None
    cls = ctx.enclosing(expr, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef):
        return None
    index = _UNPACKED_ATTRS.of(ctx)
    if cls not in index:
        index[cls] = _unpacked_attrs(cls)
    out: List[Tuple[FileContext, cst.BaseExpression]] = []
    for value, i, starred in index[cls].get(expr.attr.value, ()):
        core = strip_moves(value)
        if not isinstance(core, cst.Call) or starred:
            return None
        found = None
        if isinstance(core.func, cst.Attribute) and isinstance(core.func.value, cst.Name) \
                and core.func.value.value == "self":
            found = find_method(ctx, cls, core.func.attr.value)  # `self.initModel()`
        else:
            d = definition_of(ctx, core.func, depth + 1)
            found = d if d is not None and isinstance(d[1], cst.FunctionDef) else None
        if found is None:
            return None
        if any(isinstance(c.func, cst.Attribute) and c.func.attr.value in ("eval", "train", "requires_grad_")
               for c in found[0].calls_in(found[1])):
            return None  # (`seg_model.eval()` before `return seg_model, ...`: built, then switched)
        elements = returned_values(found[0], found[1], i, depth + 1)
        if elements is None:
            return None
        out.extend(elements)
    return out or None


def _unpacked_attrs(cls: cst.ClassDef) -> Dict[str, List[Tuple[cst.BaseExpression, int, bool]]]:
    """attribute -> ``(value, position, starred target)`` for each ``self.a, self.b = value`` in the class."""
    out: Dict[str, List[Tuple[cst.BaseExpression, int, bool]]] = {}
    for a in iter_nodes(cls):
        if not isinstance(a, cst.Assign):
            continue
        for t in a.targets:
            if not isinstance(t.target, (cst.Tuple, cst.List)):
                continue
            starred = any(isinstance(x, cst.StarredElement) for x in t.target.elements)
            for i, e in enumerate(t.target.elements):
                target = e.value
                if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) \
                        and target.value.value == "self":
                    out.setdefault(target.attr.value, []).append((a.value, i, starred))
    return out


#: class -> what its tuple assignments unpack into attributes of ``self``, per file
_UNPACKED_ATTRS: Fact[dict] = Fact("definitions.unpacked_attrs", lambda ctx: {})


def inherited_attr_values(ctx: FileContext, expr: cst.Attribute,
                          depth: int = 0) -> List[Tuple[FileContext, cst.BaseExpression]]:
    """For ``self.<attr>`` in a method of a class that never sets it: the values a base class of the
    project (this file or another) gives it, the nearest base that sets it first (``self.network``
    built by the base's ``_build`` and run by the subclass's ``predict``); empty when none does."""
    if not (isinstance(expr.value, cst.Name) and expr.value.value == "self") or depth > MAX_DEPTH:
        return []
    cls = ctx.enclosing(expr, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef):
        return []
    todo: List[Tuple[FileContext, cst.ClassDef]] = [(ctx, cls)]
    seen = {id(cls)}
    while todo and len(seen) < 12:
        c_ctx, c = todo.pop(0)
        for _expr, found in base_classes(c_ctx, c, depth + 1):
            if found is None or not isinstance(found[1], cst.ClassDef) or id(found[1]) in seen:
                continue
            seen.add(id(found[1]))
            b_ctx, base = found
            scope = b_ctx.names.scope_of(base)
            values = list(scope.attrs.get(expr.attr.value, ())) if scope is not None else []
            if values:
                if b_ctx is not ctx:
                    depends_on(ctx, b_ctx.path)
                return [(b_ctx, v) for v in values]
            todo.append((b_ctx, base))
    return []


def _later_than(ctx: FileContext, read: cst.Name):
    """For a name read by code at module level (a script, a notebook cell; not a function body, which
    may run after any statement): whether a value is assigned only after the read and cannot reach it
    (no loop holds both).  Never, for a read anywhere else."""
    if ctx.enclosing(read, (cst.FunctionDef, cst.Lambda)) is not None \
            or ctx.names.module_scope.bindings.get(read.value) is not ctx.names.binding_at(read, read.value):
        return lambda value: False
    at = position(ctx, read)
    return lambda value: position(ctx, value) > at and not ctx.shares_loop(read, value)


def position(ctx: FileContext, node: cst.CSTNode) -> int:
    """A key that orders the nodes of a file by source position (``NameResolver.position``: the walk's
    pre-order index, a numbering of the module's own where the walk has not been)."""
    return ctx.names.position(node)


def call_sites(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Call]:
    """Calls in this module that target ``function`` (by name, or ``self.<name>`` for methods), in
    source order: the file's one call-site index, built on first use."""
    index = _CALL_INDEX.get(ctx)
    if index is None:
        index = {}
        for call in ctx.calls_in(ctx.module):
            target = ctx.function_for_call(call)
            if target is not None:
                index.setdefault(target, []).append(call)
        _CALL_INDEX.put(ctx, index)
    return index.get(function, [])


def value_invocations(ctx: FileContext, function: cst.FunctionDef) -> Optional[List[Invocation]]:
    """Where the function ``function`` (not a method) runs, also when it is handed around as a value: an
    :class:`Invocation` for each call by its own name, for each call ``step_fn(x, y)`` of a parameter of a
    function of the file that a call ``via`` (``mini_batch(loader, val_step)``) gives it for that
    parameter, and for each call of a name a method binds from ``self.<attr>`` that holds it (``step_fn =
    self.val_step_fn`` under ``if validation:``: ``flag`` says so); a nested function its enclosing factory
    returns is followed into the names and ``self`` attributes the factory's calls bind (``val_step =
    make_val_step(model)``, ``self.val_step_fn = self._make_val_step_fn()``).  None where the value goes
    anywhere else (stored elsewhere, copied, returned from elsewhere, given to code outside the file, a
    parameter used for more than calling it): there it may run in any state."""
    outer = ctx.enclosing(function, (cst.FunctionDef, cst.ClassDef))
    if isinstance(outer, cst.ClassDef) or function.decorators:
        return None
    out: List[Invocation] = []
    work: List[Tuple[cst.CSTNode, cst.Name]] = [(outer or ctx.module, function.name)]
    while work:
        scope, bound = work.pop()
        if len(out) > 32:
            return None
        binding = ctx.names.binding_at(bound, bound.value)
        if binding is None:
            return None
        for use in ctx.names_in(scope, bound.value):
            if use is bound or ctx.names.binding_at(use, use.value) is not binding:
                continue
            parent = ctx.parent(use)
            if isinstance(parent, cst.Call) and parent.func is use:
                out.append(Invocation(parent, None, _flag_of(ctx, bound, scope)))
                continue
            if isinstance(parent, cst.Return) and bound is function.name and isinstance(outer, cst.FunctionDef) \
                    and ctx.enclosing(parent, cst.FunctionDef) is outer:
                sites = call_sites(ctx, outer)  # a factory returning it: the names its calls bind hold it
                if not sites:
                    return None
                for site in sites:
                    assign = ctx.parent(site)
                    if not (isinstance(assign, cst.Assign) and assign.value is site and len(assign.targets) == 1):
                        return None
                    target = assign.targets[0].target
                    if isinstance(target, cst.Name):
                        work.append((ctx.enclosing(assign, cst.FunctionDef) or ctx.module, target))
                    elif not _held_by_self(ctx, assign, target, work):
                        return None
                continue
            if isinstance(parent, cst.Arg) and parent.value is use and isinstance(ctx.parent(parent), cst.Call):
                via: cst.Call = ctx.parent(parent)  # type: ignore[assignment]
                target = ctx.function_for_call(via)
                if target is None or target is function or target.decorators:
                    return None
                method = isinstance(ctx.enclosing(target, (cst.FunctionDef, cst.ClassDef)), cst.ClassDef)
                bound_args = bind_arguments(via, target, 1 if method and isinstance(via.func, cst.Attribute) else 0)
                param = next((k for k, v in (bound_args or {}).items() if v is use), None)
                if param is None:
                    return None
                for given in ctx.names_in(target, param):
                    holder = ctx.parent(given)
                    if isinstance(holder, cst.Param) and holder.name is given:
                        continue
                    if not (isinstance(holder, cst.Call) and holder.func is given) \
                            or ctx.enclosing(holder, cst.FunctionDef) is not target:
                        return None  # handed on, stored, rebound, or read by a nested function
                    out.append(Invocation(holder, via, None))
                continue
            if isinstance(parent, cst.AssignTarget) and parent.target is use:
                continue  # the name bound to something else too (`else: step_fn = self.train_step_fn`)
            return None
    return out


@dataclass(frozen=True)
class Invocation:
    """A call that runs a function handed around as a value (:func:`value_invocations`): ``via``, the call
    that hands it over as an argument (None: ``call`` reaches it through names of its own function);
    ``flag``, ``(function, parameter, truth)`` when the name ``call`` calls holds it only where that
    parameter of the function around it is true (or false): ``if validation: step_fn = self.val_step_fn``."""

    call: cst.Call
    via: Optional[cst.Call]
    flag: Optional[Tuple[cst.FunctionDef, str, bool]]


def _held_by_self(ctx: FileContext, assign: cst.Assign, target: cst.BaseExpression,
                  work: List[Tuple[cst.CSTNode, cst.Name]]) -> bool:
    """For ``self.<attr> = factory()`` in a method: every read of ``self.<attr>`` in the class binds a local
    name of its method (``step_fn = self.val_step_fn``), which is put on the work list; False when a read
    does anything else or the attribute is set elsewhere too."""
    method = ctx.enclosing(assign, cst.FunctionDef)
    cls = ctx.enclosing(method, cst.ClassDef) if method is not None else None
    me = method.params.params[0].name.value if method is not None and method.params.params else None
    if not (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == me
            and isinstance(cls, cst.ClassDef)):
        return False
    attr = target.attr.value
    if any(isinstance(n, cst.Attribute) and n.attr.value == attr and not ctx.is_inside(n, cls)
           for n in iter_nodes(ctx.module)):
        return False  # (`trainer.val_step_fn(x, y)` outside the class: run in a state not followed)
    for node in iter_nodes(cls):
        if not (isinstance(node, cst.Attribute) and node.attr.value == attr):
            continue
        if node is target:
            continue
        holder = ctx.parent(node)
        read_in = ctx.enclosing(node, cst.FunctionDef)
        self_name = read_in.params.params[0].name.value if read_in is not None and read_in.params.params else None
        if not (isinstance(node.value, cst.Name) and node.value.value == self_name) or read_in is None \
                or ctx.enclosing(read_in, (cst.ClassDef, cst.FunctionDef)) is not cls:
            return False
        if not (isinstance(holder, cst.Assign) and holder.value is node and len(holder.targets) == 1
                and isinstance(holder.targets[0].target, cst.Name)):
            return False  # set again, called, handed on: not followed
        work.append((read_in, holder.targets[0].target))
    return True


def _flag_of(ctx: FileContext, bound: cst.Name, scope: cst.CSTNode) -> Optional[Tuple[cst.FunctionDef, str, bool]]:
    """For a local name bound only in one arm of ``if <param>:`` of its function (``if validation: step_fn =
    self.val_step_fn``): ``(function, param, truth)``; None otherwise."""
    if not isinstance(scope, cst.FunctionDef):
        return None
    arm: Optional[cst.CSTNode] = bound
    while arm is not None and arm is not scope:
        parent = ctx.parent(arm)
        if isinstance(parent, cst.If) and arm in (parent.body, parent.orelse):
            test = parent.test
            negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
            name = test.expression if negated else test  # type: ignore[attr-defined]
            if isinstance(name, cst.Name) and any(p.name.value == name.value for p in scope.params.params):
                truth = (arm is parent.body) != negated
                return scope, name.value, truth
            return None
        arm = parent
    return None


#: how many other project files are read to find a module-level function's callers
CALLER_FILES_MAX = 12


def project_call_sites(ctx: FileContext, function: cst.FunctionDef) -> List[Tuple[FileContext, cst.Call]]:
    """Calls of the module-level ``function`` from the other files of the project (``from train import
    test`` then ``test(args, model, ...)``): each call whose callee resolves, through the caller's
    imports, to this very definition.  Empty for a method, a nested function, a file outside a project
    that can be listed, or when more than :data:`CALLER_FILES_MAX` files mention the function's name and
    import its module by name."""
    if not ctx.path or function not in ctx.module.body:
        return []
    project = project_of(ctx)
    here = os.path.abspath(ctx.path)
    word = function.name.value
    mentioning = _caller_files(ctx, word)
    if mentioning is None:
        return []
    out: List[Tuple[FileContext, cst.Call]] = []
    for path in mentioning:
        other = project.load(path)
        if other is None:
            continue
        for call in other.calls_in(other.module):
            func = call.func
            if not (isinstance(func, cst.Name) and func.value == word
                    or isinstance(func, cst.Attribute) and func.attr.value == word):
                continue
            found = definition_of(other, func)
            if (found is not None and isinstance(found[1], cst.FunctionDef)
                    and os.path.abspath(found[0].path) == here and found[1].name.value == word):
                out.append((other, call))
    return out


def project_class_method_calls(ctx: FileContext, function: cst.FunctionDef) -> Optional[List[Tuple[FileContext, cst.Call]]]:
    """For a class method (``@classmethod``) of a module-level class of this file: its calls through the class
    in the project's other files (``QNet.train_model(net, batch, optimizer)`` in a script that imports
    ``QNet``), each with its file.  None when none is found, when a call of that name there goes through an
    object that is not known to be a class, or when more than :data:`CALLER_FILES_MAX` files spell it."""
    cls = ctx.parent(ctx.parent(function) or function)
    if not isinstance(cls, cst.ClassDef) or cls not in ctx.module.body or not any(
            isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in function.decorators):
        return None

    def class_named(other: FileContext, owner: cst.BaseExpression):
        found = definition_of(other, owner)
        return found if found is not None and isinstance(found[1], cst.ClassDef) else None

    return _calls_in_other_files(ctx, cls, function.name.value, class_named)


def _calls_in_other_files(ctx: FileContext, cls: cst.ClassDef, word: str,
                          class_of) -> Optional[List[Tuple[FileContext, cst.Call]]]:
    """The calls ``<owner>.<word>(...)`` in the project's other files whose owner ``class_of(file, owner)`` says
    is ``cls`` (an instance of it, or the class itself), each with its file; None when an owner's class is
    unknown, no call is found, or more than :data:`CALLER_FILES_MAX` files spell the word."""
    if not ctx.path:
        return None
    mentioning = _caller_files(ctx, word)
    if not mentioning:
        return None
    project = project_of(ctx)
    key = _class_key(ctx, cls)
    out: List[Tuple[FileContext, cst.Call]] = []
    for path in mentioning:
        depends_on(ctx, os.path.abspath(path))
        other = project.load(path)
        if other is None:
            return None
        for call in _METHOD_CALLS.of(other).get(word, ()):
            found = class_of(other, call.func.value)  # type: ignore[attr-defined]
            if found is None:
                return None
            if _class_key(*found) == key:
                out.append((other, call))
    return out or None


def _caller_files(ctx: FileContext, word: str) -> Optional[List[str]]:
    """The other files of the project that may call ``word`` of this file: those that spell it; when more
    than :data:`CALLER_FILES_MAX` do (a common name, `test`, `train`, in a large project), those of them
    with an import line that spells this module's name and resolves to it; None when still too many."""
    project = project_of(ctx)
    here = os.path.abspath(ctx.path)
    mentioning = [f for f in project.others_mentioning(ctx.path, (word,)) if os.path.basename(f) != "__init__.py"]
    if len(mentioning) > CALLER_FILES_MAX:
        stem = os.path.splitext(os.path.basename(here))[0]
        line = re.compile(r"^[ \t]*(?:from|import)[ \t][^\n]*\b%s\b" % re.escape(stem), re.MULTILINE)
        mentioning = [f for f in mentioning if _imports_module(project, f, here, line)]
        if len(mentioning) > CALLER_FILES_MAX:
            return None
    return mentioning


def _importers_spelling(ctx: FileContext, word: str) -> Optional[List[str]]:
    """The other files of the project that spell ``word`` and import this module (a copy of the same code in a
    notebook beside it imports nothing of it); None when too many spell it."""
    mentioning = _caller_files(ctx, word)
    if not mentioning:
        return mentioning
    project = project_of(ctx)
    here = os.path.abspath(ctx.path)
    stem = os.path.splitext(os.path.basename(here))[0]
    line = re.compile(r"^[ \t]*(?:from|import)[ \t][^\n]*\b%s\b" % re.escape(stem), re.MULTILINE)
    return [f for f in mentioning if _imports_module(project, f, here, line)]


def _imports_module(project, path: str, module: str, line: "re.Pattern[str]") -> bool:
    """Whether an import line of the project file ``path`` spells the module's name (``line``) and its
    imports resolve to the module file ``module``."""
    text = project.module_text(path)
    if text is None:
        return True  # unknown: kept
    return line.search(text) is not None and any(os.path.abspath(m) == module for m in project.imported_modules(path, text))


def constructions(ctx: FileContext, cls: cst.ClassDef) -> Optional[List[Tuple[FileContext, cst.Call]]]:
    """The calls that build an instance of ``cls`` (a class of this file), with the file each is in: in
    this file and, for a top-level class, in the project files that mention its name (those that build
    a subclass without an ``__init__`` of its own included).  None when some construction may be out of
    view: a subclass defines its own ``__init__`` (it may pass anything on), or more than
    :data:`CALLER_FILES_MAX` other files mention the name."""
    cache = _CONSTRUCTIONS.of(ctx)
    if cls not in cache:
        cache[cls] = _find_constructions(ctx, cls)
    return cache[cls]


def _find_constructions(ctx: FileContext, cls: cst.ClassDef) -> Optional[List[Tuple[FileContext, cst.Call]]]:
    files: List[FileContext] = [ctx]
    if ctx.path and cls in ctx.module.body:
        project = project_of(ctx)
        _, sources = project.sources(ctx.path)
        here = os.path.abspath(ctx.path)
        word = cls.name.value
        mentioning = [f for f in sources or () if os.path.abspath(f) != here
                      and os.path.basename(f) != "__init__.py" and project.mentions(f, (word,))]
        if len(mentioning) > CALLER_FILES_MAX:
            return None
        builds = re.compile(r"\b%s\s*\(|\bclass\s+\w+\s*\([^:]*?\b%s\b" % (word, word))
        for path in mentioning:
            depends_on(ctx, os.path.abspath(path))
            text = project.module_text(path)
            if text is not None and not builds.search(text):
                continue  # names the class without calling it or deriving from it: nothing to read there
            other = project.load(path)
            if other is not None:
                files.append(other)
    # a class is known by its file and name: another file's import of this one reads its own parse
    classes = {_class_key(ctx, cls)}
    grew = True
    while grew:  # subclasses, and theirs, in the files in view
        grew = False
        for f in files:
            for node in f.module.body:
                if not isinstance(node, cst.ClassDef) or _class_key(f, node) in classes:
                    continue
                bases = [definition_of(f, b.value) for b in node.bases if b.keyword is None]
                if any(d is not None and _class_key(*d) in classes for d in bases):
                    if method_of(node, "__init__") is not None:
                        return None
                    classes.add(_class_key(f, node))
                    grew = True
    names = {name for _, name in classes}
    out: List[Tuple[FileContext, cst.Call]] = []
    for f in files:
        for call in f.calls_in(f.module):
            func = call.func
            last = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
            if last not in names:
                continue
            d = definition_of(f, func)
            if d is not None and _class_key(*d) in classes:
                out.append((f, call))
    return out


def _class_key(ctx: FileContext, node: cst.CSTNode) -> Tuple[str, str]:
    """A class by its file and name (a class nested in a function is known by its node)."""
    if isinstance(node, cst.ClassDef) and node in ctx.module.body and ctx.path:
        return os.path.abspath(ctx.path), node.name.value
    return str(id(node)), getattr(getattr(node, "name", None), "value", "")


#: class -> :func:`constructions`, per file
_CONSTRUCTIONS: "Fact[Dict[cst.ClassDef, Optional[List[Tuple[FileContext, cst.Call]]]]]" = Fact(
    "definitions.constructions", lambda ctx: {})


def parameter_owner(ctx: FileContext, name: cst.Name) -> Optional[cst.FunctionDef]:
    """The function whose body ``name`` is read in, the one whose parameters it may name: not a function
    around a lambda (a lambda's parameters are its own), nor the function whose default or annotation holds
    ``name`` (those are read where the function is defined)."""
    function = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda))
    if not isinstance(function, cst.FunctionDef) or not ctx.is_inside(name, function.body):
        return None
    return function


def project_arguments_for_param(ctx: FileContext, name: cst.Name) -> Optional[List[Tuple[FileContext, cst.BaseExpression]]]:
    """:func:`arguments_for_param` for a module-level function, or a method of a module-level class,
    called from other files of the project only: ``(caller's file, argument)`` for each such call (for
    a method, each call through an instance, :func:`project_instance_calls`); None when some call
    passes none, or none is found."""
    function = parameter_owner(ctx, name)
    if function is None or not ctx.names.is_param_at(name):
        return None
    params = list(function.params.posonly_params) + list(function.params.params)
    names = [p.name.value for p in params]
    if name.value not in names:
        return None
    index = names.index(name.value)
    if function in ctx.module.body:
        return _passed_at(project_call_sites(ctx, function), index, name.value)
    if index == 0:
        return None  # `self`
    return _passed_at(project_instance_calls(ctx, function), index - 1, name.value)


def project_instance_calls(ctx: FileContext, function: cst.FunctionDef) -> Optional[List[Tuple[FileContext, cst.Call]]]:
    """For a plain method of a module-level class of this file: its calls through an instance in the
    project's other files (``model.add_loss_op(loss)`` with ``model = TextRNN(...)`` in a script that
    imports the class), each with its file.  None when a call of a method of that name there has a
    receiver whose class is not known (it may be this class: what it passes is not in view), when no
    call is found, or when more than :data:`CALLER_FILES_MAX` files spell the method's name."""
    cls = _plain_method_class(ctx, function)
    if cls is None:
        return None
    return _calls_in_other_files(ctx, cls, function.name.value, instance_class)


def _passed_at(calls: Optional[List[Tuple[FileContext, cst.Call]]], index: int,
               name: str) -> Optional[List[Tuple[FileContext, cst.BaseExpression]]]:
    """``(file, argument)`` each of ``calls`` passes at ``index`` or as ``name``; None when there is no
    call, or one passes none or unpacks ``*args``."""
    if not calls:
        return None
    out: List[Tuple[FileContext, cst.BaseExpression]] = []
    for other, call in calls:
        if any(a.star for a in call.args):
            return None
        a = arg(call, index, name)
        if a is None:
            return None
        out.append((other, a.value))
    return out


def constructor_arguments(ctx: FileContext, name: cst.Name) -> Optional[List[Tuple[FileContext, cst.BaseExpression]]]:
    """For a parameter of a class's ``__init__`` read where it is not rebound (``model`` in
    ``self.model = model``): ``(file, argument)`` that every construction of the class in view passes for
    it (:func:`constructions`: ``Trainer(net, loss_fn)``); None when one passes none, unpacks ``*args``,
    or some construction may be out of view."""
    function = parameter_owner(ctx, name)
    if function is None or function.name.value != "__init__" or not ctx.names.is_param_at(name):
        return None
    cls = ctx.parent(ctx.parent(function) or function)
    if not isinstance(cls, cst.ClassDef):
        return None
    names = [p.name.value for p in [*function.params.posonly_params, *function.params.params]]
    if name.value not in names or names.index(name.value) == 0:
        return None
    # (``self`` is not passed)
    return _passed_at(constructions(ctx, cls), names.index(name.value) - 1, name.value)


def callers_arguments(ctx: FileContext, name: cst.Name) -> List[Tuple[FileContext, cst.BaseExpression]]:
    """``(caller's file, argument)`` for the parameter ``name``: what every call in this file passes
    (:func:`arguments_for_param`), else what the project's other files pass
    (:func:`project_arguments_for_param`), or for a constructor's parameter what every construction of
    its class passes (:func:`constructor_arguments`); empty when none is known."""
    built = constructor_arguments(ctx, name)
    if built is not None:
        return built
    args = arguments_for_param(ctx, name)
    if args:
        return [(ctx, a) for a in args]
    return project_arguments_for_param(ctx, name) or []


def arguments_for_param(ctx: FileContext, name: cst.Name) -> Optional[List[cst.BaseExpression]]:
    """For a parameter of a function: the arguments every call of the function in this file passes for
    it; None when it is no parameter, the function is never called here, or some call passes none."""
    function = parameter_owner(ctx, name)
    if function is None or not (ctx.names.is_param_at(name) or ctx.names.reads_parameter(name)):
        return None
    out: List[cst.BaseExpression] = []
    calls = call_sites(ctx, function) + instance_calls(ctx, function)
    if not calls:
        return None
    for call in calls:
        a = passed_argument(call, function, name.value)
        if a is None:
            return None
        out.append(a.value)
    return out


def instance_calls(ctx: FileContext, function: cst.FunctionDef) -> List[cst.Call]:
    """For a method of a module-level class of this file (not a special one): its calls through an
    instance the file builds (``agent.test("videos")`` with ``agent = Agent(env)``); empty otherwise."""
    cls = _plain_method_class(ctx, function)
    if cls is None:
        return []
    index = _METHOD_CALLS.of(ctx)
    out = []
    for call in index.get(function.name.value, ()):
        owner = call.func.value  # type: ignore[attr-defined]
        if isinstance(owner, cst.Name) and owner.value == "self":
            continue  # (a call on `self` is one of `call_sites`)
        found = instance_class(ctx, owner)
        if found is not None and found[1] is cls:
            out.append(call)
    return out


def every_method_call(ctx: FileContext, function: cst.FunctionDef) -> Optional[List[cst.Call]]:
    """For a plain method of a module-level class of this file: every call that runs it, all in this module —
    ``self.<name>(...)`` calls the binder resolves to it, and ``obj.<name>(...)`` through an instance whose
    class (this one, or a subclass that does not override it) is known.  None when a call or a use of an
    attribute of that name may run it and is not accounted for: a receiver of unknown class, a call
    through a subscript, the method taken as a value (``step = net.evaluate``), another file of the project
    that spells the name."""
    cls = _plain_method_class(ctx, function)
    if cls is None:
        return None
    name = function.name.value
    calls = _METHOD_CALLS.of(ctx).get(name, ())
    if _ATTRIBUTE_USES.of(ctx).get(name, 0) != len(calls):
        return None
    if ctx.path and not ctx.path.startswith("<") and _importers_spelling(ctx, name) != []:
        return None  # another file of the project imports this one and spells the name: it may call the method
    out: List[cst.Call] = []
    for call in calls:
        owner = call.func.value  # type: ignore[attr-defined]
        if isinstance(owner, cst.Name) and owner.value == "self":
            target = ctx.function_for_call(call)
            if target is None:
                return None
            if target is function:
                out.append(call)
            continue
        found = instance_class(ctx, owner)
        if found is None:
            return None
        hit = find_method(found[0], found[1], name)
        if hit is None:
            return None
        if hit[1] is function:
            out.append(call)
    return out


def _attribute_uses(ctx: FileContext) -> Dict[str, int]:
    out: Dict[str, int] = {}
    for node in iter_nodes(ctx.module):
        if isinstance(node, cst.Attribute):
            out[node.attr.value] = out.get(node.attr.value, 0) + 1
    return out


#: attribute name -> how many times the file spells ``<expr>.<name>`` (asked only for the names of methods)
_ATTRIBUTE_USES: "Fact[Dict[str, int]]" = Fact("definitions.attribute_uses", _attribute_uses)


def _plain_method_class(ctx: FileContext, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
    """The module-level class of this file whose plain method ``function`` is (not decorated, not a special
    method, ``self`` first): what its calls through an instance are read for; None otherwise."""
    cls = ctx.parent(ctx.parent(function) or function)
    params = [*function.params.posonly_params, *function.params.params]
    if not isinstance(cls, cst.ClassDef) or cls not in ctx.module.body or function.decorators \
            or function.name.value.startswith("__") or not params or params[0].name.value != "self":
        return None
    return cls


def _method_calls(ctx: FileContext) -> Dict[str, List[cst.Call]]:
    out: Dict[str, List[cst.Call]] = {}
    for call in ctx.calls_in(ctx.module):
        if isinstance(call.func, cst.Attribute) and (isinstance(call.func.value, (cst.Name, cst.Attribute)) or (
                isinstance(call.func.value, cst.Call) and isinstance(call.func.value.func, (cst.Name, cst.Attribute)))):
            out.setdefault(call.func.attr.value, []).append(call)  # (`Predictor(net).predict(x)` too)
    return out


#: method name -> the calls ``<obj>.<name>(...)`` of the file, per file
_METHOD_CALLS: "Fact[Dict[str, List[cst.Call]]]" = Fact("definitions.method_calls", _method_calls)


def passed_argument(call: cst.Call, function: cst.FunctionDef, name: str) -> Optional[cst.Arg]:
    """The argument ``call`` (a call of ``function``; ``self.f(...)`` of a method) passes for the
    positional-or-keyword parameter ``name``, by position or keyword; None when it passes none (the
    default) or ``name`` is no such parameter."""
    names = [p.name.value for p in [*function.params.posonly_params, *function.params.params]]
    if name not in names:
        return None
    index = names.index(name)
    offset = call_offset(call, function)
    return arg(call, index - offset, name) if index >= offset else None


def call_offset(call: cst.Call, function: cst.FunctionDef) -> int:
    """How many leading parameters of ``function`` a call of it does not pass: 1 for the ``self`` or ``cls`` of
    a method called through an attribute (``obj.step(x)``, ``self.step(x)``, ``Policy.train_model(net)`` of a
    class method), 0 otherwise (a function, a static method)."""
    names = [p.name.value for p in [*function.params.posonly_params, *function.params.params]]
    if not isinstance(call.func, cst.Attribute) or not names or names[0] not in ("self", "cls"):
        return 0
    static = any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in function.decorators)
    return 0 if static else 1


def method_of(cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    """The method ``name`` defined in the body of ``cls`` (not its bases); None when it has none."""
    for s in class_body(cls):
        if isinstance(s, cst.FunctionDef) and s.name.value == name:
            return s
    return None


def instance_class(ctx: FileContext, owner: cst.BaseExpression):
    """``(file context, ClassDef)`` when every value ``owner`` holds (:func:`held_values`) is an instance of
    one project class: built from it (``model = GAN().to(device)``), or returned by project factories
    that build it (``model = load_model(hparams)`` of another module)."""
    return _instance_class(ctx, owner, 0)


def _instance_class(ctx: FileContext, owner: cst.BaseExpression, depth: int):
    if isinstance(owner, cst.Call):
        return _class_built(ctx, owner, depth)  # `Predictor(net).predict(x)`: the instance built on the spot
    if not isinstance(owner, (cst.Name, cst.Attribute)):
        return None
    values = held_values(ctx, owner)
    if values and isinstance(owner, cst.Name):
        # the assignments that may still hold where it is read (`model = KeyedVectors.load(...)` earlier in a
        # notebook, then `model = Net()` on every path to the read: the network)
        reaching = {id(v) for v in ctx.names.values_reaching(owner)}
        bound = {id(v) for v in ctx.names.bound_values(owner) if v is not None}
        values = [(c, v) for c, v in values if c is not ctx or id(v) in reaching or id(v) not in bound]
    if not values and isinstance(owner, cst.Name):
        known = _LOOP_ELEMENTS.of(ctx)
        if owner not in known:
            known[owner] = _loop_elements(ctx, owner)  # `for m in members:` over `members = [Net(), Net()]`
        values = known[owner]
    if not values and isinstance(owner, cst.Name) and owner.value not in ("self", "cls") \
            and ctx.names.is_param_at(owner) and not ctx.names.unpacked_values(owner) and depth < 2:
        # `def translate(model, x)`: the instances every caller passes (their own parameters followed in turn;
        # a parameter asked again while its callers are read, through a call of its own method, is unknown)
        function = parameter_owner(ctx, owner)
        key = (id(function), owner.value)
        asking = _ASKING_CALLERS.of(ctx)
        known = _PASSED_FOR.of(ctx)
        if function is None or key in asking:
            return None
        if key in known:
            values = known[key]
        else:
            outermost = not asking  # (an answer computed while a cycle may be cut is not kept)
            asking.add(key)
            try:
                values = callers_arguments(ctx, owner)
            finally:
                asking.discard(key)
            if outermost:
                known[key] = values
    found = None
    for vctx, v in values or ():
        d = _class_built(vctx, v, depth)
        if d is None or (found is not None and found[1] is not d[1]):
            return None
        found = d
    return found


#: the parameters (function, name) whose class :func:`instance_class` is reading from their callers
_ASKING_CALLERS: "Fact[Set[Tuple[int, str]]]" = Fact("definitions.asking_callers", lambda ctx: set())
#: (function, name) -> what its callers pass for that parameter, read once per file
_PASSED_FOR: "Fact[Dict[Tuple[int, str], List[Tuple[FileContext, cst.BaseExpression]]]]" = Fact(
    "definitions.passed_for", lambda ctx: {})

_LIST_MUTATORS = frozenset({"append", "extend", "insert", "__setitem__", "__iadd__"})


def _loop_elements(ctx: FileContext, name: cst.Name) -> List[Tuple[FileContext, cst.BaseExpression]]:
    """A read of ``m`` in the body of ``for m in models:`` (or ``for i, m in enumerate(models):``; its own
    target, not bound again in the body): the elements of the list or tuple display ``models`` is, or holds on
    every assignment (``[Net(), Net()]``, ``[Net() for _ in range(k)]``), or of the empty list it starts as
    grown only by ``models.append(Net())``; empty otherwise (a list also extended, indexed or added to)."""
    walked = _walking_loop(ctx, name)
    if walked is None:
        return []
    a, it = walked
    displays = built_values(ctx, it) if isinstance(it, cst.Name) else [it]
    out: List[Tuple[FileContext, cst.BaseExpression]] = []
    grown = False
    for d in displays:
        if isinstance(d, (cst.List, cst.Tuple)) and d.elements \
                and not any(isinstance(e, cst.StarredElement) for e in d.elements):
            out.extend((ctx, e.value) for e in d.elements)
        elif isinstance(d, cst.List) and isinstance(it, cst.Name) and len(displays) == 1:
            grown = True  # `models = []`, then `models.append(Net())`
        elif isinstance(d, cst.ListComp) and d.for_in.inner_for_in is None and not d.for_in.ifs:
            out.append((ctx, d.elt))
        else:
            return []  # (checked first: most loops walk a loader or a range, and stop here)
    appended, changed = list_growth(ctx, it) if isinstance(it, cst.Name) else ([], False)
    if grown:
        out = [] if changed else [(ctx, v) for v in appended]
    if not out or _bound_in_body(ctx, a, name.value):
        return []  # (bound again in the body: not the element)
    if not grown and (changed or appended):
        return []  # a display grown or changed afterwards
    return out


def _walking_loop(ctx: FileContext, name: cst.Name) -> Optional[Tuple[cst.For, cst.BaseExpression]]:
    """The innermost ``for`` around ``name`` (in its function) whose variable ``name`` is the element itself
    (:func:`_loop_target`), read in its body, with what it walks; None otherwise."""
    for a in ctx.ancestors(name):
        if isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        if isinstance(a, cst.For):
            it = _loop_target(ctx, a, name.value)
            if it is not None:
                return (a, it) if ctx.is_inside(name, a.body) else None
    return None


def _bound_in_body(ctx: FileContext, loop: cst.For, name: str) -> bool:
    bound = _BOUND_IN_BODY.of(ctx)
    if loop not in bound:
        bound[loop] = _names_bound(ctx, loop)
    return name in bound[loop]


def walked_by_loop(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """For a read of ``p`` in the body of ``for p in probs:`` (or ``for i, p in enumerate(probs):``), the
    loop's own variable not bound again in the body: what the loop walks (``probs``); None otherwise."""
    walked = _walking_loop(ctx, name)
    if walked is None or _bound_in_body(ctx, walked[0], name.value):
        return None
    return walked[1]


def _loop_target(ctx: FileContext, loop: cst.For, name: str) -> Optional[cst.BaseExpression]:
    """What ``loop`` walks when its variable ``name`` is the element itself: ``for m in models`` and ``for i,
    m in enumerate(models)`` give ``models``; None for any other loop."""
    if isinstance(loop.target, cst.Name):
        return loop.iter if loop.target.value == name else None
    it = loop.iter
    if isinstance(loop.target, cst.Tuple) and len(loop.target.elements) == 2 \
            and isinstance(loop.target.elements[1].value, cst.Name) and loop.target.elements[1].value.value == name \
            and isinstance(it, cst.Call) and ctx.names.matches(it.func, frozenset({"builtins.enumerate"})) \
            and len(it.args) == 1 and it.args[0].keyword is None and not it.args[0].star:
        return it.args[0].value
    return None


def list_growth(ctx: FileContext, name: cst.Name) -> Tuple[List[cst.BaseExpression], bool]:
    """What ``name.append(v)`` adds to the list ``name`` in its function (or at module level), and whether it is
    changed in place any other way there: ``extend``, ``insert``, ``x[i] = ...``, ``x += ...``, an ``append``
    given anything but one value."""
    scope = ctx.enclosing(name, (cst.FunctionDef, cst.Lambda)) or ctx.module
    table = _LIST_GROWTH.of(ctx)
    if scope not in table:
        table[scope] = _growth_in(scope)
    appended, spoiled = table[scope]
    return appended.get(name.value, []), name.value in spoiled


def _growth_in(scope: cst.CSTNode) -> Tuple[Dict[str, List[cst.BaseExpression]], FrozenSet[str]]:
    appended: Dict[str, List[cst.BaseExpression]] = {}
    spoiled = set()
    for node in iter_nodes(scope):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
                and isinstance(node.func.value, cst.Name) and node.func.attr.value == "append":
            if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                appended.setdefault(node.func.value.value, []).append(node.args[0].value)
            else:
                spoiled.add(node.func.value.value)
        elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) \
                and node.attr.value in _LIST_MUTATORS - {"append"}:
            spoiled.add(node.value.value)
        elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Subscript) \
                and isinstance(node.target.value, cst.Name):
            spoiled.add(node.target.value.value)
        elif isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
            spoiled.add(node.target.value)
    return appended, frozenset(spoiled)


def _names_bound(ctx: FileContext, loop: cst.For) -> FrozenSet[str]:
    """The plain names an assignment, a loop, a ``with`` or a walrus binds in the body of ``loop`` (read from the
    tree: the walk may not have reached it)."""
    out = set()
    for n in iter_nodes(loop.body):
        if isinstance(n, cst.Assign):
            targets = [t.target for t in n.targets]
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            targets = [n.target]
        elif isinstance(n, cst.AsName):
            targets = [n.name]
        else:
            continue
        out.update(b.value for t in targets for b in target_names(t))
    return frozenset(out)


#: loop -> the names bound in its body (per file)
_BOUND_IN_BODY: "Fact[Dict[cst.For, FrozenSet[str]]]" = Fact("definitions.bound_in_loop_body", lambda ctx: {})
#: function (or module) -> what its lists are grown by (see :func:`list_growth`)
_LIST_GROWTH: "Fact[Dict[cst.CSTNode, Tuple[Dict[str, List[cst.BaseExpression]], FrozenSet[str]]]]" = Fact(
    "definitions.list_growth", lambda ctx: {})
#: a name read in a loop -> what it holds as an element of the list the loop walks (per file)
_LOOP_ELEMENTS: "Fact[Dict[cst.Name, List[Tuple[FileContext, cst.BaseExpression]]]]" = Fact(
    "definitions.loop_elements", lambda ctx: {})


#: class methods that library base classes give their subclasses to build an instance of the class they are
#: called on (Hugging Face's ``from_pretrained``, Lightning's ``load_from_checkpoint``)
LIBRARY_CONSTRUCTORS = frozenset({"from_pretrained", "load_from_checkpoint"})


def class_of_library_constructor(ctx: FileContext, call: cst.Call):
    """``(file context, ClassDef)`` for ``Classifier.from_pretrained(...)`` / ``Net.load_from_checkpoint(...)``
    where the class is one of the project and the class method is one a library base gives it (no class of the
    project defines it): an instance of that class.  None otherwise."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in LIBRARY_CONSTRUCTORS):
        return None
    d = definition_of(ctx, func.value)
    if d is None or not isinstance(d[1], cst.ClassDef) or find_method(d[0], d[1], func.attr.value) is not None:
        return None
    return d


def _class_built(ctx: FileContext, value: cst.BaseExpression, depth: int):
    """The project class whose instance ``value`` is: a construction of it, or a call of a project
    function every return of which is one (or that hands back the instance it is given); None otherwise."""
    core = strip_moves(value)
    if depth > MAX_DEPTH:
        return None
    if isinstance(core, (cst.Name, cst.Attribute)):
        # `model = model.cuda()`: what it held before; `model = net`, an argument `net`: what that name holds
        return _instance_class(ctx, core, depth + 1)
    if not isinstance(core, cst.Call):
        return None
    d = definition_of(ctx, core.func) or class_of_library_constructor(ctx, core)
    if d is None:
        return None
    if isinstance(d[1], cst.ClassDef):
        return d
    if not isinstance(d[1], cst.FunctionDef):
        return None
    passed = returned_argument(ctx, core, d[1])
    if passed is not None:
        return _class_built(ctx, passed, depth + 1)
    found = None
    for rctx, r in returned_values(d[0], d[1], None, depth + 1) or ():
        c = _class_built(rctx, r, depth + 1)
        if c is None or (found is not None and found[1] is not c[1]):
            return None
        found = c
    return found


def called_function(ctx: FileContext, call: cst.Call, words: Tuple[str, ...] = ()):
    """``(file context, FunctionDef, offset)`` for a call of a function of this file or of a project
    module (``helper(x)``, ``self.helper(x)``); offset 1 for methods called through ``self``.  With
    ``words``, a project module that spells none of them is not read (the question is about them)."""
    func = call.func
    if isinstance(func, cst.Name):
        d = definition_of(ctx, func, 0, words)
        if d is not None and isinstance(d[1], cst.FunctionDef):
            return d[0], d[1], 0
        return None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        cls = ctx.enclosing(call, cst.ClassDef)
        if isinstance(cls, cst.ClassDef):
            for s in class_body(cls):
                if isinstance(s, cst.FunctionDef) and s.name.value == func.attr.value:
                    return ctx, s, 1
        return None
    if isinstance(func, cst.Attribute):
        d = definition_of(ctx, func, 0, words)
        if d is not None and isinstance(d[1], cst.FunctionDef):
            return d[0], d[1], 0
    return None


def maybe_project_function(ctx: FileContext, func: cst.BaseExpression) -> bool:
    """A cheap test, reading no other file: ``func`` may name a function of this file (``helper``,
    ``self.helper``) or of a project module (an import whose module file exists in the project)."""
    if isinstance(func, cst.Attribute):
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            return True
    elif not isinstance(func, cst.Name):
        return False
    names = ctx.names.qualified_names_at(func)
    if not names:
        return isinstance(func, cst.Name) and local_definition(ctx, func.value, func) is not None
    cache = _PROJECT_NAMES.of(ctx)
    known = cache.get(names)
    if known is not None:
        return known
    found = False
    for q in names:
        level = len(q) - len(q.lstrip("."))
        module = q.lstrip(".").rpartition(".")[0]
        if (module or level) and not q.startswith(("torch.", "numpy.", "builtins.")):
            if project_of(ctx).module_file(ctx.path, module, level) is not None:
                found = True
                break
    cache[names] = found
    return found


#: qualified names -> whether one of them is in a module of the project, per file
_PROJECT_NAMES: Fact[dict] = Fact("definitions.project_names", lambda ctx: {})


def argument_for(call: cst.Call, index: int, name: str, offset: int) -> Optional[cst.Arg]:
    return arg(call, index - offset, name)


def defines_method(ctx: FileContext, cls: cst.ClassDef, name: str, depth: int) -> bool:
    if any(isinstance(s, cst.FunctionDef) and s.name.value == name for s in class_body(cls)):
        return True
    if depth >= MAX_DEPTH:
        return False
    return any(
        found is not None and isinstance(found[1], cst.ClassDef) and defines_method(found[0], found[1], name, depth + 1)
        for _expr, found in base_classes(ctx, cls, depth)
    )


def function_params(function: cst.FunctionDef) -> List[cst.Param]:
    p = function.params
    return list(p.posonly_params) + list(p.params) + list(p.kwonly_params)


def bind_arguments(call: cst.Call, function: cst.FunctionDef, offset: int) -> Optional[Dict[str, cst.BaseExpression]]:
    """Parameter name -> argument for ``call`` of ``function`` (positional, then keyword); ``offset`` 1
    when the call fills ``self`` itself (``obj.method(...)``).  None when a ``*args``/``**kwargs``
    argument makes the binding undecidable."""
    positional = list(function.params.posonly_params) + list(function.params.params)
    keyword_ok = {p.name.value for p in list(function.params.params) + list(function.params.kwonly_params)}
    out: Dict[str, cst.BaseExpression] = {}
    index = offset
    for a in call.args:
        if a.star:
            return None
        if a.keyword is None:
            if index >= len(positional):
                return None  # into *args: not followed
            out[positional[index].name.value] = a.value
            index += 1
        elif a.keyword.value in keyword_ok:
            out[a.keyword.value] = a.value
    return out


def calls_of_function(ctx: FileContext, function: cst.FunctionDef,
                      cls: Optional[Tuple[FileContext, cst.ClassDef]] = None) -> List[cst.Call]:
    """The calls of ``function`` in this file (:func:`call_sites`), in source order; for a method no call resolves to (another class of the file defines a method of
    the same name), the ``self.<name>(...)`` calls inside its own class."""
    sites = call_sites(ctx, function)
    if cls is not None and not sites:
        name = function.name.value
        sites = [c for c in ctx.calls_in(cls[1]) if isinstance(c.func, cst.Attribute)
                 and isinstance(c.func.value, cst.Name) and c.func.value.value == "self" and c.func.attr.value == name]
    return sites


def bases_spelling(ctx: FileContext, cls: cst.ClassDef, depth: int, word: str, local: bool = False):
    """The project base classes of ``cls`` whose modules spell ``word`` (one that does not cannot define
    a method or attribute of that name); with ``local``, only those defined in the same file."""
    for base in cls.bases:
        expr = base.value.value if isinstance(base.value, cst.Subscript) else base.value
        if local:
            if not isinstance(expr, cst.Name) or ctx.names.qualified_names_at(expr):
                continue
        found = definition_of(ctx, expr, depth, (word,))
        if found is not None and isinstance(found[1], cst.ClassDef):
            yield found


def find_method(ctx: FileContext, cls: cst.ClassDef, name: str, depth: int = 0):
    """``(file context, FunctionDef)`` of the method ``name`` of ``cls`` or of a project base class (read
    when its module spells ``name``); asked once per class and name."""
    cache = _METHODS.of(ctx)
    key = (cls, name)
    if key in cache:
        return cache[key]
    cache[key] = None
    m = method_of(cls, name)
    found = (ctx, m) if m is not None else None
    if found is None and depth < MAX_DEPTH:
        for base in bases_spelling(ctx, cls, depth, name):
            found = find_method(base[0], base[1], name, depth + 1)
            if found is not None:
                break
    cache[key] = found
    return found


#: (class, name) -> where the method is defined, per file
_METHODS: Fact[dict] = Fact("definitions.methods", lambda ctx: {})


__all__ = [
    "walked_by_loop",
    "project_class_method_calls",
    "call_offset",
    "definition_named",
    "module_members",
    "list_elements",
    "list_growth",
    "project_instance_calls",
    "instance_calls",
    "every_method_call",
    "class_of_library_constructor",
    "LIBRARY_CONSTRUCTORS",
    "MAX_DEPTH",
    "Invocation",
    "value_invocations",
    "argument_for",
    "arguments_for_param",
    "callers_arguments",
    "constructor_arguments",
    "base_classes",
    "bases_spelling",
    "bind_arguments",
    "built_values",
    "call_sites",
    "constructions",
    "called_function",
    "calls_of_function",
    "class_body",
    "defines_method",
    "definition_of",
    "dependencies",
    "depends_on",
    "find_method",
    "function_params",
    "function_returns",
    "held_values",
    "inherit_dependencies",
    "instance_class",
    "local_definition",
    "maybe_project_function",
    "method_of",
    "parameter_owner",
    "passed_argument",
    "position",
    "project_arguments_for_param",
    "project_call_sites",
    "appended_values",
    "returned_argument",
    "returned_values",
    "same_reference",
    "star_imported_names",
    "strip_moves",
]
