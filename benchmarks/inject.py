"""Reach on code torchlint was not built on: inject one mistake at a time into correct public code.

    python benchmarks/inject.py [--realcode DIR] [--fresh-root DIR] [--seed N] [--picks N]
                                [--operators NAME,...] [--jobs N] [--json OUT] [--fix-check]

Every other number torchlint reports about itself comes from code its rules were built on.  This one
does not: it takes trees of correct public code (``--realcode``, default ``../shared/realcode`` beside
the checkout; and the fresh repositories listed in ``benchmarks/fresh.txt``, checked out under
``--fresh-root`` as ``owner+name`` folders), edits one place of one file so that it holds one known
mistake, and asks torchlint, in process, whether it reports it.

- **found**: the mutated file, linted with the whole tree present (the other files are read from disk,
  so cross-file facts count), has a finding of the operator's code, or of a rule the precedence table
  (``torchlint.precedence``) gives that mistake to, that the same file before the injection did not
  have (findings are matched by code, cell and the text of their line, so lines that moved still match).
- **missed**: no such new finding.
- **skipped**: torchlint already reported the operator's code (or an owner's) in the region the
  operator edits (the loop, the function, the statement) before the injection: a found there would
  say nothing.  Skipped places do not use up a pick; the next place is drawn.
- **invalid**: the mutated text does not compile (an operator's bug; counted apart, never found).

Sites are drawn with a ``random.Random`` seeded by ``--seed``, the operator and the repository, so
two runs (two versions of torchlint) with the same seed inject the same mutants.  ``--picks N``
mutants per operator and repository (default 2).

``--fix-check`` applies torchlint's own fix of each found finding (safe and unsafe fixes; rules
without a fix are "no fix"): the finding must go away, the file must compile, and the result is
compared with the original correct code: the same text (modulo formatting), or, for the numerics
operators, the same values of the edited expression on random inputs ("equivalent"); otherwise
"differs" (a fix that changes the values) or "unchecked" (the expression could not be evaluated
alone).

``--json OUT`` writes every mutant with its verdict, so two versions can be compared mutant by mutant.

torchlint is imported from the ``PYTHONPATH`` (not a copy); the rules are taken from the ``rules``
folder of the same checkout when there is one.
"""
from __future__ import annotations

import argparse
import ast
import functools
import importlib.util
import json
import os
import random
import re
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, Union

import libcst as cst
from libcst.helpers import get_full_name_for_node
from libcst.metadata import MetadataWrapper, PositionProvider

HERE = Path(__file__).resolve().parent


def _use_checkout_rules() -> Optional[str]:
    """Import ``torchlint.rules`` from the ``rules`` folder of the checkout whose ``src`` torchlint comes
    from (an editable install elsewhere would otherwise supply another checkout's rules)."""
    import torchlint

    root = Path(torchlint.__file__).resolve().parents[2]
    folder = root / "rules"
    if "torchlint.rules" in sys.modules or not (folder / "__init__.py").is_file():
        mod = sys.modules.get("torchlint.rules")
        return getattr(mod, "__file__", None)
    spec = importlib.util.spec_from_file_location("torchlint.rules", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["torchlint.rules"] = mod
    spec.loader.exec_module(mod)
    return str(folder / "__init__.py")


# ---------------------------------------------------------------------------------------------------------------
# small libcst helpers
# ---------------------------------------------------------------------------------------------------------------
def name_of(node: cst.CSTNode) -> str:
    try:
        return get_full_name_for_node(node) or ""
    except Exception:
        return ""


def last(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def method_call(node: cst.CSTNode, *methods: str) -> bool:
    return (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in methods)


def receiver(call: cst.Call) -> str:
    return name_of(call.func.value) if isinstance(call.func, cst.Attribute) else ""


def chain_root(call: cst.Call) -> str:
    """The object a chain of method calls starts from: ``model`` for ``model.to(dev).train()``."""
    e = call.func.value if isinstance(call.func, cst.Attribute) else call.func
    while isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute):
        e = e.func.value
    return name_of(e)


def kwarg(call: cst.Call, key: str) -> Optional[cst.Arg]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == key:
            return a
    return None


def positional(call: cst.Call) -> List[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def is_pure(expr: cst.BaseExpression) -> bool:
    """Names, attributes, subscripts with simple indices, numbers and arithmetic of them: evaluating it
    twice gives the same value and has no effect."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Attribute):
        return is_pure(expr.value)
    if isinstance(expr, cst.Subscript):
        return is_pure(expr.value) and all(
            isinstance(e.slice, cst.Index) and is_pure(e.slice.value) or isinstance(e.slice, cst.Slice)
            for e in expr.slice)
    if isinstance(expr, cst.BinaryOperation):
        return is_pure(expr.left) and is_pure(expr.right)
    if isinstance(expr, cst.UnaryOperation):
        return is_pure(expr.expression)
    return False


def paren(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.Integer, cst.Float)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _in_place(unit: "Unit", node: cst.CSTNode, new: cst.BaseExpression) -> cst.BaseExpression:
    """``new``, to stand where ``node`` is: in parentheses when it is not an atom and ``node`` is the operand
    of an attribute, subscript, call or operator (``F.softmax(x, 1).data`` must become ``(exp / sum).data``,
    not a division by ``sum.data``)."""
    parent = unit.parent(node)
    if isinstance(parent, (cst.Attribute, cst.Subscript, cst.Call, cst.BinaryOperation, cst.UnaryOperation,
                           cst.Comparison, cst.BooleanOperation, cst.Await)) \
            and not (isinstance(parent, cst.Call) and parent.func is not node):
        return paren(new)
    return new


def expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def stmts(code: str) -> List[cst.BaseStatement]:
    return list(cst.parse_module(code).body)


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


class _Replace(cst.CSTTransformer):
    def __init__(self, table: Dict[int, object]) -> None:
        self.table = table

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        if id(original_node) in self.table:
            return self.table[id(original_node)]
        return updated_node


def replaced(module: cst.Module, table: Dict[cst.CSTNode, object]) -> str:
    return module.visit(_Replace({id(k): v for k, v in table.items()})).code


def removed_statement(module: cst.Module, stmt: cst.CSTNode, parents: Dict[int, cst.CSTNode]) -> Dict[cst.CSTNode, object]:
    """The replacement table that deletes ``stmt`` (a ``pass`` when it is the only one of its block)."""
    block = parents.get(id(stmt))
    if isinstance(block, (cst.IndentedBlock, cst.Module)) and len(block.body) == 1:
        return {stmt: cst.SimpleStatementLine([cst.Pass()])}
    return {stmt: cst.RemovalSentinel.REMOVE}


# ---------------------------------------------------------------------------------------------------------------
# one unit of code (a .py file, or one code cell of a notebook) and what an operator sees of it
# ---------------------------------------------------------------------------------------------------------------
class Unit:
    def __init__(self, code: str, module: cst.Module, tree: "TreeFacts", path: str) -> None:
        self.code = code
        self.module = module
        self.tree = tree
        self.path = path
        self.parents: Dict[int, cst.CSTNode] = {}
        self.nodes: List[cst.CSTNode] = []
        self._walk(module)
        self._pos = None
        #: names the unit's imports bind -> the module or object they name (``t`` -> ``torch``)
        self.imports: Dict[str, str] = {}
        for node in self.nodes:
            if isinstance(node, cst.Import):
                for alias in node.names:
                    full = name_of(alias.name)
                    bound = name_of(alias.asname.name) if alias.asname else full.split(".")[0]
                    self.imports[bound] = full if alias.asname else bound
            elif isinstance(node, cst.ImportFrom) and not isinstance(node.names, cst.ImportStar):
                base = name_of(node.module) if node.module is not None else ""
                for alias in node.names:
                    full = f"{base}.{name_of(alias.name)}"
                    self.imports[name_of(alias.asname.name) if alias.asname else name_of(alias.name)] = full
        #: the name ``torch`` is the torch module (the rewrites below spell ``torch.exp``...)
        self.has_torch = self.imports.get("torch") == "torch"

    def is_module_path(self, expr: cst.BaseExpression) -> bool:
        """Whether ``expr`` (``t.nn.functional``, ``F``, ``np``) starts from a name an import binds."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        return isinstance(expr, cst.Name) and expr.value in self.imports

    def _walk(self, root: cst.CSTNode) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            self.nodes.append(node)
            for child in node.children:
                self.parents[id(child)] = node
                stack.append(child)
        self.nodes.sort(key=lambda n: 0)  # keep a stable, deterministic order (walk order)

    def of_type(self, *types: type) -> List[cst.CSTNode]:
        return [n for n in self.nodes if isinstance(n, types)]

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        p = self.parent(node)
        while p is not None:
            yield p
            p = self.parent(p)

    def enclosing(self, node: cst.CSTNode, *types: type) -> Optional[cst.CSTNode]:
        for a in self.ancestors(node):
            if isinstance(a, types):
                return a
            if isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) and not any(t in (cst.FunctionDef, cst.ClassDef) for t in types):
                return None
        return None

    def function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        for a in self.ancestors(node):
            if isinstance(a, cst.FunctionDef):
                return a
        return None

    def statement(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        for a in [node, *self.ancestors(node)]:
            if isinstance(a, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return a
        return None

    def lines(self, node: cst.CSTNode) -> Tuple[int, int]:
        if self._pos is None:
            self._pos = MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)
        r = self._pos[node]
        return r.start.line, r.end.line

    def scope_nodes(self, scope: cst.CSTNode) -> List[cst.CSTNode]:
        """The nodes under ``scope`` that are not inside a nested function or class."""
        out: List[cst.CSTNode] = []
        stack = list(scope.children)
        while stack:
            n = stack.pop()
            out.append(n)
            if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            stack.extend(n.children)
        return out

    def calls_in(self, scope: cst.CSTNode, *methods: str) -> List[cst.Call]:
        return [n for n in self.scope_nodes(scope) if method_call(n, *methods)]


@dataclass
class TreeFacts:
    """What operators ask about the whole tree of a repository."""

    #: classes defined in the tree whose body builds dropout or batch normalisation
    stochastic_classes: Set[str] = field(default_factory=set)
    #: per file: a module-level name -> the callees of the calls assigned to it (``net = Net().to(d)``: Net)
    built: Dict[str, Dict[str, Set[str]]] = field(default_factory=dict)
    #: per file: the classes it defines -> whether each is mode-dependent (a file's own class of a name
    #: decides over a class of the same name elsewhere in the tree)
    local_classes: Dict[str, Dict[str, bool]] = field(default_factory=dict)
    #: per file: function name -> for each call of it, the model names it passes (by position and keyword)
    #: that the caller switched to evaluation mode last before the call (``net.eval()`` then ``f(net)``)
    calls_after_eval: Dict[str, Dict[str, List[Tuple[List[Optional[str]], Dict[str, str], Set[str]]]]] = \
        field(default_factory=dict)
    #: per file: a name assigned in any scope -> the callees of the calls assigned to it
    built_anywhere: Dict[str, Dict[str, Set[str]]] = field(default_factory=dict)
    #: the names of every class the tree defines
    classes: Set[str] = field(default_factory=set)
    #: per file: the names and dotted attributes (``self.opt_g``) it reads
    reads: Dict[str, Set[str]] = field(default_factory=dict)

    def class_is_stochastic(self, path: str, name: str) -> bool:
        local = self.local_classes.get(path, {})
        return local[name] if name in local else name in self.stochastic_classes


DROPOUT_LAYER_NAMES = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")
RECURRENT_NAMES = {"LSTM": 5, "GRU": 5, "RNN": 6}
ATTENTION_NAMES = {"Transformer": (5, 0.1), "TransformerEncoderLayer": (3, 0.1),
                   "TransformerDecoderLayer": (3, 0.1), "MultiheadAttention": (2, 0.0)}


def _ast_arg(call: ast.Call, position: int, keyword: str):
    """(given, value): the argument's expression, or (True, None) when ``*args``/``**kw`` may give it."""
    for kw in call.keywords:
        if kw.arg == keyword:
            return True, kw.value
        if kw.arg is None:
            return True, None
    if any(isinstance(a, ast.Starred) for a in call.args):
        return True, None
    if position < len(call.args):
        return True, call.args[position]
    return False, None


def _literal(expr) -> Optional[object]:
    try:
        return ast.literal_eval(expr) if expr is not None else None
    except Exception:
        return None


def _positive_literal(expr) -> bool:
    value = _literal(expr)
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _call_changes_with_mode(call: ast.Call) -> bool:
    """Whether this construction is a layer that may compute differently in training and evaluation
    mode: not when its arguments prove otherwise (``Dropout(0)``, batch norm without running statistics,
    instance norm without them (the default), a one-layer or dropout-free recurrent layer).  A probability
    or a flag that is no literal (``nn.Dropout(cfg["drop_rate"])``) proves nothing: the configuration may
    set it to 0."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if name in DROPOUT_LAYER_NAMES or name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"):
        given, p = _ast_arg(call, 0 if name[0].isupper() else 1, "p")
        if not name[0].isupper():
            t_given, t = _ast_arg(call, 2, "training")
            if t_given and _literal(t) is False:
                return False
        return not given or _positive_literal(p)
    if name.startswith("BatchNorm") or name.startswith("LazyBatchNorm") or name == "SyncBatchNorm":
        given, track = _ast_arg(call, 4, "track_running_stats")
        return not given or _literal(track) is True
    if name.startswith(("InstanceNorm", "LazyInstanceNorm")):
        given, track = _ast_arg(call, 4, "track_running_stats")
        return given and _literal(track) is True
    if name in RECURRENT_NAMES:
        d_given, d = _ast_arg(call, RECURRENT_NAMES[name], "dropout")
        n_given, n = _ast_arg(call, 2, "num_layers")
        layers = _literal(n)
        return d_given and _positive_literal(d) and n_given and isinstance(layers, int) and layers > 1
    if name in ATTENTION_NAMES:
        position, default = ATTENTION_NAMES[name]
        given, d = _ast_arg(call, position, "dropout")
        return (default > 0) if not given else _positive_literal(d)
    return False


def _notebook_tree(text: str) -> ast.Module:
    """The code cells of a notebook as one module, cell after cell (line numbers run on across cells);
    a cell that does not parse (shell or magic lines) is left out."""
    body: List[ast.stmt] = []
    try:
        cells = json.loads(text).get("cells", [])
    except Exception:
        cells = []
    offset = 0
    for c in cells if isinstance(cells, list) else []:
        if not isinstance(c, dict) or c.get("cell_type") != "code":
            continue
        src = c.get("source", "")
        src = "".join(src) if isinstance(src, list) else str(src)
        try:
            cell = ast.parse(src)
        except Exception:
            offset += src.count("\n") + 1
            continue
        ast.increment_lineno(cell, offset)
        body.extend(cell.body)
        offset += src.count("\n") + 1
    return ast.Module(body=body, type_ignores=[])


def _record_calls_after_eval(tree: ast.Module, out) -> None:
    """For each call ``f(a, k=b)`` of a plain name in the module: its argument names, and which names the
    enclosing scope (function or module) switched to evaluation mode last before the call's line."""
    scopes: List[ast.AST] = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    for scope in scopes:
        nodes: List[ast.AST] = []
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            n = stack.pop()
            nodes.append(n)
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.extend(ast.iter_child_nodes(n))
        switches = sorted((n.lineno, ast.unparse(n.func.value), n.func.attr) for n in nodes
                          if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                          and n.func.attr in ("eval", "train") and not n.args and not n.keywords)
        for n in nodes:
            if not isinstance(n, ast.Call):
                continue
            name = n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id if isinstance(n.func, ast.Name) else ""
            if not name or name in ("eval", "train"):
                continue
            last_switch: Dict[str, str] = {}
            for line, who, what in switches:
                if line < n.lineno:
                    last_switch[who] = what
            evaluated = {who for who, what in last_switch.items() if what == "eval"}
            positional = [ast.unparse(a) if isinstance(a, (ast.Name, ast.Attribute)) else None for a in n.args]
            keywords = {k.arg: ast.unparse(k.value) for k in n.keywords if k.arg}
            out.setdefault(name, []).append((positional, keywords, evaluated))


def _constructor(call: ast.Call) -> str:
    """The callee of the call a chain of moves starts from (``Net().to(device)``: ``Net``)."""
    root = call
    while isinstance(root.func, ast.Attribute) and isinstance(root.func.value, ast.Call):
        root = root.func.value
    return ast.unparse(root.func)


def tree_facts(files: Sequence[Tuple[str, str]]) -> TreeFacts:
    """The classes of the tree that build a layer whose computation depends on the mode (dropout with
    p > 0, batch norm tracking statistics, instance norm only with ``track_running_stats=True``, a stacked
    recurrent layer with dropout, attention with dropout), read ``self.training``, or build such a class
    of the tree or a torchvision model."""
    facts = TreeFacts()
    uses: Dict[Tuple[str, str], Set[str]] = {}
    direct: Set[Tuple[str, str]] = set()
    for path, text in files:
        if path.endswith(".ipynb"):
            tree = _notebook_tree(text)
        else:
            try:
                tree = ast.parse(text)
            except Exception:
                continue
        built = facts.built.setdefault(path, {})
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = _constructor(node.value)
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        built.setdefault(t.id, set()).add(callee)
        anywhere = facts.built_anywhere.setdefault(path, {})
        read = facts.reads.setdefault(path, set())
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                read.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                read.add(ast.unparse(node))
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                callee = _constructor(node.value)
                for t in node.targets:
                    if isinstance(t, ast.Name) and not callee.startswith(t.id + "."):  # not `m = m.to(d)`
                        anywhere.setdefault(t.id, set()).add(callee)
            elif isinstance(node, ast.ClassDef):
                facts.classes.add(node.name)
        _record_calls_after_eval(tree, facts.calls_after_eval.setdefault(path, {}))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            key = (path, node.name)
            called = uses.setdefault(key, set())
            for inner in ast.walk(node):
                if isinstance(inner, ast.Attribute) and inner.attr == "training" and isinstance(inner.ctx, ast.Load):
                    direct.add(key)
                if isinstance(inner, ast.Call):
                    if _call_changes_with_mode(inner):
                        direct.add(key)
                    f = inner.func
                    callee = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                    dotted = ast.unparse(f) if isinstance(f, ast.Attribute) else callee
                    if dotted.startswith(TORCHVISION_MODELS):
                        direct.add(key)
                    called.add(callee)
            for base in node.bases:
                called.add(base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else "")
    defined: Dict[str, Set[str]] = defaultdict(set)
    for path, name in uses:
        defined[path].add(name)
    stochastic = set(direct)
    changed = True
    while changed:  # a class building (or deriving from) a mode-dependent class: its file's own, else the tree's
        changed = False
        names = {n for _, n in stochastic}
        for key, called in uses.items():
            if key in stochastic:
                continue
            path = key[0]
            for c in called:
                hit = (path, c) in stochastic if c in defined[path] else c in names
                if hit:
                    stochastic.add(key)
                    changed = True
                    break
    facts.stochastic_classes = {n for _, n in stochastic}
    for path, name in uses:
        facts.local_classes.setdefault(path, {})[name] = (path, name) in stochastic
    return facts


class Lazy:
    """A text computed when first asked for (most sites are never drawn)."""

    def __init__(self, fn: Callable[..., str], *args: object) -> None:
        self.fn, self.args, self.value = fn, args, None

    def __call__(self) -> str:
        if self.value is None:
            self.value = self.fn(*self.args)
            self.args = ()
        return self.value


@dataclass
class Site:
    """One place an operator can make its mistake: the new text of the unit (or a Lazy of it), and the
    region it edits."""

    make: Union[str, Lazy]
    region: Tuple[int, int]  # lines of the unit the edit concerns (for "already reported")
    line: int  # the line of the edit, for the report
    what: str

    @property
    def new_code(self) -> str:
        return self.make if isinstance(self.make, str) else self.make()


# ---------------------------------------------------------------------------------------------------------------
# operators
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Operator:
    name: str
    codes: Tuple[str, ...]  # the rule(s) the mistake belongs to
    triggers: Tuple[str, ...]  # words a unit must hold for the operator to look at it
    find: Callable[[Unit], List[Site]]
    numeric: bool = False  # the fix check may compare values of the edited expression

    @property
    def doc(self) -> str:
        return (self.find.__doc__ or "").strip()


OPERATORS: List[Operator] = []


def operator(name: str, codes: Union[str, Tuple[str, ...]], triggers: Tuple[str, ...], numeric: bool = False):
    def register(fn: Callable[[Unit], Iterable[Site]]):
        def find(unit: Unit) -> List[Site]:
            out = []
            for site in fn(unit):
                if site is not None:
                    out.append(site)
            return out

        find.__doc__ = fn.__doc__
        OPERATORS.append(Operator(name, codes if isinstance(codes, tuple) else (codes,), triggers, find, numeric))
        return fn

    return register


LOOPS = (cst.For, cst.While)


def _innermost_loop(unit: Unit, node: cst.CSTNode) -> Optional[cst.CSTNode]:
    for a in unit.ancestors(node):
        if isinstance(a, LOOPS):
            return a
        if isinstance(a, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
    return None


def _expr_stmt_call(stmt: cst.CSTNode) -> Optional[cst.Call]:
    """The call of a statement line that is just one call (``opt.zero_grad()``)."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
        v = stmt.body[0].value
        if isinstance(v, cst.Call):
            return v
    return None


def _clears(unit: Unit, scope: cst.CSTNode) -> int:
    n = len(unit.calls_in(scope, "zero_grad"))
    for node in unit.scope_nodes(scope):
        if isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Attribute) and node.target.attr.value == "grad":
            n += 1
        if method_call(node, "zero_") and isinstance(node.func.value, cst.Attribute) and node.func.value.attr.value == "grad":
            n += 1
    return n


def _span(unit: Unit, node: cst.CSTNode) -> Tuple[int, int]:
    return unit.lines(node)


@operator("tl101-delete-zero-grad", "TL101", ("zero_grad",))
def op_delete_zero_grad(unit: Unit):
    """Delete the only gradient clear of a loop that calls ``backward()`` and ``step()``.

    Why it is the mistake: the clear (``x.zero_grad()``) is a statement of a loop whose body calls
    ``.backward()`` and ``.step()``, and it is the only clear (``zero_grad``, ``.grad = None``,
    ``.grad.zero_()``) in the whole function (or module) around the loop: without it, every step uses
    the gradients of all the iterations before, which is TL101's mistake."""
    for call in unit.of_type(cst.Call):
        if not method_call(call, "zero_grad"):
            continue
        stmt = unit.statement(call)
        if _expr_stmt_call(stmt) is not call:
            continue
        loop = _innermost_loop(unit, stmt)
        if loop is None:
            continue
        if not unit.calls_in(loop, "backward") or not unit.calls_in(loop, "step"):
            continue
        scope = unit.function(loop) or unit.module
        if _clears(unit, scope) != 1:
            continue
        yield Site(Lazy(replaced, unit.module, removed_statement(unit.module, stmt, unit.parents)), _span(unit, loop),
                   unit.lines(stmt)[0], f"deleted `{code_of(call)}`")


def _block_of(unit: Unit, stmt: cst.CSTNode) -> Optional[cst.IndentedBlock]:
    p = unit.parent(stmt)
    return p if isinstance(p, cst.IndentedBlock) else None


def _stmt_calls(stmt: cst.CSTNode, method: str) -> bool:
    call = _expr_stmt_call(stmt)
    if call is not None and method_call(call, method):
        return True
    return False


@operator("tl102-move-zero-grad", "TL102", ("zero_grad",))
def op_move_zero_grad(unit: Unit):
    """Move the gradient clear of a loop body to between ``loss.backward()`` and ``opt.step()``.

    Why it is the mistake: the clear, the backward call and the step are statements of one block,
    backward directly before step (the clear is elsewhere in the block); moved between them, the clear
    wipes the gradients backward has just computed, so the step updates nothing: TL102's mistake."""
    for block in unit.of_type(cst.IndentedBlock):
        body = list(block.body)
        clears = [i for i, s in enumerate(body) if _stmt_calls(s, "zero_grad")]
        if len(clears) != 1:
            continue
        backs = [i for i, s in enumerate(body) if _stmt_calls(s, "backward")]
        for b in backs:
            if b + 1 < len(body) and _stmt_calls(body[b + 1], "step") and clears[0] not in (b, b + 1):
                c = clears[0]
                moved = body[c]
                new_body = [s for i, s in enumerate(body[: b + 1]) if i != c] + [moved] + \
                           [s for i, s in enumerate(body[b + 1:], start=b + 1) if i != c]
                new_block = block.with_changes(body=new_body)
                region = unit.lines(block)
                yield Site(Lazy(replaced, unit.module, {block: new_block}), region, unit.lines(body[b])[0],
                           f"moved `{code_of(moved).strip()}` after `{code_of(body[b]).strip()}`")
                break


CE_FUNCS = ("cross_entropy",)
CE_CLASSES = ("CrossEntropyLoss",)
NLL_FUNCS = ("nll_loss",)
NLL_CLASSES = ("NLLLoss",)


def _instances(unit: Unit, classes: Tuple[str, ...]) -> Set[str]:
    """Names (``crit``, ``self.crit``) assigned an instance of one of ``classes`` in the unit."""
    out = set()
    for node in unit.of_type(cst.Assign):
        if isinstance(node.value, cst.Call) and last(name_of(node.value.func)) in classes:
            for t in node.targets:
                n = name_of(t.target)
                if n:
                    out.add(n)
    return out


def _is_instance(unit: Unit, call: cst.Call, classes: Tuple[str, ...], inst: Set[str]) -> bool:
    """Whether the callee of ``call`` is an instance of one of ``classes``: ``self.crit`` assigned one in
    the file; a plain name assigned one in the function around the call (if that function assigns it or
    takes it as a parameter, only there), else at module level."""
    fname = name_of(call.func)
    if not fname or fname not in inst:
        return False
    if not isinstance(call.func, cst.Name):
        return True
    fn = unit.function(call)
    for scope in ([fn] if fn is not None else []) + [unit.module]:
        assigned = [a for a in unit.scope_nodes(scope) if isinstance(a, cst.Assign)
                    and any(name_of(t.target) == fname for t in a.targets)]
        if assigned:
            return all(isinstance(a.value, cst.Call) and last(name_of(a.value.func)) in classes for a in assigned)
        if scope is fn and fname in {p.name.value for p in [*fn.params.params, *fn.params.kwonly_params,
                                                              *fn.params.posonly_params]}:
            return False
    return False


def _loss_calls(unit: Unit, funcs: Tuple[str, ...], classes: Tuple[str, ...]) -> List[cst.Call]:
    inst = _instances(unit, classes)
    out = []
    for call in unit.of_type(cst.Call):
        fname = name_of(call.func)
        if (last(fname) in funcs and (fname.startswith(("F.", "torch.", "nn.functional", "functional."))
                                      or fname in funcs)) or _is_instance(unit, call, classes, inst):
            if positional(call):
                out.append(call)
    return out


@operator("tl103-softmax-into-cross-entropy", "TL103", ("cross_entropy", "CrossEntropyLoss"))
def op_softmax_into_ce(unit: Unit):
    """Wrap the input of a cross-entropy (``F.cross_entropy``, or an ``nn.CrossEntropyLoss`` instance
    of the same file) in ``torch.softmax(..., dim=1)``.

    Why it is the mistake: cross-entropy applies log-softmax itself; its input is now probabilities,
    which is TL103's mistake (the loss trains, badly).  The input must not already be a softmax."""
    if not unit.has_torch:
        return
    for call in _loss_calls(unit, CE_FUNCS, CE_CLASSES):
        arg0 = positional(call)[0]
        if "softmax" in code_of(arg0):
            continue
        new = arg0.with_changes(value=expr(f"torch.softmax({code_of(arg0.value)}, dim=1)"))
        stmt = unit.statement(call)
        yield Site(Lazy(replaced, unit.module, {arg0: new}), unit.lines(stmt), unit.lines(call)[0],
                   f"softmax into `{code_of(call)[:60]}`")


@operator("tl103-softmax-into-configured-cross-entropy", "TL103", ("CrossEntropyLoss",))
def op_softmax_into_configured_ce(unit: Unit):
    """Wrap the input of an ``nn.CrossEntropyLoss`` instance in ``torch.softmax(..., dim=1)``, as
    ``tl103-softmax-into-cross-entropy`` does, after moving the instance's construction to where research
    code often keeps it: for ``self.<crit> = nn.CrossEntropyLoss(...)`` in ``__init__``, a new last
    parameter of ``__init__`` whose default is that construction (``self.<crit> = <crit>``); for a name,
    a choice from a dict of losses keyed by strings (``{"ce": nn.CrossEntropyLoss(...), "ce_smooth":
    nn.CrossEntropyLoss(label_smoothing=0.1)}[key]``, the key ``os.environ.get("LOSS", "ce")`` where the
    file imports ``os``, else the literal ``"ce"``).

    Why it is the mistake: the move keeps what the program computes (the same loss is built when no
    caller passes the new parameter, which none does, and when the environment names no other loss);
    the softmax makes cross-entropy's input probabilities, TL103's mistake.  Only constructions with
    literal or no arguments are moved (a default is evaluated once, where the class is defined)."""
    if not unit.has_torch:
        return
    has_os = bool(re.search(r"^import os\b", unit.code, re.MULTILINE))
    inst = _instances(unit, CE_CLASSES)
    for call in _loss_calls(unit, (), CE_CLASSES):
        arg0 = positional(call)[0]
        fname = name_of(call.func)
        if "softmax" in code_of(arg0) or not fname or fname not in inst:
            continue
        assigns = [a for a in unit.of_type(cst.Assign) if len(a.targets) == 1 and name_of(a.targets[0].target) == fname
                   and isinstance(a.value, cst.Call) and last(name_of(a.value.func)) in CE_CLASSES]
        if len(assigns) != 1 or not all(isinstance(a.value, (cst.Integer, cst.Float, cst.SimpleString, cst.Name))
                                        for a in assigns[0].value.args):
            continue
        assign = assigns[0]
        built = assign.value
        table: Dict[cst.CSTNode, object] = {
            arg0: arg0.with_changes(value=expr(f"torch.softmax({code_of(arg0.value)}, dim=1)"))}
        if fname.startswith("self."):
            init = unit.function(assign)
            attr = fname[len("self."):]
            if init is None or init.name.value != "__init__" or init.params.star_arg is not cst.MaybeSentinel.DEFAULT \
                    or init.params.kwonly_params or init.params.star_kwarg is not None or "." in attr:
                continue
            if any(p.name.value == attr for p in init.params.params) or not isinstance(unit.enclosing(init, cst.ClassDef), cst.ClassDef):
                continue
            new_param = cst.Param(cst.Name(attr), default=built, equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            params = list(init.params.params)
            if params and params[-1].comma is cst.MaybeSentinel.DEFAULT:
                params[-1] = params[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            table[init.params] = init.params.with_changes(params=params + [new_param])
            table[built] = cst.Name(attr)
            what = f"`{fname}` from an `__init__` default, softmax into `{code_of(call)[:50]}`"
        else:
            key = 'os.environ.get("LOSS", "ce")' if has_os else '"ce"'
            table[built] = expr(f'{{"ce": {code_of(built)}, "ce_smooth": {code_of(built.func)}(label_smoothing=0.1)}}[{key}]')
            what = f"`{fname}` chosen from a dict of losses, softmax into `{code_of(call)[:50]}`"
        stmt = unit.statement(call)
        if init_overlaps(unit, table):
            continue
        yield Site(Lazy(replaced, unit.module, table), unit.lines(stmt), unit.lines(call)[0], what)


def init_overlaps(unit: Unit, table: Dict[cst.CSTNode, object]) -> bool:
    """Whether two nodes to replace nest (the loss call inside the construction): one edit would be lost."""
    nodes = list(table)
    return any(a is not b and (b in unit.ancestors(a)) for a in nodes for b in nodes)


@operator("tl110-softmax-into-nll", "TL110", ("nll_loss", "NLLLoss"))
def op_softmax_into_nll(unit: Unit):
    """Replace the ``log_softmax`` whose result an NLL loss takes by ``softmax``: directly as the loss's
    input (``F.nll_loss(F.log_softmax(x, 1), y)``), or as what ``forward`` of a model class returns
    when the same file builds that class and calls an NLL loss.

    Why it is the mistake: ``nll_loss`` expects log-probabilities; given probabilities it is TL110's
    mistake.  The ``forward`` case: the file trains that model with NLL (the class is built in it)."""
    nll = _loss_calls(unit, NLL_FUNCS, NLL_CLASSES)
    if not nll:
        return
    seen = set()
    for call in nll:
        arg0 = positional(call)[0].value
        if isinstance(arg0, cst.Call) and last(name_of(arg0.func)) == "log_softmax":
            seen.add(id(arg0))
            yield _to_softmax(unit, arg0)
    for ret in unit.of_type(cst.Return):
        v = ret.value
        if not (isinstance(v, cst.Call) and last(name_of(v.func)) == "log_softmax") or id(v) in seen:
            continue
        fn = unit.function(ret)
        cls = unit.enclosing(fn, cst.ClassDef) if fn is not None else None
        if fn is None or fn.name.value != "forward" or not isinstance(cls, cst.ClassDef):
            continue
        if f"{cls.name.value}(" not in unit.code.replace(f"class {cls.name.value}(", ""):
            continue
        yield _to_softmax(unit, v)


def _to_softmax(unit: Unit, call: cst.Call) -> Site:
    func = call.func
    if isinstance(func, cst.Attribute):
        new_func = func.with_changes(attr=cst.Name("softmax"))
    else:
        new_func = cst.Name("softmax")
    return Site(Lazy(replaced, unit.module, {func: new_func}), unit.lines(unit.statement(call)), unit.lines(call)[0],
                f"log_softmax -> softmax in `{code_of(call)[:60]}`")


def _backward_names(unit: Unit, scope: cst.CSTNode) -> Set[str]:
    out = set()
    for call in unit.calls_in(scope, "backward"):
        r = receiver(call)
        if r:
            out.add(r)
    return out


@operator("tl104-drop-item-from-total", "TL104", ("item", "detach"))
def op_drop_item(unit: Unit):
    """Drop ``.item()`` / ``.detach()`` from a loss added to a running total (``total += loss.item()``,
    ``total = total + loss.item() * n``, ``losses.append(loss.item())``) in a loop.

    Why it is the mistake: the loss is the very name the same loop calls ``.backward()`` on, so it
    carries the autograd graph; without ``.item()`` the total keeps every iteration's graph alive,
    which is TL104's mistake."""
    for call in unit.of_type(cst.Call):
        if not method_call(call, "item", "detach") or call.args:
            continue
        loss = receiver(call)
        if not loss or not isinstance(call.func.value, cst.Name):
            continue
        loop = _innermost_loop(unit, call)
        if loop is None or loss not in _backward_names(unit, loop):
            continue
        stmt = unit.statement(call)
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        small = stmt.body[0]
        ok = False
        if isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign):
            ok = True
        elif isinstance(small, cst.Assign) and isinstance(small.value, cst.BinaryOperation) and \
                len(small.targets) == 1 and name_of(small.targets[0].target) and \
                name_of(small.targets[0].target) in {name_of(small.value.left), name_of(small.value.right)}:
            ok = True
        elif isinstance(small, cst.Expr) and method_call(small.value, "append") and \
                len(small.value.args) == 1 and small.value.args[0].value is call:
            ok = True
        if not ok:
            continue
        # the whole value must reach the total: `.item()` directly, or times/plus a plain number
        yield Site(Lazy(replaced, unit.module, {call: call.func.value}), unit.lines(loop), unit.lines(stmt)[0],
                   f"dropped `.{call.func.attr.value}()` in `{code_of(stmt).strip()[:60]}`")


GRAD_OFF = ("no_grad", "inference_mode")


def _grad_off_item(item: cst.WithItem) -> bool:
    """``torch.no_grad()``, ``torch.inference_mode()``, ``torch.set_grad_enabled(False)``."""
    call = item.item
    if not isinstance(call, cst.Call):
        return last(name_of(call)) in GRAD_OFF
    name = last(name_of(call.func))
    if name == "set_grad_enabled":
        return bool(call.args) and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == "False"
    return name in GRAD_OFF


def _every_call_without_grad(unit: Unit, fn: cst.FunctionDef) -> bool:
    """Whether the unit calls ``fn`` and every such call runs with gradients off (inside ``with
    torch.no_grad():``/``set_grad_enabled(False)``, or in a function decorated so): unwrapping ``fn``'s own
    ``no_grad`` then changes nothing."""
    calls = [c for c in unit.of_type(cst.Call) if name_of(c.func) == fn.name.value]
    if not calls:
        return False
    for call in calls:
        node, off = unit.parents.get(id(call)), False
        while node is not None and not off:
            if isinstance(node, cst.With) and any(_grad_off_item(i) for i in node.items):
                off = True
            if isinstance(node, cst.FunctionDef) and any(
                last(name_of(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator)) in GRAD_OFF
                for d in node.decorators
            ):
                off = True
            node = unit.parents.get(id(node))
        if not off:
            return False
    return True


def _evaluated_models(unit: Unit, fn: cst.CSTNode) -> Set[str]:
    return {receiver(c) for c in unit.calls_in(fn, "eval") if not c.args and receiver(c)}


def _calls_one_of(unit: Unit, scope: cst.CSTNode, names: Set[str]) -> bool:
    for n in unit.scope_nodes(scope) if not isinstance(scope, cst.IndentedBlock) else [scope, *_all(scope)]:
        if isinstance(n, cst.Call) and name_of(n.func) in names:
            return True
    return False


def _all(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = list(node.children)
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


@operator("tl105-unwrap-no-grad", "TL105", ("no_grad", "inference_mode"))
def op_unwrap_no_grad(unit: Unit):
    """Unwrap ``with torch.no_grad():`` (or ``inference_mode``) in an evaluation function, or remove the
    ``@torch.no_grad()`` decorator of one.

    Why it is the mistake: the function puts a model in evaluation mode (``m.eval()``) and the
    unwrapped body (or the decorated function) calls that model (``m(x)``), and nothing in it calls
    ``.backward()``: it evaluates the model with autograd on, TL105's mistake.  Not where every call
    of the function in the file already runs with gradients off (nothing would change)."""
    for w in unit.of_type(cst.With):
        if len(w.items) != 1 or last(name_of(w.items[0].item.func if isinstance(w.items[0].item, cst.Call) else w.items[0].item)) not in GRAD_OFF:
            continue
        if w.items[0].asname is not None or w.asynchronous is not None:
            continue
        fn = unit.function(w)
        if fn is None:
            continue
        models = _evaluated_models(unit, fn)
        if not models or not _calls_one_of(unit, w.body, models) or unit.calls_in(fn, "backward"):
            continue
        if _every_call_without_grad(unit, fn):
            continue
        body = list(w.body.body) if isinstance(w.body, cst.IndentedBlock) else [cst.SimpleStatementLine(list(w.body.body))]
        yield Site(Lazy(replaced, unit.module, {w: cst.FlattenSentinel(body)}), unit.lines(fn), unit.lines(w)[0],
                   "unwrapped `with torch.no_grad()`")
    for fn in unit.of_type(cst.FunctionDef):
        for d in fn.decorators:
            dec = d.decorator
            if last(name_of(dec.func if isinstance(dec, cst.Call) else dec)) not in GRAD_OFF:
                continue
            models = _evaluated_models(unit, fn)
            if not models or not _calls_one_of(unit, fn, models) or unit.calls_in(fn, "backward"):
                continue
            if _every_call_without_grad(unit, fn):
                continue
            new_fn = fn.with_changes(decorators=[x for x in fn.decorators if x is not d])
            yield Site(Lazy(replaced, unit.module, {fn: new_fn}), unit.lines(fn), unit.lines(d)[0],
                       f"removed the decorator of `{fn.name.value}`")


TORCHVISION_MODELS = ("models.", "torchvision.models.")


def _model_is_stochastic(unit: Unit, model: str, fn: Optional[cst.FunctionDef] = None) -> bool:
    """Whether the model named ``model`` is built in the unit from a class with dropout or batch norm
    (of the tree, or torchvision's), or is a parameter while the tree defines such a class.  For a
    parameter of ``fn`` that the unit's own calls of ``fn`` pass: what those calls pass decides when each
    passed name is built (anywhere in the unit) from classes of the tree (a model whose dropout rate is a
    configuration value builds no mode-dependent layer by the tree's facts)."""
    if fn is not None and model in [p.name.value for p in fn.params.params]:
        verdict = _passed_models_stochastic(unit, fn, model)
        if verdict is not None:
            return verdict
    for node in unit.of_type(cst.Assign):
        if any(name_of(t.target) == model for t in node.targets) and isinstance(node.value, cst.Call):
            f = name_of(node.value.func)
            return f.startswith(TORCHVISION_MODELS) or unit.tree.class_is_stochastic(unit.path, last(f))
    callees = unit.tree.built.get(unit.path, {}).get(model)
    if callees:  # built elsewhere in the file (another cell of a notebook)
        return any(c.startswith(TORCHVISION_MODELS) or unit.tree.class_is_stochastic(unit.path, last(c))
                   for c in callees)
    return bool(unit.tree.stochastic_classes)


def _passed_models_stochastic(unit: Unit, fn: cst.FunctionDef, model: str) -> Optional[bool]:
    """True/False when every call of ``fn`` in the unit passes, for parameter ``model``, a name built in
    the unit from classes of the tree, by whether one of them is mode-dependent; None when unknown."""
    calls = unit.tree.calls_after_eval.get(unit.path, {}).get(fn.name.value, [])
    built = unit.tree.built_anywhere.get(unit.path, {})
    if not calls:
        return None
    verdicts = []
    for passed, _evaluated in _passed_for(fn, model, calls):
        callees = built.get(passed or "")
        if not callees:
            return None
        for c in callees:
            if c.startswith(TORCHVISION_MODELS):
                verdicts.append(True)
            elif last(c) in unit.tree.classes:
                verdicts.append(unit.tree.class_is_stochastic(unit.path, last(c)))
            else:
                return None
    return any(verdicts)


def _passed_for(fn: cst.FunctionDef, model: str, calls) -> List[Tuple[Optional[str], Set[str]]]:
    """For each recorded call of ``fn`` (see ``TreeFacts.calls_after_eval``): the name it passes for the
    parameter ``model`` (None when it passes none by name), and the names its caller had switched to
    evaluation mode before the call."""
    params = [p.name.value for p in fn.params.params]
    index = params.index(model) - (1 if params and params[0] in ("self", "cls") else 0)
    return [(keywords.get(model) or (positional[index] if 0 <= index < len(positional) else None), evaluated)
            for positional, keywords, evaluated in calls]


def _called_from_other_files(unit: Unit, fn: cst.FunctionDef, model: str) -> bool:
    """Whether the model is a parameter of ``fn``, other files of the tree call a function of that name,
    and every such call passes a name its caller switched to evaluation mode before the call: deleting
    ``fn``'s own ``eval()`` then changes nothing."""
    if model not in [p.name.value for p in fn.params.params]:
        return False
    calls = [c for path, by_name in unit.tree.calls_after_eval.items() if path != unit.path
             for c in by_name.get(fn.name.value, [])]
    return bool(calls) and all(passed and passed in evaluated for passed, evaluated in _passed_for(fn, model, calls))


def _callers_evaluate_first(unit: Unit, fn: cst.FunctionDef, model: str) -> bool:
    """Whether the model is a parameter of ``fn`` and every call of ``fn`` in the file (every cell of a
    notebook) comes after the caller switched the argument it passes to evaluation mode (the last
    ``.eval()``/``.train()`` on it before the call, in the caller's scope, is ``.eval()``): deleting
    ``fn``'s own ``eval()`` then changes nothing."""
    if model not in [p.name.value for p in fn.params.params]:
        return False
    calls = unit.tree.calls_after_eval.get(unit.path, {}).get(fn.name.value, [])
    return bool(calls) and all(passed and passed in evaluated for passed, evaluated in _passed_for(fn, model, calls))


@operator("tl106-remove-eval", "TL106", ("eval",))
def op_remove_eval(unit: Unit):
    """Delete ``model.eval()`` from a function that then evaluates the model without training it.

    Why it is the mistake: the function calls ``model(...)`` after ``model.eval()``, never calls
    ``.backward()``, puts the model in evaluation mode nowhere else, and the model has dropout or batch
    norm (its class, of the tree or torchvision's, builds one; or, for a model passed in, the tree's
    model classes do): it evaluates in training mode, TL106's mistake."""
    for call in unit.of_type(cst.Call):
        if not method_call(call, "eval") or call.args:
            continue
        stmt = unit.statement(call)
        if _expr_stmt_call(stmt) is not call:
            continue
        fn = unit.function(stmt)
        model = receiver(call)
        if fn is None or not model or unit.calls_in(fn, "backward"):
            continue
        if sum(1 for c in unit.calls_in(fn, "eval", "train") if chain_root(c) == model) != 1:
            continue
        if not _calls_one_of(unit, fn, {model}) or not _model_is_stochastic(unit, model, fn):
            continue
        if _callers_evaluate_first(unit, fn, model) or _called_from_other_files(unit, fn, model):
            continue
        yield Site(Lazy(replaced, unit.module, removed_statement(unit.module, stmt, unit.parents)), unit.lines(fn),
                   unit.lines(stmt)[0], f"deleted `{code_of(call)}`")


@operator("tl107-remove-train", "TL107", ("train",))
def op_remove_train(unit: Unit):
    """Delete ``model.train()`` from a loop that trains the model and evaluates it (``model.eval()``) in
    the same loop.

    Why it is the mistake: the loop calls ``.backward()`` and ``.step()`` and ``model.eval()``, and
    the deleted statement is the loop's only ``model.train()``, and the model has dropout or batch norm
    (as for ``tl106-remove-eval``): from the second pass on the model trains in evaluation mode (dropout
    off, batch norm frozen), TL107's mistake."""
    for call in unit.of_type(cst.Call):
        if not method_call(call, "train") or call.args:
            continue
        stmt = unit.statement(call)
        if _expr_stmt_call(stmt) is not call:
            continue
        model = receiver(call)
        loop = _innermost_loop(unit, stmt)
        while loop is not None and not unit.calls_in(loop, "backward"):
            loop = _innermost_loop(unit, loop)
        if loop is None or not model or not unit.calls_in(loop, "step"):
            continue
        if not any(chain_root(c) == model and not c.args for c in unit.calls_in(loop, "eval")):
            continue
        if sum(1 for c in unit.calls_in(loop, "train") if chain_root(c) == model) != 1:
            continue
        if not _model_is_stochastic(unit, model, unit.function(stmt)):
            continue  # a model without dropout or batch norm trains the same in either mode: no mistake
        yield Site(Lazy(replaced, unit.module, removed_statement(unit.module, stmt, unit.parents)), unit.lines(loop),
                   unit.lines(stmt)[0], f"deleted `{code_of(call)}`")


DROPOUT_FUNCS = ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")


@operator("tl108-drop-training-flag", "TL108", ("training",))
def op_drop_training_flag(unit: Unit):
    """Remove ``training=self.training`` from a functional dropout in a module's ``forward``.

    Why it is the mistake: without it ``F.dropout`` defaults to ``training=True`` and keeps dropping
    in evaluation mode, TL108's mistake."""
    for call in unit.of_type(cst.Call):
        f = name_of(call.func)
        if last(f) not in DROPOUT_FUNCS or not (f.startswith(("F.", "nn.functional.", "torch.nn.functional.", "functional."))):
            continue
        fn = unit.function(call)
        if fn is None or fn.name.value != "forward":
            continue
        args = list(call.args)
        kw = kwarg(call, "training")
        if kw is not None and code_of(kw.value) == "self.training":
            drop = kw
        elif kw is None and len(positional(call)) >= 3 and code_of(positional(call)[2].value) == "self.training":
            drop = positional(call)[2]
        else:
            continue
        new_args = [a for a in args if a is not drop]
        if new_args:
            new_args[-1] = new_args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        yield Site(Lazy(replaced, unit.module, {call: call.with_changes(args=new_args)}), unit.lines(unit.statement(call)),
                   unit.lines(call)[0], f"dropped the training flag of `{code_of(call)[:50]}`")


SCHEDULER_WORDS = ("lr_scheduler", "LR", "Scheduler", "scheduler")


def _schedulers(unit: Unit) -> Set[str]:
    out = set()
    for node in unit.of_type(cst.Assign):
        if isinstance(node.value, cst.Call):
            f = name_of(node.value.func)
            if "lr_scheduler" in f or last(f).endswith(("LR", "Scheduler", "LROnPlateau")) or last(f) in ("OneCycleLR", "LambdaLR"):
                for t in node.targets:
                    if name_of(t.target):
                        out.add(name_of(t.target))
    return out


def _optimizers(unit: Unit) -> Set[str]:
    out = set()
    for node in unit.of_type(cst.Assign):
        if isinstance(node.value, cst.Call):
            f = name_of(node.value.func)
            if "optim." in f and "lr_scheduler" not in f:
                for t in node.targets:
                    if name_of(t.target):
                        out.add(name_of(t.target))
    return out


@operator("tl109-swap-scheduler-and-optimizer", "TL109", ("step",))
def op_swap_steps(unit: Unit):
    """Swap ``optimizer.step()`` and a following ``scheduler.step()`` of the same block, or move an
    epoch loop's ``scheduler.step()`` (after the inner loop that steps the optimizer) to the top of
    the epoch loop's body.

    Why it is the mistake: the scheduler is built by ``torch.optim.lr_scheduler`` in the same file; it
    now steps before the optimizer in an iteration, so the first learning rate of the schedule is
    skipped (PyTorch warns), TL109's mistake."""
    scheds = _schedulers(unit)
    if not scheds:
        return
    for block in unit.of_type(cst.IndentedBlock):
        body = list(block.body)
        for i, s in enumerate(body):
            call = _expr_stmt_call(s)
            if call is None or not method_call(call, "step") or receiver(call) not in scheds:
                continue
            # (a) the optimizer step comes before it in the same block
            opt_i = [j for j in range(i) if _stmt_calls(body[j], "step") and receiver(_expr_stmt_call(body[j])) not in scheds]
            if opt_i:
                j = opt_i[-1]
                new_body = body[:j] + [s] + [x for k, x in enumerate(body[j:], start=j) if k != i]
                yield Site(Lazy(replaced, unit.module, {block: block.with_changes(body=new_body)}), unit.lines(block),
                           unit.lines(s)[0], f"moved `{code_of(call)}` before the optimizer step")
                continue
            # (b) an inner loop before it steps an optimizer; the block is a loop's body; a step that takes
            # a value (ReduceLROnPlateau's metric) is not moved above the code that computes it
            owner = unit.parent(block)
            if not isinstance(owner, LOOPS) or call.args:
                continue
            inner = [x for x in body[:i] if isinstance(x, LOOPS) and any(
                receiver(c) not in scheds for c in unit.calls_in(x, "step"))]
            if not inner or i == 0:
                continue
            new_body = [s] + [x for k, x in enumerate(body) if k != i]
            new_body[0] = new_body[0].with_changes(leading_lines=body[0].leading_lines)
            yield Site(Lazy(replaced, unit.module, {block: block.with_changes(body=new_body)}), unit.lines(block),
                       unit.lines(s)[0], f"moved `{code_of(call)}` to the top of the epoch loop")


# -- numerics written out by hand -------------------------------------------------------------------------------
def _torch_func(call: cst.Call, names: Tuple[str, ...], prefixes=("torch.", "F.", "nn.functional.", "torch.nn.functional.", "functional.")) -> bool:
    f = name_of(call.func)
    return last(f) in names and f.startswith(prefixes) and not f.startswith("torch.Tensor")


def _dim_text(call: cst.Call, index: int) -> Optional[str]:
    kw = kwarg(call, "dim")
    if kw is not None:
        return code_of(kw.value)
    pos = positional(call)
    if len(pos) > index:
        return code_of(pos[index].value)
    return None


def _unary_sites(unit: Unit, names: Tuple[str, ...], build: Callable[[str, cst.Call], Optional[str]],
                 what: str, dim_index: Optional[int] = None) -> Iterator[Site]:
    """Calls of ``torch.<name>(x, ...)`` / ``F.<name>(x, ...)`` / ``x.<name>(...)`` with a pure ``x``,
    rewritten by ``build(x_code, call)`` (None: not this one; see :func:`_in_place` for parentheses)."""
    if not unit.has_torch:
        return
    for call in unit.of_type(cst.Call):
        if _torch_func(call, names):
            pos = positional(call)
            if not pos:
                continue
            x = pos[0].value
            rest_index = 1
        elif method_call(call, *names) and isinstance(call.func, cst.Attribute) and \
                not unit.is_module_path(call.func.value) and code_of(call.func.value) not in ("self", "cls"):
            x = call.func.value  # not `self.softmax(scores)`: a layer the module holds, not a tensor method
            rest_index = 0
        else:
            continue
        if not is_pure(x) or any(a.star for a in call.args):
            continue
        new = build(code_of(paren(x)), call if rest_index == 1 else _as_function_call(call))
        if new is None:
            continue
        yield Site(Lazy(replaced, unit.module, {call: _in_place(unit, call, expr(new))}), unit.lines(unit.statement(call)), unit.lines(call)[0],
                   f"{what}: `{code_of(call)[:50]}` -> `{new[:60]}`")


def _as_function_call(call: cst.Call) -> cst.Call:
    """``x.f(a, b=c)`` as ``f(x, a, b=c)`` (for reading its arguments by position)."""
    return call.with_changes(func=cst.Name(call.func.attr.value),
                             args=[cst.Arg(call.func.value, comma=cst.Comma()), *call.args])


def _only(call: cst.Call, allowed: Tuple[str, ...], max_pos: int) -> bool:
    return len(positional(call)) <= max_pos and all(a.keyword is None or a.keyword.value in allowed for a in call.args)


@operator("tl201-softmax-by-hand", "TL201", ("softmax",), numeric=True)
def op_softmax_by_hand(unit: Unit):
    """Write ``softmax(x, dim)`` out as ``torch.exp(x) / torch.exp(x).sum(dim=dim, keepdim=True)``.

    Why it is the mistake: the exponent is not shifted by its maximum, so large logits overflow to
    ``inf``/``nan`` where ``softmax`` does not: TL201's mistake.  Only with an explicit ``dim`` and a
    pure ``x`` (a name, attribute or subscript: evaluating it twice is harmless)."""
    def build(x: str, call: cst.Call) -> Optional[str]:
        dim = _dim_text(call, 1)
        if dim is None or not _only(call, ("dim",), 2):
            return None
        return f"torch.exp({x}) / torch.exp({x}).sum(dim={dim}, keepdim=True)"

    yield from _unary_sites(unit, ("softmax",), build, "softmax by hand")


@operator("tl202-log-of-softmax", "TL202", ("log_softmax",), numeric=True)
def op_log_of_softmax(unit: Unit):
    """Write ``log_softmax(x, dim)`` as ``torch.log(torch.softmax(x, dim=dim))``.

    Why it is the mistake: the softmax can underflow to 0 and its log is then ``-inf``, where
    ``log_softmax`` stays finite: TL202's mistake."""
    def build(x: str, call: cst.Call) -> Optional[str]:
        dim = _dim_text(call, 1)
        if dim is None or not _only(call, ("dim",), 2):
            return None
        return f"torch.log(torch.softmax({x}, dim={dim}))"

    yield from _unary_sites(unit, ("log_softmax",), build, "log of softmax")


@operator("tl203-logsumexp-by-hand", "TL203", ("logsumexp",), numeric=True)
def op_logsumexp_by_hand(unit: Unit):
    """Write ``torch.logsumexp(x, dim)`` as ``torch.log(torch.sum(torch.exp(x), dim=dim))``.

    Why it is the mistake: the exponent is not shifted by its maximum, so it overflows: TL203's
    mistake."""
    def build(x: str, call: cst.Call) -> Optional[str]:
        dim = _dim_text(call, 1)
        kd = kwarg(call, "keepdim")
        if dim is None or not _only(call, ("dim", "keepdim"), 2):
            return None
        keep = f", keepdim={code_of(kd.value)}" if kd is not None else ""
        return f"torch.log(torch.sum(torch.exp({x}), dim={dim}{keep}))"

    yield from _unary_sites(unit, ("logsumexp",), build, "logsumexp by hand")


@operator("tl204-softplus-logsigmoid-by-hand", "TL204", ("softplus", "logsigmoid"), numeric=True)
def op_softplus_by_hand(unit: Unit):
    """Write ``F.softplus(x)`` (default ``beta`` and ``threshold``) as ``torch.log(1 + torch.exp(x))``
    and ``F.logsigmoid(x)`` as ``torch.log(torch.sigmoid(x))``.

    Why it is the mistake: ``exp`` overflows for large ``x`` and ``sigmoid`` underflows to 0 for
    very negative ``x``; the library functions do neither: TL204's mistake."""
    def build(x: str, call: cst.Call) -> Optional[str]:
        if not _only(call, (), 1):
            return None
        if last(name_of(call.func)) == "softplus":
            return f"torch.log(1 + torch.exp({x}))"
        return f"torch.log(torch.sigmoid({x}))"

    yield from _unary_sites(unit, ("softplus", "logsigmoid"), build, "by hand")


@operator("tl205-log1p-expm1-by-hand", "TL205", ("log1p", "expm1"), numeric=True)
def op_log1p_by_hand(unit: Unit):
    """Write ``torch.log1p(x)`` as ``torch.log(1 + x)`` and ``torch.expm1(x)`` as ``torch.exp(x) - 1``.

    Why it is the mistake: for small ``x`` the sum (difference) loses the digits that ``log1p``
    (``expm1``) keep: TL205's mistake."""
    def build(x: str, call: cst.Call) -> Optional[str]:
        if not _only(call, (), 1):
            return None
        if last(name_of(call.func)) == "log1p":
            return f"torch.log(1 + {x})"
        return f"(torch.exp({x}) - 1)"

    yield from _unary_sites(unit, ("log1p", "expm1"), build, "by hand")


@operator("tl206-cross-entropy-by-hand", "TL206", ("cross_entropy",), numeric=True)
def op_ce_by_hand(unit: Unit):
    """Write ``F.cross_entropy(x, y)`` (class-index targets, default arguments) as
    ``-(F.one_hot(y, x.size(1)) * torch.log(torch.softmax(x, dim=1))).sum(dim=1).mean()``.

    Why it is the mistake: the log of a softmax inside a hand-written softmax cross-entropy underflows
    to ``-inf`` (TL206's mistake; TL202 also sees the log of a softmax, and the precedence table gives
    it to TL206).  Only for a two-argument call with pure arguments."""
    if not unit.has_torch:
        return
    for call in unit.of_type(cst.Call):
        if not _torch_func(call, ("cross_entropy",)) or len(call.args) != 2 or len(positional(call)) != 2:
            continue
        x, y = (a.value for a in positional(call))
        if not (is_pure(x) and is_pure(y)):
            continue
        xs, ys = code_of(paren(x)), code_of(paren(y))
        new = (f"-(torch.nn.functional.one_hot({ys}, {xs}.size(1)) * torch.log(torch.softmax({xs}, dim=1)))"
               f".sum(dim=1).mean()")
        yield Site(Lazy(replaced, unit.module, {call: _in_place(unit, call, expr(new))}), unit.lines(unit.statement(call)), unit.lines(call)[0],
                   f"cross-entropy by hand: `{code_of(call)[:50]}`")


@operator("tl207-bce-with-logits-by-hand", "TL207", ("binary_cross_entropy_with_logits",), numeric=True)
def op_bce_by_hand(unit: Unit):
    """Write ``F.binary_cross_entropy_with_logits(z, y)`` (default arguments) as
    ``-(y * torch.log(torch.sigmoid(z)) + (1 - y) * torch.log(1 - torch.sigmoid(z))).mean()``, or,
    with other arguments than ``pos_weight``, as ``F.binary_cross_entropy(torch.sigmoid(z), y, ...)``.

    Why it is the mistake: the sigmoid saturates to 0 or 1 and the logs become ``-inf`` (or are
    clamped at -100 by ``binary_cross_entropy``), where the logits form stays exact: TL207's mistake."""
    if not unit.has_torch:
        return
    for call in unit.of_type(cst.Call):
        if not _torch_func(call, ("binary_cross_entropy_with_logits",)) or len(positional(call)) < 2:
            continue
        if kwarg(call, "pos_weight") is not None or any(a.star for a in call.args):
            continue
        z, y = (a.value for a in positional(call)[:2])
        if len(call.args) == 2 and is_pure(z) and is_pure(y):
            zs, ys = code_of(paren(z)), code_of(paren(y))
            new = f"-({ys} * torch.log(torch.sigmoid({zs})) + (1 - {ys}) * torch.log(1 - torch.sigmoid({zs}))).mean()"
        else:
            rest = ", ".join(code_of(a.value) if a.keyword is None else f"{a.keyword.value}={code_of(a.value)}"
                             for a in call.args[1:])
            new = f"torch.nn.functional.binary_cross_entropy(torch.sigmoid({code_of(z)}), {rest})"
        yield Site(Lazy(replaced, unit.module, {call: _in_place(unit, call, expr(new))}), unit.lines(unit.statement(call)), unit.lines(call)[0],
                   f"BCE on a sigmoid: `{code_of(call)[:50]}`")


def _small_constant(e: cst.BaseExpression) -> bool:
    if isinstance(e, cst.Float):
        try:
            return 0 < float(e.value) <= 1e-3
        except ValueError:
            return False
    n = name_of(e)
    return bool(n) and "eps" in last(n).lower()


@operator("tl208-remove-log-epsilon", "TL208", ("log",))
def op_remove_eps(unit: Unit):
    """Remove the epsilon or clamp that keeps the argument of a ``log`` away from zero:
    ``torch.log(p + eps)`` -> ``torch.log(p)``, ``torch.log(p.clamp(min=eps))`` -> ``torch.log(p)``.

    Why it is the mistake: the author added the guard because ``p`` can be 0 (a probability, a count);
    without it the log is ``-inf`` there: TL208's mistake.  The guard must be a small constant
    (``1e-8``, at most ``1e-3``, or a name spelled ``eps``) so that it is a guard and not a shift."""
    if not unit.has_torch:
        return
    for call in unit.of_type(cst.Call):
        f = name_of(call.func)
        if f in ("torch.log", "torch.log2", "torch.log10") and len(call.args) == 1:
            arg = call.args[0].value
            replace_node: cst.CSTNode = arg
        elif method_call(call, "log", "log2", "log10") and not call.args and not unit.is_module_path(call.func.value):
            arg = call.func.value
            replace_node = arg
        else:
            continue
        inner = arg
        while isinstance(inner, cst.BinaryOperation) is False and inner.lpar and False:
            break
        new: Optional[cst.BaseExpression] = None
        if isinstance(inner, cst.BinaryOperation) and isinstance(inner.operator, cst.Add):
            if _small_constant(inner.right):
                new = inner.left
            elif _small_constant(inner.left):
                new = inner.right
        elif isinstance(inner, cst.Call):
            g = name_of(inner.func)
            if method_call(inner, "clamp", "clamp_min", "clip") and _clamp_guard(inner, 0):
                new = inner.func.value
            elif g in ("torch.clamp", "torch.clamp_min", "torch.clip") and _clamp_guard(inner, 1):
                new = positional(inner)[0].value
        if new is None:
            continue
        new = paren(new.with_changes(lpar=[], rpar=[])) if hasattr(new, "lpar") else new
        yield Site(Lazy(replaced, unit.module, {replace_node: new}), unit.lines(unit.statement(call)), unit.lines(call)[0],
                   f"removed the guard of `{code_of(call)[:60]}`")


def _clamp_guard(call: cst.Call, pos_index: int) -> bool:
    kw = kwarg(call, "min")
    if kw is not None:
        return _small_constant(kw.value) and kwarg(call, "max") is None
    pos = positional(call)
    if len(pos) == pos_index + 1:
        return _small_constant(pos[pos_index].value)
    return False


# -- loops over the batch -----------------------------------------------------------------------------------------
def _assign_of(unit: Unit, call: cst.Call) -> Optional[Tuple[cst.SimpleStatementLine, str]]:
    """(statement, target) when ``call`` is the whole value of ``target = call`` with a plain name target."""
    stmt = unit.statement(call)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    a = stmt.body[0]
    if isinstance(a, cst.Assign) and a.value is call and len(a.targets) == 1 and isinstance(a.targets[0].target, cst.Name):
        if isinstance(unit.parent(stmt), cst.IndentedBlock) or isinstance(unit.parent(stmt), cst.Module):
            return stmt, a.targets[0].target.value
    return None


def _loop_stmts(unit: Unit, stmt: cst.SimpleStatementLine, code: str) -> Site:
    new = [s for s in stmts(code)]
    new[0] = new[0].with_changes(leading_lines=stmt.leading_lines)
    return new  # type: ignore[return-value]


#: what may lie between a hoisted value and its statement without changing whether or when it is computed
_CONDITIONAL = (cst.Lambda, cst.IfExp, cst.BooleanOperation, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
                cst.Yield, cst.Await, cst.NamedExpr)


def _hoist_point(unit: Unit, node: cst.CSTNode) -> Optional[cst.SimpleStatementLine]:
    """The statement before which ``node`` may be computed instead: a simple statement of its own line
    (an assignment, an augmented assignment, an expression or a ``return``) in a block, with nothing
    between them that computes ``node`` conditionally or lazily (``a and b``, ``x if c else y``, a lambda,
    a comprehension)."""
    stmt = unit.statement(node)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    if not isinstance(unit.parent(stmt), (cst.IndentedBlock, cst.Module)):
        return None
    if not isinstance(stmt.body[0], (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr, cst.Return)):
        return None
    for a in unit.ancestors(node):
        if a is stmt:
            return stmt
        if isinstance(a, _CONDITIONAL):
            return None
    return None


def _fresh_name(unit: Unit, base: str, taken: Set[str] = frozenset()) -> str:
    """``base`` (or ``base2``, ``base3``...) when no word of the unit spells it."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", unit.code)) | set(taken)
    name, k = base, 1
    while name in words:
        k += 1
        name = f"{base}{k}"
    return name


def _loop_site(unit: Unit, node: cst.CSTNode, operands: List[Tuple[cst.BaseExpression, str]], loop: Callable[..., str],
               what: str) -> Optional[Site]:
    """The site that computes ``node`` with a Python loop before its statement: each operand that is not a
    pure expression is first bound once to a fresh name (its ``base``), ``loop(result, *operands)`` gives the
    loop's code binding ``result``, and ``node`` becomes ``result``.  A whole ``target = node`` keeps its
    target as the result; None where the statement gives no place to put the loop (see :func:`_hoist_point`)."""
    found = _assign_of(unit, node) if isinstance(node, cst.Call) else None
    stmt = found[0] if found else _hoist_point(unit, node)
    if stmt is None:
        return None
    taken: Set[str] = set()
    pre, texts = [], []
    for e, base in operands:
        if is_pure(e):
            texts.append(code_of(paren(e)))
            continue
        n = _fresh_name(unit, base, taken)
        taken.add(n)
        pre.append(f"{n} = {code_of(e)}\n")
        texts.append(n)
    if found and not pre:
        result = found[1]
        code = loop(result, *texts)
        new = stmts(code)
    else:
        result = _fresh_name(unit, "rows", taken)
        code = "".join(pre) + loop(result, *texts)
        new = stmts(code) + [stmt.deep_replace(node, cst.Name(result)).with_changes(leading_lines=())]
    new[0] = new[0].with_changes(leading_lines=stmt.leading_lines)
    return Site(Lazy(replaced, unit.module, {stmt: cst.FlattenSentinel(new)}), unit.lines(stmt), unit.lines(stmt)[0],
                f"{what} for `{code_of(stmt).strip()[:60]}`")


#: tensor methods numpy arrays and Python lists do not have: a chain holding one is a tensor
_TENSOR_ONLY = ("float", "long", "int", "double", "half", "bool", "byte", "view", "cuda", "cpu", "detach", "to",
                "unsqueeze", "softmax", "log_softmax", "sigmoid", "masked_fill", "eq", "ne", "gt", "lt", "ge", "le",
                "type_as", "expand", "contiguous", "permute", "size")


def _tensor_chain(e: cst.BaseExpression) -> bool:
    """Whether ``e`` is evidently a tensor by what it calls: a method only tensors have on the way
    (``correct[:k].view(-1).float()``), or a ``torch.`` function's result."""
    while True:
        if isinstance(e, cst.Call):
            f = name_of(e.func)
            if f.startswith("torch.") and not f.startswith(("torch.Tensor.", "torch.cuda.")):
                return True
            if isinstance(e.func, cst.Attribute):
                if e.func.attr.value in _TENSOR_ONLY:
                    return True
                e = e.func.value
                continue
            return False
        if isinstance(e, cst.Subscript):
            e = e.value
            continue
        if isinstance(e, cst.Attribute) and e.attr.value == "data":
            e = e.value
            continue
        return False


@operator("tl301-sum-as-row-loop", "TL301", ("sum",))
def op_sum_loop(unit: Unit):
    """Rewrite ``x.sum(dim=0)`` (``x.sum(0)``, ``torch.sum(x, 0)``) of a batch as a Python loop adding the
    rows of ``x`` one at a time (``s = torch.zeros_like(x[0])``; ``for i in range(x.size(0)): s = s + x[i]``)
    placed before its statement; the statement then reads the loop's result (``correct_k =
    correct[:k].view(-1).float().sum(0)``, ``return x.sum(dim=0)``).  A receiver that is not a plain name
    or attribute is computed once, before the loop.

    Why it is the mistake: the same sum, one Python iteration (and one kernel launch) per row, which
    is TL301's mistake.  The method spelling only with ``dim=``, or with a positional ``0`` on a chain
    that is evidently a tensor (``.float()``, ``.view(...)``: numpy's ``sum`` takes ``axis``)."""
    if not unit.has_torch:
        return
    for call in unit.of_type(cst.Call):
        if _torch_func(call, ("sum",), ("torch.",)) and len(positional(call)) >= 1:
            x = positional(call)[0].value
            dim = _dim_text(call, 1)
            ok = _only(call, ("dim",), 2)
        elif method_call(call, "sum") and not unit.is_module_path(call.func.value) and \
                (kwarg(call, "dim") is not None or _tensor_chain(call.func.value)):
            x = call.func.value
            dim = _dim_text(_as_function_call(call), 1)
            ok = _only(call, ("dim",), 1)
        else:
            continue
        if not ok or dim not in ("0",):
            continue
        site = _loop_site(unit, call, [(x, "batch")],
                          lambda r, xs: f"{r} = torch.zeros_like({xs}[0])\nfor i in range({xs}.size(0)):\n"
                                        f"    {r} = {r} + {xs}[i]\n", "row loop")
        if site is not None:
            yield site


def _gather_parts(call: cst.Call) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression, bool]]:
    """(x, idx, squeezed) for ``x.gather(1, idx.unsqueeze(1))`` / ``torch.gather(x, 1, idx.view(-1, 1))``
    (``dim=1``, ``index=``, ``-1`` for the unsqueezed dimension), with or without a ``.squeeze(1)`` of
    the result (``squeezed``): the index is ``[B, 1]``, so ``x`` is ``[B, C]`` and row ``i`` picks
    ``x[i][idx[i]]``."""
    squeezed = False
    if method_call(call, "squeeze") and len(call.args) == 1 and code_of(call.args[0].value) in ("1", "-1") \
            and call.args[0].keyword is None and isinstance(call.func.value, cst.Call):
        g, squeezed = call.func.value, True
    else:
        g = call
    if method_call(g, "gather") and len(g.args) == 2:
        x = g.func.value
        d = kwarg(g, "dim") or g.args[0]
        i = kwarg(g, "index") or g.args[1]
    elif name_of(g.func) == "torch.gather" and len(g.args) == 3:
        x = g.args[0].value
        d = kwarg(g, "dim") or g.args[1]
        i = kwarg(g, "index") or g.args[2]
    else:
        return None
    if any(a.star for a in g.args) or code_of(d.value) not in ("1", "-1") or not isinstance(i.value, cst.Call):
        return None
    i = i.value
    if method_call(i, "unsqueeze") and len(i.args) == 1 and code_of(i.args[0].value) in ("1", "-1"):
        idx = i.func.value
    elif method_call(i, "view", "reshape") and code_of(i).replace(" ", "").endswith("(-1,1)"):
        idx = i.func.value
    else:
        return None
    return x, idx, squeezed


def _row_pick_parts(sub: cst.Subscript) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression, str]]:
    """(x, idx, n) for ``x[torch.arange(n), idx]`` / ``x[range(len(y)), idx]``: one element (or trailing
    slice) per row ``i`` of the first ``n``, at column ``idx[i]``; the index may not be a number (the
    same column of every row is a slice, not a gather)."""
    if len(sub.slice) != 2 or not all(isinstance(e.slice, cst.Index) for e in sub.slice):
        return None
    first, idx = sub.slice[0].slice.value, sub.slice[1].slice.value
    if not isinstance(first, cst.Call) or name_of(first.func) not in ("torch.arange", "range") \
            or len(first.args) != 1 or first.args[0].keyword is not None or first.args[0].star:
        return None
    if isinstance(idx, (cst.Integer, cst.Float, cst.UnaryOperation, cst.Slice)) or code_of(idx) in ("None", "..."):
        return None
    return sub.value, idx, code_of(first.args[0].value)


@operator("tl302-gather-as-loop", "TL302", ("gather", "arange", "range("))
def op_gather_loop(unit: Unit):
    """Rewrite ``x.gather(1, idx.unsqueeze(1)).squeeze(1)`` (``torch.gather``, ``view(-1, 1)``, ``dim=``/
    ``index=``, with or without the ``squeeze``) and ``x[torch.arange(n), idx]`` (``x[range(len(y)), idx]``)
    as a Python loop gathering one row at a time (``rows.append(x[i][idx[i]])``, then ``torch.stack``),
    before its statement; a source or index that is not a plain name (``self.net(states)``,
    ``actions.long()``) is computed once before the loop.

    Why it is the mistake: the same values, picked one row per Python iteration: TL302's mistake."""
    if not unit.has_torch:
        return
    for node in unit.nodes:
        if isinstance(node, cst.Call):
            parts = _gather_parts(node)
            if parts is None:
                continue
            x, idx, squeezed = parts
            if isinstance(unit.parent(node), cst.Attribute) and method_call(unit.parent(unit.parent(node)), "squeeze"):
                continue  # the squeezed call is the site
            tail = "" if squeezed else ".unsqueeze(1)"
            site = _loop_site(unit, node, [(x, "scores"), (idx, "index")],
                              lambda r, xs, ids: f"{r} = []\nfor i in range({xs}.size(0)):\n"
                                                 f"    {r}.append({xs}[i][{ids}[i]])\n{r} = torch.stack({r}){tail}\n",
                              "gather loop")
        elif isinstance(node, cst.Subscript):
            parts = _row_pick_parts(node)
            if parts is None or isinstance(unit.parent(node), (cst.AssignTarget, cst.AugAssign)) or \
                    any(isinstance(a, (cst.AssignTarget, cst.Del)) for a in unit.ancestors(node)):
                continue  # a store into the rows is not a gather
            x, idx, n = parts
            site = _loop_site(unit, node, [(x, "scores"), (idx, "index")],
                              lambda r, xs, ids: f"{r} = []\nfor i in range({n}):\n"
                                                 f"    {r}.append({xs}[i, {ids}[i]])\n{r} = torch.stack({r})\n",
                              "gather loop")
        else:
            continue
        if site is not None:
            yield site


ROW_METHODS = ("sum", "mean", "norm", "softmax", "log_softmax", "max", "argmax", "amax", "logsumexp")


@operator("tl303-row-op-as-loop", "TL303", ROW_METHODS)
def op_row_loop(unit: Unit):
    """Rewrite ``y = x.op(dim=-1)`` (``sum``, ``mean``, ``norm``, ``softmax``, ``argmax``...: one result per
    row, computed along the last dimension) as a Python loop over the rows:
    ``rows.append(x[i].op(dim=-1))`` for ``i in range(x.size(0))``, then ``torch.stack``.

    Why it is the mistake: the same values, one row per Python iteration, where one vectorized call
    does all rows: TL303's mistake.  Only for a statement of its own, a pure ``x`` and ``dim=-1``
    spelled as a keyword (a tensor, not a numpy array; exact for every rank >= 2: row ``i``'s last
    dimension is ``x``'s)."""
    if not unit.has_torch:
        return
    for call in unit.of_type(cst.Call):
        if not method_call(call, *ROW_METHODS) or not is_pure(call.func.value) or kwarg(call, "dim") is None \
                or unit.is_module_path(call.func.value):  # `torch.argmax(x, dim=-1)` is no method of a tensor
            continue  # `dim=` spelled out: a tensor, not a numpy array
        dim = _dim_text(_as_function_call(call), 1)
        if dim not in ("-1",) or not _only(call, ("dim",), 1):
            continue
        if call.func.attr.value == "max":
            continue  # a (values, indices) pair: not stackable
        found = _assign_of(unit, call)
        if found is None:
            continue
        stmt, target = found
        x = code_of(paren(call.func.value))
        op = call.func.attr.value
        code = (f"{target} = []\nfor i in range({x}.size(0)):\n    {target}.append({x}[i].{op}(dim=-1))\n"
                f"{target} = torch.stack({target})\n")
        yield Site(Lazy(replaced, unit.module, {stmt: cst.FlattenSentinel(_loop_stmts(unit, stmt, code))}),
                   unit.lines(stmt), unit.lines(stmt)[0], f"row loop for `{code_of(stmt).strip()[:60]}`")


def _tally_parts(e: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression, str, str]]:
    """(a, b, comparison, tail) for a count of equal elements: ``(a == b).sum()``, ``a.eq(b).sum()``, with
    ``.cpu()`` / ``.float()`` / ``.item()`` around the ``sum`` (``tail``: the code after the comparison),
    where neither side is a literal (a count of one value is another matter)."""
    tail: List[str] = []
    while isinstance(e, cst.Call) and method_call(e, "item", "cpu", "float", "double", "long", "int") and not e.args:
        tail.insert(0, f".{e.func.attr.value}()")
        e = e.func.value
    if not (isinstance(e, cst.Call) and method_call(e, "sum") and not e.args):
        return None
    tail.insert(0, ".sum()")
    e = e.func.value
    while isinstance(e, cst.Call) and method_call(e, "cpu", "float", "double", "long", "int") and not e.args:
        tail.insert(0, f".{e.func.attr.value}()")
        e = e.func.value
    if isinstance(e, cst.Comparison) and len(e.comparisons) == 1 and isinstance(e.comparisons[0].operator, cst.Equal):
        a, b, how = e.left, e.comparisons[0].comparator, "=="
    elif isinstance(e, cst.Call) and method_call(e, "eq") and len(e.args) == 1 and e.args[0].keyword is None:
        a, b, how = e.func.value, e.args[0].value, "eq"
    else:
        return None
    if any(isinstance(x, (cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation)) or code_of(x) in ("None", "True", "False")
           for x in (a, b)):
        return None
    return a, b, how, "".join(tail)


@operator("tl303-tally-as-row-loop", "TL303", ("eq(", "=="))
def op_tally_loop(unit: Unit):
    """Rewrite a count of matches added to a running total, ``correct += (pred == y).sum().item()``
    (``pred.eq(y).sum()``, ``.cpu().sum()``, without ``.item()``), as a Python loop over the rows that
    compares and counts one row per iteration: ``for i in range(pred.size(0)): correct += (pred[i] ==
    y[i]).sum().item()``; a side that is computed (``y.view_as(pred)``, ``out.argmax(dim=-1)``) is bound
    once before the loop.

    Why it is the mistake: the same count (each row's matches summed; ``[B]`` and ``[B, 1]`` rows
    alike), one Python iteration, comparison and host round trip per row where one comparison does the
    batch: the per-class tallies of research code, TL303's mistake.  Only for ``+=`` of the whole count
    to a plain name or attribute."""
    if not unit.has_torch:
        return
    for aug in unit.of_type(cst.AugAssign):
        if not isinstance(aug.operator, cst.AddAssign) or not isinstance(aug.target, (cst.Name, cst.Attribute)):
            continue
        parts = _tally_parts(aug.value)
        stmt = unit.statement(aug)
        if parts is None or not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 \
                or not isinstance(unit.parent(stmt), (cst.IndentedBlock, cst.Module)):
            continue
        a, b, how, tail = parts
        taken: Set[str] = set()
        pre, names = [], []
        for e, base in ((a, "batch"), (b, "labels")):
            if isinstance(e, (cst.Name, cst.Attribute)) and is_pure(e):
                names.append(code_of(e))
                continue
            n = _fresh_name(unit, base, taken)
            taken.add(n)
            pre.append(f"{n} = {code_of(e)}\n")
            names.append(n)
        x, y = names
        cmp = f"({x}[i] == {y}[i])" if how == "==" else f"{x}[i].eq({y}[i])"
        target = code_of(aug.target)
        code = "".join(pre) + f"for i in range({x}.size(0)):\n    {target} += {cmp}{tail}\n"
        new = stmts(code)
        new[0] = new[0].with_changes(leading_lines=stmt.leading_lines)
        yield Site(Lazy(replaced, unit.module, {stmt: cst.FlattenSentinel(new)}), unit.lines(stmt), unit.lines(stmt)[0],
                   f"tally loop for `{code_of(stmt).strip()[:60]}`")


# -- shapes -------------------------------------------------------------------------------------------------------
def _models(unit: Unit) -> Set[str]:
    """Names the unit treats as models: built from a module class (of the tree's, ``nn.`` or
    torchvision's), or given ``.eval()`` / ``.train()`` / ``.parameters()``."""
    out = set()
    for call in unit.of_type(cst.Call):
        if method_call(call, "eval", "train", "parameters") and receiver(call):
            out.add(receiver(call))
    for node in unit.of_type(cst.Assign):
        if isinstance(node.value, cst.Call):
            f = name_of(node.value.func)
            if f.startswith(("nn.", "torch.nn.") + TORCHVISION_MODELS) or last(f) in unit.tree.stochastic_classes:
                for t in node.targets:
                    if name_of(t.target):
                        out.add(name_of(t.target))
    return out


#: tensor methods whose result keeps the receiver's leading dimensions (a view, a product, a copy)
_TL401_KEEPS = ("bmm", "matmul", "view", "reshape", "transpose", "permute", "contiguous", "detach", "clone", "to",
                "cpu", "cuda", "float", "unsqueeze", "squeeze", "softmax", "log_softmax", "sigmoid", "tanh", "relu")


def _module_class(cls: Optional[cst.CSTNode]) -> bool:
    """A class the unit writes as a module: a base spelled ``...Module``, or a ``forward`` method."""
    if not isinstance(cls, cst.ClassDef):
        return False
    if any(last(name_of(b.value)) == "Module" for b in cls.bases):
        return True
    return any(isinstance(s, cst.FunctionDef) and s.name.value == "forward" for s in cls.body.body)


def _activation(unit: Unit, e: cst.BaseExpression, models: Set[str], depth: int = 0) -> bool:
    """A value a network computed, by the unit's own code: the output of a model call (``model(x)``,
    ``out, h = net(x)``), or in a method of a module class the result of a call on the module itself
    (``self.lstm(x)``, ``self.rnn.forward_step(...)``, ``self.attend(h, enc)``); through the names it is
    bound to in the function (one or a tuple of targets) and through views and products of it
    (``.view(-1, 1)``, ``.data``, ``.bmm(...)``, ``torch.bmm(a, b)``)."""
    if depth > 6:
        return False
    if isinstance(e, cst.Attribute) and e.attr.value == "data":
        return _activation(unit, e.value, models, depth + 1)
    if isinstance(e, cst.Call):
        f = name_of(e.func)
        if f in models:
            return not any(_one_sample_input(unit, a.value) for a in e.args if a.keyword is None)
        if f.startswith("self.") and _module_class(unit.enclosing(e, cst.ClassDef)) and unit.function(e) is not None:
            return True
        if last(f) in ("bmm", "matmul") and f.startswith("torch.") and e.args:
            return _activation(unit, e.args[0].value, models, depth + 1)
        if isinstance(e.func, cst.Attribute) and e.func.attr.value in _TL401_KEEPS:
            return _activation(unit, e.func.value, models, depth + 1)
        return False
    if isinstance(e, cst.Name):
        fn = unit.function(e)
        scope = fn if fn is not None else unit.module
        at = unit.lines(e)[0]
        bound = []
        for n in unit.scope_nodes(scope):
            if not isinstance(n, cst.Assign) or len(n.targets) != 1:
                continue
            t = n.targets[0].target
            names = [el.value for el in t.elements] if isinstance(t, (cst.Tuple, cst.List)) else [t]
            if any(isinstance(x, cst.Name) and x.value == e.value for x in names):
                bound.append((unit.lines(n)[0], n))
        before = [n for line, n in sorted(bound, key=lambda b: b[0]) if line < at]
        # the assignment that reaches the read: the last one before it (every one, in a loop's body)
        return bool(before) and _activation(unit, before[-1].value, models, depth + 1)
    return False


def _one_sample_input(unit: Unit, e: cst.BaseExpression, depth: int = 0) -> bool:
    """An input the unit builds as a batch of one: ``torch.zeros(1, 1, 28, 28)`` (a size constructor whose
    first size is a literal 1, and more sizes), ``x.unsqueeze(0)``, ``x[None]``, or a name bound to one in
    the scope; a model run on it is squeezed to one sample on purpose."""
    if depth > 6:
        return False  # (`x = x.to(device)` names itself)
    if isinstance(e, cst.Name):
        fn = unit.function(e)
        scope = fn if fn is not None else unit.module
        values = [n.value for n in unit.scope_nodes(scope) if isinstance(n, cst.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0].target, cst.Name) and n.targets[0].target.value == e.value]
        return bool(values) and all(_one_sample_input(unit, v, depth + 1) for v in values)
    if isinstance(e, cst.Subscript):
        first = e.slice[0].slice if e.slice else None
        return isinstance(first, cst.Index) and code_of(first.value) == "None"
    if not isinstance(e, cst.Call):
        return False
    if method_call(e, "unsqueeze") and e.args and code_of(e.args[0].value) == "0":
        return True
    if method_call(e, "to", "cuda", "cpu", "float"):
        return _one_sample_input(unit, e.func.value, depth + 1)
    sizes = [a.value for a in e.args if a.keyword is None]
    return last(name_of(e.func)) in ("zeros", "ones", "rand", "randn", "empty") and name_of(e.func).startswith("torch.") \
        and len(sizes) >= 2 and code_of(sizes[0]) == "1"


@operator("tl401-squeeze-without-dim", "TL401", ("squeeze",))
def op_squeeze_all(unit: Unit):
    """Turn ``out.squeeze(d)`` / ``torch.squeeze(out, d)`` into ``out.squeeze()`` / ``torch.squeeze(out)``
    where ``out`` is a network's activation (see :func:`_activation`): a model's output, or what a module's
    method computes with its own layers and steps (``hiddens, states = self.lstm(x)``, ``context =
    attn.bmm(enc)``), through views of it.

    Why it is the mistake: such a value carries the batch dimension; ``squeeze()`` also drops it when a
    batch holds one sample (the last batch of an epoch, a single prediction), which is TL401's mistake.
    Only for a literal ``d`` other than 0 (squeezing a leading dimension on purpose is another matter), and
    not on a model run on an input the code builds as a batch of one (``torch.zeros(1, 1, 28, 28)``)."""
    models = _models(unit)
    for call in unit.of_type(cst.Call):
        if name_of(call.func) == "torch.squeeze":
            if not unit.has_torch or len(call.args) != 2:
                continue
            x, dims = call.args[0].value, call.args[1:]
            edited = call.with_changes(args=[call.args[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        elif method_call(call, "squeeze") and not unit.is_module_path(call.func.value):
            x, dims = call.func.value, call.args
            edited = call.with_changes(args=[])
        else:
            continue
        if len(dims) != 1 or dims[0].star or dims[0].keyword is not None and dims[0].keyword.value != "dim":
            continue
        d = code_of(dims[0].value).strip()
        if d.lstrip("-") not in ("1", "2", "3", "4") or not _activation(unit, x, models):
            continue
        yield Site(Lazy(replaced, unit.module, {call: edited}), unit.lines(unit.statement(call)),
                   unit.lines(call)[0], f"squeeze() of `{code_of(call)[:50]}`")


ELEMENTWISE_LOSS_FUNCS = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss")
ELEMENTWISE_LOSS_CLASSES = ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss")


def _aligning(v: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, str]]:
    """What ``v`` aligns, and how: ``"pred"`` for a prediction brought from ``[B, 1]`` (or ``[B, 1, H, W]``)
    down to its target's shape (``p.squeeze(1)``, ``p.squeeze(-1)``, ``dim=`` too, ``p.view(-1)``,
    ``p.reshape(-1)``, ``p.flatten()``, ``p[:, 0]``), ``"target"`` for a target given the prediction's
    singleton (``y.unsqueeze(1)``, ``y.unsqueeze(-1)``, ``y.view(-1, 1)``, ``y.reshape(-1, 1)``,
    ``y[:, None]``)."""
    if isinstance(v, cst.Call) and method_call(v, "squeeze", "unsqueeze") and len(v.args) == 1 \
            and (v.args[0].keyword is None or v.args[0].keyword.value == "dim") \
            and code_of(v.args[0].value) in ("1", "-1"):
        return v.func.value, "pred" if v.func.attr.value == "squeeze" else "target"
    if isinstance(v, cst.Call) and method_call(v, "view", "reshape") and len(v.args) == 2 and \
            all(a.keyword is None for a in v.args) and \
            code_of(v.args[0].value) == "-1" and code_of(v.args[1].value) == "1":
        return v.func.value, "target"
    if isinstance(v, cst.Call) and method_call(v, "view", "reshape") and len(v.args) == 1 and \
            v.args[0].keyword is None and code_of(v.args[0].value) == "-1":
        return v.func.value, "pred"
    if isinstance(v, cst.Call) and method_call(v, "flatten") and not v.args:
        return v.func.value, "pred"
    if isinstance(v, cst.Subscript) and len(v.slice) == 2 and isinstance(v.slice[0].slice, cst.Slice) \
            and code_of(v.slice[0].slice) == ":" and isinstance(v.slice[1].slice, cst.Index):
        second = code_of(v.slice[1].slice.value)
        if second == "None":
            return v.value, "target"
        if second == "0":
            return v.value, "pred"
    return None


def _single_output_builder(unit: Unit, value: cst.BaseExpression) -> bool:
    """``nn.Linear(h, 1)`` / ``nn.Conv2d(c, 1, k)`` (``out_features=1`` / ``out_channels=1``), or an
    ``nn.Sequential`` whose last layer is one: a layer with one output per row (per pixel)."""
    if not isinstance(value, cst.Call):
        return False
    kind = last(name_of(value.func))
    if kind == "Sequential":
        layers = positional(value)
        return bool(layers) and _single_output_builder(unit, layers[-1].value)
    if kind in ("Linear", "Conv1d", "Conv2d", "Conv3d"):
        out = kwarg(value, "out_features" if kind == "Linear" else "out_channels")
        pos = positional(value)
        out_value = out.value if out is not None else pos[1].value if len(pos) >= 2 else None
        return out_value is not None and code_of(out_value) == "1"
    return False


def _single_output(unit: Unit, pred: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether the file shows that ``pred`` has one value per row: a call of a layer assigned (anywhere in
    the file, every time) a single-output layer (``head = nn.Linear(h, 1)``, ``self.out = ...``), of a
    model class of the file whose ``forward`` ends in ``return self.<such a layer>(...)``, or a gather of one
    entry per row (``q.gather(1, a.unsqueeze(-1))``); through a name bound once in the function."""
    if depth > 3:
        return False
    if isinstance(pred, cst.Name):
        bound = _bound_once(unit, pred)
        return bound is not None and _single_output(unit, bound.value, depth + 1)
    if not isinstance(pred, cst.Call):
        return False
    if method_call(pred, "gather") and len(pred.args) == 2 and code_of(pred.args[0].value) in ("1", "-1"):
        index = pred.args[1].value
        return (method_call(index, "unsqueeze") and len(index.args) == 1 and code_of(index.args[0].value) in ("1", "-1")) \
            or (method_call(index, "view", "reshape") and code_of(index).replace(" ", "").endswith("(-1,1)"))
    if method_call(pred, "float", "double", "contiguous", "to", "cuda", "cpu"):
        return _single_output(unit, pred.func.value, depth + 1)
    callee = name_of(pred.func)
    if not callee:
        return False
    values = [a.value for a in unit.of_type(cst.Assign) if any(name_of(t.target) == callee for t in a.targets)]
    if not values:
        return False
    if all(_single_output_builder(unit, v) for v in values):
        return True
    if len(values) != 1 or not isinstance(values[0], cst.Call):
        return False
    built = values[0]
    while method_call(built, "to", "cuda", "cpu", "float", "double") and isinstance(built.func.value, cst.Call):
        built = built.func.value
    cls_name = name_of(built.func)
    for cls in unit.of_type(cst.ClassDef):
        if cls.name.value != cls_name or not isinstance(cls.body, cst.IndentedBlock):
            continue
        for fn in cls.body.body:
            if not (isinstance(fn, cst.FunctionDef) and fn.name.value == "forward"
                    and isinstance(fn.body, cst.IndentedBlock) and fn.body.body):
                continue
            end = fn.body.body[-1]
            if isinstance(end, cst.SimpleStatementLine) and isinstance(end.body[0], cst.Return):
                ret = _returned_call(fn, end.body[0].value)
                if isinstance(ret, cst.Call) and name_of(ret.func).startswith("self."):
                    head = name_of(ret.func)
                    heads = [a.value for a in unit.of_type(cst.Assign) if unit.enclosing(a, cst.ClassDef) is cls
                             and any(name_of(t.target) == head for t in a.targets)]
                    return bool(heads) and all(_single_output_builder(unit, h) for h in heads)
    return False


def _returned_call(fn: cst.FunctionDef, ret: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """What ``forward`` returns at its end: the returned expression, or for ``return x`` the value of the last
    ``x = ...`` among the statements of its body (``x = self.out(x)`` then ``return x``)."""
    if not isinstance(ret, cst.Name):
        return ret
    for stmt in reversed(fn.body.body[:-1]):
        if not isinstance(stmt, cst.SimpleStatementLine):
            return None  # a branch or a loop may bind it otherwise
        for small in reversed(stmt.body):
            if isinstance(small, cst.Assign) and any(ret.value in {n.value for n in [t.target, *_all(t.target)]
                                                                    if isinstance(n, cst.Name)} for t in small.targets):
                return small.value if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) else None
            if isinstance(small, (cst.AugAssign, cst.AnnAssign)) and name_of(small.target) == ret.value:
                return None
    return None


def _number(unit: Unit, e: cst.BaseExpression, depth: int = 0) -> bool:
    """A Python number the file shows: a literal (signed), or a name bound once, in its scope, to one."""
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, (cst.Minus, cst.Plus)):
        e = e.expression
    if isinstance(e, (cst.Integer, cst.Float)):
        return True
    if isinstance(e, cst.Name) and depth < 3:
        bound = _bound_once(unit, e)
        return bound is not None and _number(unit, bound.value, depth + 1)
    if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and depth < 3:
        # `args.gamma` of `args = Args()` / `args = tyro.cli(Args)`, the class annotating `gamma: float`
        bound = _bound_once(unit, e.value)
        built = bound.value if bound is not None else None
        if isinstance(built, cst.Call) and name_of(built.func) in ("tyro.cli",) and positional(built):
            cls_name = name_of(positional(built)[0].value)
        elif isinstance(built, cst.Call):
            cls_name = name_of(built.func)
        else:
            return False
        for cls in unit.of_type(cst.ClassDef):
            if cls.name.value == cls_name and isinstance(cls.body, cst.IndentedBlock):
                return any(isinstance(st, cst.SimpleStatementLine) and isinstance(st.body[0], cst.AnnAssign)
                           and name_of(st.body[0].target) == e.attr.value
                           and name_of(st.body[0].annotation.annotation) in ("float", "int")
                           for st in cls.body.body)
    return False


def _a_size(unit: Unit, e: cst.BaseExpression) -> bool:
    """One size (not a tuple of them): an int literal or a name bound once to one, ``len(x)``, ``x.size(0)``,
    ``x.shape[0]``."""
    if isinstance(e, cst.Integer) or (isinstance(e, cst.Name) and _number(unit, e)):
        return True
    if isinstance(e, cst.Call) and name_of(e.func) == "len" and len(e.args) == 1:
        return True
    if method_call(e, "size") and len(e.args) == 1 and isinstance(e.args[0].value, cst.Integer):
        return True
    return isinstance(e, cst.Subscript) and isinstance(e.value, cst.Attribute) and e.value.attr.value == "shape" \
        and len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index) \
        and isinstance(e.slice[0].slice.value, cst.Integer)


_VECTOR_MAKERS = ("zeros", "ones", "empty", "rand", "randn", "arange")
_VECTOR_MOVES = ("float", "double", "to", "cuda", "cpu", "detach", "clone", "contiguous")


def _one_per_row(unit: Unit, e: cst.BaseExpression, depth: int = 0) -> bool:
    """Whether the file shows that ``e`` is a 1-D tensor (one value per row), by how it is built: a
    ``flatten()``, ``view(-1)`` or ``reshape(-1)``; ``torch.zeros(n)`` (``ones``, ``rand``, ``randn``,
    ``empty``, ``arange``) of one size; ``torch.tensor([...])`` of a flat list of numbers; the ``squeeze(1)``
    of a one-output head's result; moves of those (``.float()``, ``.to(d)``, ``.detach()``), and
    element-wise arithmetic of those with each other and with numbers; a column of the batches of a
    ``DataLoader`` over a ``TensorDataset`` whose tensor at that position is one; through names bound once.
    A value whose rank comes from elsewhere (a parameter, an environment, a configuration) is not known."""
    if depth > 8:
        return False
    if isinstance(e, cst.Name):
        bound = _bound_once(unit, e)
        if bound is not None:
            return _one_per_row(unit, bound.value, depth + 1)
        return _loader_column(unit, e, depth)
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Minus):
        return _one_per_row(unit, e.expression, depth + 1)
    if isinstance(e, cst.BinaryOperation) and isinstance(e.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)):
        sides = (e.left, e.right)
        vectors = [s for s in sides if _one_per_row(unit, s, depth + 1)]
        return bool(vectors) and all(s in vectors or _number(unit, s) for s in sides)
    if not isinstance(e, cst.Call):
        return False
    pos = positional(e)
    if method_call(e, "flatten") and not e.args:
        return True
    if method_call(e, "view", "reshape") and len(e.args) == 1 and pos and code_of(pos[0].value) == "-1":
        return True
    if method_call(e, *_VECTOR_MOVES):
        return _one_per_row(unit, e.func.value, depth + 1)
    if method_call(e, "squeeze") and len(pos) == 1 and code_of(pos[0].value) in ("1", "-1"):
        return _single_output(unit, e.func.value)
    callee = name_of(e.func)
    torch_call = callee.split(".")[0] in unit.imports and unit.imports[callee.split(".")[0]] == "torch"
    if torch_call and callee.count(".") == 1 and last(callee) == "flatten" and len(e.args) == 1:
        return True
    if torch_call and callee.count(".") == 1 and last(callee) in _VECTOR_MAKERS:
        return len(e.args) == len(pos) + sum(1 for a in e.args if a.keyword is not None and a.keyword.value in (
            "dtype", "device", "requires_grad")) and len(pos) == 1 and _a_size(unit, pos[0].value)
    if torch_call and callee.count(".") == 1 and last(callee) in ("tensor", "as_tensor", "FloatTensor") and pos:
        data = pos[0].value
        return isinstance(data, (cst.List, cst.Tuple)) and bool(data.elements) and all(
            _number(unit, el.value) for el in data.elements)
    return False


def _loader_column(unit: Unit, name: cst.Name, depth: int) -> bool:
    """``y`` of ``for x, y in loader`` (or ``for i, (x, y) in enumerate(loader)``), the loop being the one
    binding of ``y`` in its scope, ``loader`` bound once to a ``DataLoader`` over a ``TensorDataset`` (no
    ``collate_fn`` or ``batch_sampler``) whose tensor at ``y``'s position is one value per row."""
    fn = unit.function(name)
    scope = fn if fn is not None else unit.module
    loops = [n for n in unit.scope_nodes(scope) if isinstance(n, cst.For)
             and any(isinstance(x, cst.Name) and x.value == name.value for x in [n.target, *_all(n.target)])]
    if len(loops) != 1 or _bound_once(unit, name) is not None:
        return False
    loop = loops[0]
    target, it = loop.target, loop.iter
    if isinstance(it, cst.Call) and name_of(it.func) == "enumerate" and len(it.args) == 1 \
            and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        target, it = target.elements[1].value, it.args[0].value
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(it, cst.Name):
        return False
    k = next((i for i, el in enumerate(target.elements)
              if isinstance(el.value, cst.Name) and el.value.value == name.value), None)
    loader = _bound_once(unit, it) if k is not None else None
    if loader is None or not isinstance(loader.value, cst.Call) or last(name_of(loader.value.func)) != "DataLoader":
        return False
    if any(kwarg(loader.value, key) is not None for key in ("collate_fn", "batch_sampler")) or not positional(loader.value):
        return False
    data = positional(loader.value)[0].value
    if isinstance(data, cst.Name):
        bound = _bound_once(unit, data)
        data = bound.value if bound is not None else data
    if not (isinstance(data, cst.Call) and last(name_of(data.func)) == "TensorDataset"):
        return False
    columns = positional(data)
    return k < len(columns) and len(columns) == len(data.args) == len(target.elements) \
        and _one_per_row(unit, columns[k].value, depth + 1)


def _bound_once(unit: Unit, name: cst.Name) -> Optional[cst.Assign]:
    """The one ``name = value`` of the function (or module) around ``name``, before it, when the scope
    binds ``name`` nowhere else (no other assignment or loop target; a parameter it rebinds,
    ``y = y.view(-1, 1)``, is read after as the rebound value)."""
    fn = unit.function(name)
    scope = fn if fn is not None else unit.module
    found = []
    for n in unit.scope_nodes(scope):
        if isinstance(n, cst.Assign):
            for t in n.targets:
                if any(isinstance(x, cst.Name) and x.value == name.value for x in [t.target, *_all(t.target)]):
                    found.append(n if isinstance(t.target, cst.Name) else None)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.CompFor, cst.NamedExpr)):
            target = n.target if not isinstance(n, cst.WithItem) else (n.asname.name if n.asname else None)
            if target is not None and any(isinstance(x, cst.Name) and x.value == name.value for x in [target, *_all(target)]):
                found.append(None)
    if len(found) != 1 or found[0] is None or unit.lines(found[0])[0] >= unit.lines(name)[0]:
        return None
    return found[0]


@operator("tl402-remove-aligning-squeeze", "TL402", ("mse_loss", "l1_loss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "smooth_l1_loss", "huber_loss"))
def op_remove_squeeze(unit: Unit):
    """Remove the alignment of a prediction with its target given to a mean element-wise loss
    (``F.mse_loss``, ``nn.MSELoss()`` called on its own or through a name, L1, smooth L1, Huber): the
    ``squeeze(1)`` / ``squeeze(-1)`` (``dim=``), ``view(-1)`` / ``reshape(-1)``, ``flatten()`` or ``[:, 0]``
    of the prediction, or the ``unsqueeze(1)`` / ``unsqueeze(-1)`` / ``view(-1, 1)`` / ``reshape(-1, 1)`` /
    ``[:, None]`` of the target; in the loss's argument, or where the argument's name was bound once in the
    function (``q = self.net(s).gather(1, a).squeeze(-1)`` ... ``mse(q, target)``).  The binary
    cross-entropies are left out: torch 2.13 raises on a ``[B, 1]`` input against a ``[B]`` target.

    Only where the file shows that the prediction has one value per row (or per pixel): the output of a
    layer built as ``nn.Linear(h, 1)`` / ``nn.Conv2d(c, 1, k)`` (or an ``nn.Sequential`` ending in one), of a
    model class of the file whose ``forward`` returns such a layer's output (``return self.out(x)``, or
    ``x = self.out(x)`` then ``return x``), or a gather of one entry per row (``q.gather(1, a.unsqueeze(-1))``).
    Other places (a ``view(-1)`` of a ``[B, C]`` prediction against flattened targets, whose removal raises
    instead) are refused.

    And only where the file also shows that the target, as the mutant compares it, is 1-D (see
    :func:`_one_per_row`: built by ``flatten()``, ``view(-1)``, ``torch.zeros(n)``, a list of numbers, a
    ``TensorDataset`` column through a ``DataLoader``, element-wise arithmetic of those).  That the original
    code was correct says the target was ``[B]``, but the mutant does not say it: a target whose rank comes
    from a parameter, an environment (a replay buffer filled from ``env.step``), a configuration or a
    library is not knowable from the code, so no static rule can be asked to find the broadcast there, and
    removing a ``y.view(-1, 1)`` of a target that may already be ``[B, 1]`` need not make a mistake at all.

    Why it is the mistake: the author aligned the two, so without it the loss compares ``[B, 1]`` with
    ``[B]``, broadcasts to ``[B, B]`` and averages the wrong thing (torch only warns), TL402's mistake."""
    calls = list(_loss_calls(unit, ELEMENTWISE_LOSS_FUNCS, ELEMENTWISE_LOSS_CLASSES))
    calls += [c for c in unit.of_type(cst.Call) if isinstance(c.func, cst.Call) and positional(c)
              and last(name_of(c.func.func)) in ELEMENTWISE_LOSS_CLASSES and c not in calls]
    seen: Set[int] = set()
    for call in calls:
        red = kwarg(call, "reduction")
        if red is None and isinstance(call.func, cst.Call):
            red = kwarg(call.func, "reduction")
        if red is not None and code_of(red.value) not in ("'mean'", '"mean"'):
            continue
        pos = positional(call)
        if len(pos) < 2:
            continue
        for k, a in enumerate(pos[:2]):
            v, where = a.value, call
            if isinstance(v, cst.Name):
                bound = _bound_once(unit, v)
                if bound is None:
                    continue
                v, where = bound.value, bound
            found = _aligning(v)
            if found is None or id(v) in seen:
                continue
            inner, side = found
            # the prediction: what the removal leaves of it, or the other operand when the target is edited
            pred = inner if side == "pred" else pos[1 - k].value
            target = pos[1 - k].value if side == "pred" else inner
            if not _single_output(unit, pred) or not _one_per_row(unit, target):
                continue
            seen.add(id(v))
            yield Site(Lazy(replaced, unit.module, {v: inner}), unit.lines(unit.statement(call)), unit.lines(where)[0],
                       f"removed `{code_of(v)[:50]}`'s alignment")


# -- api ------------------------------------------------------------------------------------------------------------
def _loads(unit: Unit) -> List[cst.Call]:
    return [c for c in unit.of_type(cst.Call) if name_of(c.func) in ("torch.load",)]


@operator("tl501-weights-only-false", "TL501", ("weights_only",))
def op_weights_only(unit: Unit):
    """Turn ``torch.load(..., weights_only=True)`` into ``weights_only=False``.

    Why it is the mistake: the file loaded with ``True`` (plain tensors); ``False`` unpickles
    arbitrary objects, running code from the checkpoint, TL501's mistake.  (Removing the argument is
    the mistake only for a project that supports torch older than 2.6, where the default was False;
    the trees here declare no torch, so the default target 2.6 applies and ``False`` is written out.)"""
    for call in _loads(unit):
        kw = kwarg(call, "weights_only")
        if kw is None or code_of(kw.value) != "True":
            continue
        new = kw.with_changes(value=cst.Name("False"))
        yield Site(Lazy(replaced, unit.module, {kw: new}), unit.lines(unit.statement(call)), unit.lines(call)[0],
                   "weights_only=False")


@operator("tl502-remove-map-location", "TL502", ("map_location",))
def op_remove_map_location(unit: Unit):
    """Remove ``map_location=...`` from ``torch.load(path, ...)`` in a file that writes ``path`` (the
    same expression) with ``torch.save``, moves to CUDA and checks ``torch.cuda.is_available()``.

    Why it is the mistake: the checkpoint is written by this code, on a GPU when there is one, and the
    code also runs without one: loading it there fails without ``map_location``, TL502's mistake."""
    if "torch.save" not in unit.code or "is_available" not in unit.code or "cuda" not in unit.code:
        return
    saved = {code_of(positional(c)[1].value) for c in unit.of_type(cst.Call)
             if name_of(c.func) == "torch.save" and len(positional(c)) >= 2}
    for call in _loads(unit):
        if not positional(call) or code_of(positional(call)[0].value) not in saved:
            continue
        kw = kwarg(call, "map_location")
        if kw is not None:
            args = [a for a in call.args if a is not kw]
        elif len(positional(call)) == 2:
            args = [call.args[0]]
        else:
            continue
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        yield Site(Lazy(replaced, unit.module, {call: call.with_changes(args=args)}), unit.lines(unit.statement(call)),
                   unit.lines(call)[0], "removed map_location")


# -- gradient flow ---------------------------------------------------------------------------------------------------
@operator("tl601-detach-a-loss-term", "TL601", ("backward",))
def op_detach_term(unit: Unit):
    """Append ``.detach()`` to the first term of a loss built as a sum (``loss = a + b``) and then
    backpropagated (``loss.backward()``) in the same function.

    Why it is the mistake: the term no longer sends gradients to what it was computed from (the
    model), so that part of the objective silently stops training, TL601's mistake.  Only for a term
    that is a call or a name computed in the function (not a number)."""
    for fn in [*unit.of_type(cst.FunctionDef), unit.module]:
        names = _backward_names(unit, fn)
        if not names:
            continue
        for node in unit.scope_nodes(fn):
            if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and name_of(node.targets[0].target) in names):
                continue
            v = node.value
            if not (isinstance(v, cst.BinaryOperation) and isinstance(v.operator, (cst.Add, cst.Subtract))):
                continue
            term = v
            while isinstance(term, cst.BinaryOperation) and isinstance(term.operator, (cst.Add, cst.Subtract)) and not term.lpar:
                term = term.left
            if isinstance(term, (cst.Integer, cst.Float)) or name_of(term) in names:
                continue
            if not isinstance(term, (cst.Call, cst.Name, cst.Attribute, cst.Subscript, cst.BinaryOperation)):
                continue
            new = cst.Call(func=cst.Attribute(value=paren(term), attr=cst.Name("detach")))
            yield Site(Lazy(replaced, unit.module, {term: new}), unit.lines(fn) if fn is not unit.module else unit.lines(node),
                       unit.lines(node)[0], f"detached `{code_of(term)[:50]}`")


# layers that keep the shape and hold parameters or buffers, or act only in training (dropout); an
# activation without parameters (ReLU, GELU, ...) left out of forward is not TL602's mistake: the rule's harm
# is parameters that never get a gradient, or a training-time effect that never happens
SHAPE_KEEPING = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "BatchNorm1d", "BatchNorm2d",
                 "BatchNorm3d", "LayerNorm", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "PReLU")


@operator("tl602-bypass-a-layer", "TL602", ("forward",))
def op_bypass_layer(unit: Unit):
    """Delete ``x = self.layer(x)`` from ``forward`` when ``self.layer`` is a shape-keeping layer with
    parameters or a training-time effect (dropout, a norm, PReLU) built in ``__init__`` and used nowhere else.

    Why it is the mistake: the layer is built and trained around but never runs; the output shape is
    the same, so nothing fails: TL602's mistake."""
    for cls in unit.of_type(cst.ClassDef):
        built: Dict[str, str] = {}
        for node in _all(cls):
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and len(node.targets) == 1:
                t = name_of(node.targets[0].target)
                if t.startswith("self.") and last(name_of(node.value.func)) in SHAPE_KEEPING:
                    built[t] = name_of(node.value.func)
        if not built:
            continue
        text = code_of(cls)
        for fn in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []:
            if not isinstance(fn, cst.FunctionDef) or fn.name.value != "forward":
                continue
            for stmt in _all(fn):
                if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
                    continue
                a = stmt.body[0]
                v = a.value
                if not (isinstance(v, cst.Call) and name_of(v.func) in built and len(v.args) == 1 and len(a.targets) == 1):
                    continue
                if code_of(v.args[0].value) != code_of(a.targets[0].target) or not isinstance(a.targets[0].target, cst.Name):
                    continue
                layer = name_of(v.func)
                if text.count(layer + "(") + text.count(layer + ")") + text.count(layer + ",") != 1:
                    continue
                yield Site(Lazy(replaced, unit.module, removed_statement(unit.module, stmt, unit.parents)), unit.lines(cls),
                           unit.lines(stmt)[0], f"bypassed `{layer}` ({built[layer]})")


@operator("tl603-optimizer-of-other-model", "TL603", ("parameters",))
def op_other_model(unit: Unit):
    """Give the first of two optimizers built in the same scope (``opt_g = Adam(G.parameters())``,
    ``opt_d = Adam(D.parameters())``) the other model's parameters.

    Why it is the mistake: one model's parameters are now stepped by both optimizers and the other
    model's by none, so its loss trains nothing: TL603's mistake.  Only where both optimizers are used
    after they are built (stepped, returned, passed on: two optimizers nothing uses train nothing either
    way) and both models are named (``getattr(self.model, key).parameters()`` is a lookup that may fail
    for another key, not a model)."""
    for scope in [*unit.of_type(cst.FunctionDef), unit.module]:
        opts = []
        for node in unit.scope_nodes(scope):
            if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and "optim." in name_of(node.value.func) \
                    and "lr_scheduler" not in name_of(node.value.func):
                pos = positional(node.value)
                if pos and method_call(pos[0].value, "parameters") and not pos[0].value.args and \
                        isinstance(pos[0].value.func.value, (cst.Name, cst.Attribute)) and _used_later(unit, node):
                    opts.append((unit.lines(node)[0], node, pos[0].value))
        opts.sort(key=lambda t: t[0])
        for (_, n1, p1), (_, n2, p2) in zip(opts, opts[1:]):
            a, b = code_of(p1.func.value), code_of(p2.func.value)
            if a != b:
                yield Site(Lazy(replaced, unit.module, {p1: p2.deep_clone()}), unit.lines(scope) if scope is not unit.module else unit.lines(n1),
                           unit.lines(n1)[0], f"`{a}`'s optimizer given `{b}.parameters()`")
                break


def _used_later(unit: Unit, assign: cst.Assign) -> bool:
    """Whether what ``assign`` binds (a name or ``self.<attr>``) is read anywhere in its file (every cell
    of a notebook)."""
    targets = [code_of(t.target) for t in assign.targets]
    return len(targets) == 1 and targets[0] in unit.tree.reads.get(unit.path, set())


OPERATOR_BY_NAME = {op.name: op for op in OPERATORS}


# ---------------------------------------------------------------------------------------------------------------
# files: a .py file is one unit; a notebook's code cells are units (mutated one cell at a time)
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class SourceFile:
    repo: str
    path: str  # absolute
    rel: str
    text: str

    @property
    def notebook(self) -> bool:
        return self.path.endswith(".ipynb")

    def units(self) -> List[Tuple[int, str]]:
        """(cell, code): cell 0 for a .py file; for a notebook, the 1-based index among all cells."""
        if not self.notebook:
            return [(0, self.text)]
        try:
            data = json.loads(self.text)
        except ValueError:
            return []
        out = []
        for i, cell in enumerate(data.get("cells", []) if isinstance(data, dict) else []):
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                src = cell.get("source", "")
                src = "".join(src) if isinstance(src, list) else src
                if isinstance(src, str) and not src.lstrip().startswith(("%", "!")):
                    out.append((i + 1, src))
        return out

    def with_unit(self, cell: int, code: str) -> str:
        if not self.notebook:
            return code
        data = json.loads(self.text)
        lines = code.splitlines(keepends=True)
        data["cells"][cell - 1]["source"] = lines
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


SKIP_DIRS = {".git", "__pycache__", "node_modules", "site-packages", ".ipynb_checkpoints"}


def repo_files(root: str) -> List[Tuple[str, str]]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(files):
            if f.endswith((".py", ".ipynb")):
                p = os.path.join(folder, f)
                try:
                    if os.path.getsize(p) > 2_000_000:
                        continue
                    with open(p, encoding="utf-8") as fh:
                        out.append((p, fh.read()))
                except (OSError, UnicodeDecodeError):
                    continue
    return out


# ---------------------------------------------------------------------------------------------------------------
# linting a text in process, the tree on disk around it
# ---------------------------------------------------------------------------------------------------------------
class Linter:
    def __init__(self) -> None:
        _use_checkout_rules()
        from torchlint.analysis.project import Project
        from torchlint.projects import ConfigResolver
        from torchlint.rules import all_rules

        self.rules = all_rules()
        self.resolver = ConfigResolver(self.rules)
        self.project = Project()
        self.baseline: Dict[str, list] = {}

    def settings(self, path: str, text: str, **extra):
        from torchlint.engine import Settings
        from torchlint.selection import resolve

        cfg = self.resolver.for_path(path)
        chosen = resolve(self.rules, (cfg.select, cfg.extend_select, cfg.ignore))
        return Settings(rules=chosen.rules, options=dict(cfg.options), noqa=True,
                        project=self.project.with_overlay({os.path.abspath(path): text}), **extra)

    def lint(self, path: str, text: str, **extra):
        from torchlint.engine import lint_source
        from torchlint.notebook import lint_notebook

        settings = self.settings(path, text, **extra)
        if path.endswith(".ipynb"):
            return lint_notebook(path, text, settings)
        return lint_source(path, text, settings)

    def findings(self, path: str, text: str, **extra) -> list:
        return self.lint(path, text, **extra).diagnostics

    def base(self, sf: SourceFile) -> list:
        if sf.path not in self.baseline:
            self.baseline[sf.path] = self.findings(sf.path, sf.text)
        return self.baseline[sf.path]


@functools.lru_cache(maxsize=8)
def _lines_of(text: str, notebook: bool) -> Tuple[Tuple[str, ...], ...]:
    """The lines of a file (one entry), or of every cell of a notebook (entry ``cell - 1``)."""
    if not notebook:
        return (tuple(text.split("\n")),)
    try:
        cells = json.loads(text)["cells"]
    except (ValueError, KeyError, TypeError):
        return ()
    out = []
    for cell in cells:
        src = cell.get("source", "") if isinstance(cell, dict) else ""
        src = "".join(src) if isinstance(src, list) else (src if isinstance(src, str) else "")
        out.append(tuple(src.split("\n")))
    return tuple(out)


def _line_text(text: str, notebook: bool, cell: int, line: int) -> str:
    units = _lines_of(text, notebook)
    index = cell - 1 if notebook else 0
    if not 0 <= index < len(units):
        return ""
    lines = units[index]
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def finding_keys(diags: list, text: str, notebook: bool) -> Counter:
    return Counter((d.code, d.cell, _line_text(text, notebook, d.cell, d.line)) for d in diags)


def accepted_codes(codes: Tuple[str, ...]) -> Set[str]:
    from torchlint.precedence import owners_of

    out = set(codes)
    todo = list(codes)
    while todo:
        for owner in owners_of(todo.pop()):
            if owner not in out:
                out.add(owner)
                todo.append(owner)
    return out


# ---------------------------------------------------------------------------------------------------------------
# one mutant
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class Mutant:
    operator: str
    repo: str
    set: str  # "realcode" | "fresh"
    path: str  # relative to the repository
    cell: int
    line: int
    what: str
    verdict: str  # found | missed | skipped | invalid
    codes: List[str] = field(default_factory=list)  # the new findings' codes (of the accepted ones)
    fix: str = ""  # fix check: "" (not run) | no fix | fixed-same | equivalent | differs | unchecked | kept | broken


def compiles(text: str, notebook: bool, cell: int) -> bool:
    code = text
    if notebook:
        try:
            src = json.loads(text)["cells"][cell - 1]["source"]
            code = "".join(src) if isinstance(src, list) else src
        except (ValueError, KeyError, IndexError, TypeError):
            return False
    try:
        compile(code, "<mutant>", "exec")
        return True
    except (SyntaxError, ValueError):
        return False


def judge(linter: Linter, op: Operator, sf: SourceFile, cell: int, site: Site, set_name: str,
          fix_check: bool) -> Mutant:
    accepted = accepted_codes(op.codes)
    m = Mutant(op.name, sf.repo, set_name, sf.rel, cell, site.line, site.what, "missed")
    # already reported in the region the operator edits: skip
    for d in linter.base(sf):
        if d.code in accepted and d.cell == cell and site.region[0] <= d.line <= site.region[1]:
            m.verdict = "skipped"
            return m
    mutated = sf.with_unit(cell, site.new_code)
    if not compiles(mutated, sf.notebook, cell):
        m.verdict = "invalid"
        return m
    before = finding_keys(linter.base(sf), sf.text, sf.notebook)
    diags = linter.findings(sf.path, mutated, want_edits=fix_check and not sf.notebook)
    after = finding_keys(diags, mutated, sf.notebook)
    new = [k for k in (after - before) if k[0] in accepted]
    if new:
        m.verdict = "found"
        m.codes = sorted({k[0] for k in new})
        if fix_check:
            m.fix = check_fix(linter, op, sf, cell, diags, mutated, new, accepted)
    return m


# ---------------------------------------------------------------------------------------------------------------
# the fix check
# ---------------------------------------------------------------------------------------------------------------
def apply_edits(text: str, edits) -> str:
    lines = text.split("\n")
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln) + 1)
    out = text
    for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        a = offsets[e.line - 1] + e.col - 1
        b = offsets[e.end_line - 1] + e.end_col - 1
        out = out[:a] + e.content + out[b:]
    return out


def _normal(code: str) -> Optional[str]:
    try:
        return ast.dump(ast.parse(code))
    except SyntaxError:
        return None


def check_fix(linter: Linter, op: Operator, sf: SourceFile, cell: int, diags: list, mutated: str,
              new: list, accepted: Set[str]) -> str:
    """Apply the fix of the new finding (the first, when the mistake made several) to the mutated file
    (``diags``: its findings, with their fixes' edits) and compare with the original."""
    if sf.notebook:
        return "unchecked"
    keys = set(k for k in new)
    fixes = [d.fix for d in diags
             if (d.code, d.cell, _line_text(mutated, False, d.cell, d.line)) in keys and d.fix is not None]
    if not fixes:
        return "no fix"
    fixed = mutated
    for fx in fixes[:1]:
        fixed = apply_edits(fixed, fx.edits)
    if not compiles(fixed, False, 0):
        return "broken"
    after = finding_keys(linter.findings(sf.path, fixed), fixed, False)
    before = finding_keys(linter.base(sf), sf.text, False)
    if any(k[0] in accepted for k in (after - before)):
        return "kept"
    if _normal(fixed) == _normal(sf.text):
        return "fixed-same"
    if op.numeric:
        return numeric_equivalence(sf.text, fixed)
    return "another edit"


def _changed_expression(original: str, fixed: str) -> Optional[Tuple[str, str]]:
    """The innermost call (else expression) that holds every difference of two texts, on each side."""
    try:
        a, b = ast.parse(original), ast.parse(fixed)
    except SyntaxError:
        return None
    chain: List[Tuple[object, object]] = []

    def walk(x, y) -> bool:
        """Whether x and y differ; follows the one differing child down, recording the pairs."""
        if type(x) is not type(y):
            return True
        if isinstance(x, ast.AST):
            diffs = [(getattr(x, f, None), getattr(y, f, None)) for f in x._fields if f not in ("ctx", "type_comment")]
            diffs = [d for d in diffs if _differs(*d)]
            if len(diffs) == 1:
                chain.append(diffs[0])
                walk(*diffs[0])
            return bool(diffs)
        if isinstance(x, list):
            if len(x) != len(y):
                return True
            diffs = [d for d in zip(x, y) if _differs(*d)]
            if len(diffs) == 1:
                chain.append(diffs[0])
                walk(*diffs[0])
            return bool(diffs)
        return x != y

    walk(a, b)
    exprs = [(x, y) for x, y in chain if isinstance(x, ast.expr) and isinstance(y, ast.expr)]
    calls = [(x, y) for x, y in exprs if isinstance(x, ast.Call) or isinstance(y, ast.Call)]
    pick = calls[-1] if calls else (exprs[-1] if exprs else None)
    if pick is None:
        return None
    return ast.unparse(pick[0]), ast.unparse(pick[1])


def _differs(x, y) -> bool:
    if type(x) is not type(y):
        return True
    if isinstance(x, ast.AST):
        return ast.dump(x) != ast.dump(y)
    if isinstance(x, list):
        return len(x) != len(y) or any(_differs(p, q) for p, q in zip(x, y))
    return x != y


def numeric_equivalence(original: str, fixed: str) -> str:
    """Evaluate the differing expression of the original and of the fixed text on the same random
    inputs: every free name a float64 tensor of shape [4, 5], else one of them (a target, an index) an
    integer tensor [4]; the same values (to 1e-5): "equivalent", else "differs"; "unchecked" when no
    such inputs evaluate both."""
    pair = _changed_expression(original, fixed)
    if pair is None:
        return "unchecked"
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return "unchecked"
    names = set()
    for code in pair:
        for n in ast.walk(ast.parse(code, mode="eval")):
            if isinstance(n, ast.Name):
                names.add(n.id)
    free = sorted(names - {"torch", "F", "nn"})
    results = None
    # every free name a float tensor [4, 5]; else one of them (a target, an index) integers [4] in [0, 4)
    for as_int in [None, *free]:
        envs = []
        for _ in pair:
            torch.manual_seed(0)
            env: Dict[str, object] = {"torch": torch, "F": F, "nn": torch.nn}
            for n in free:
                env[n] = torch.randint(0, 4, (4,)) if n == as_int else torch.randn(4, 5, dtype=torch.float64)
            envs.append(env)
        try:
            results = [eval(compile(code, "<fix>", "eval"), env) for code, env in zip(pair, envs)]
            break
        except Exception:
            continue
    if results is None:
        return "unchecked"
    a, b = results
    try:
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and \
                torch.allclose(a.double(), b.double(), atol=1e-5, rtol=1e-5, equal_nan=True):
            return "equivalent"
    except Exception:
        return "unchecked"
    return "differs"


# ---------------------------------------------------------------------------------------------------------------
# one repository: every operator's sites, drawn with the seed, judged until N picks
# ---------------------------------------------------------------------------------------------------------------
_LINTER: Optional[Linter] = None


def _linter() -> Linter:
    global _LINTER
    if _LINTER is None:
        _LINTER = Linter()
    return _LINTER


#: Mutants read by hand and found not to be mistakes, which the operator's syntactic test cannot see:
#: (operator, repository, file, cell (0 for a .py file), line of the edit) -> why.  Such a site is never drawn.
READ_NOT_MISTAKES: Dict[Tuple[str, str, str, int, int], str] = {
    ("tl106-remove-eval", "rasbt/LLMs-from-scratch", "ch06/01_main-chapter-code/gpt_class_finetune.py", 0, 125):
        "every model the file builds is a GPT configured with drop_rate 0.0 (LayerNorm otherwise): eval() "
        "changes nothing",
    ("tl106-remove-eval", "rasbt/LLMs-from-scratch", "ch06/01_main-chapter-code/ch06.ipynb", 81, 2):
        "the notebook's GPT is configured with drop_rate 0.0: eval() changes nothing",
    ("tl106-remove-eval", "rasbt/LLMs-from-scratch", "ch04/06_swa/tests.py", 0, 22):
        "the attention module is built with dropout=0.0 and compared with a copy: eval() changes nothing",
    ("tl106-remove-eval", "rasbt/deeplearning-models",
     "pytorch_ipynb/rnn/rnn_bi_multilayer_lstm_own_csv_agnews.ipynb", 43, 17):
        "the only call comes after the notebook's compute_accuracy(model, ...), which calls model.eval(): "
        "the model is already in eval mode",
    ("tl106-remove-eval", "rasbt/deeplearning-models", "pytorch_ipynb/helper_evaluate.py", 0, 8):
        "compute_accuracy's callers are the training helpers, which call model.eval() right before it, and "
        "notebooks that call it after those helpers left the model in eval mode (none calls train() between)",
    ("tl106-remove-eval", "rasbt/deeplearning-models", "pytorch_ipynb/helper_evaluate.py", 0, 26):
        "the project's only callers (helper_train.py) run compute_accuracy(model, ...), which calls "
        "model.eval(), right before each call: the model is already in eval mode",
}


def stable_seed(*parts: object) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def run_repo(job: Tuple[str, str, str, int, int, Tuple[str, ...], bool]) -> Tuple[List[dict], float]:
    repo, root, set_name, seed, picks, op_names, fix_check = job
    start = time.perf_counter()
    linter = _linter()
    # the repository is its own project, as its checkout (`.git` at its top) is for `torchlint .` in it
    linter.project.fallback_roots = (os.path.abspath(root),)
    ops = [OPERATOR_BY_NAME[n] for n in op_names]
    files = repo_files(root)
    facts = tree_facts(files)
    sites: Dict[str, List[Tuple[SourceFile, int, Site]]] = defaultdict(list)
    # lazily: a unit is parsed only when some operator's trigger word is in it
    for path, text in files:
        sf = SourceFile(repo, path, os.path.relpath(path, root), text)
        for cell, code in sf.units():
            wanted = [op for op in ops if any(t in code for t in op.triggers)]
            if not wanted:
                continue
            try:
                module = cst.parse_module(code)
            except Exception:
                continue
            unit = Unit(code, module, facts, path)
            for op in wanted:
                try:
                    found = op.find(unit)
                except Exception as exc:  # an operator's bug must not take the run down
                    print(f"warning: {op.name} failed on {sf.rel}: {type(exc).__name__}: {exc}", file=sys.stderr)
                    continue
                for site in found:
                    if (op.name, repo, sf.rel, cell, site.line) in READ_NOT_MISTAKES:
                        continue
                    sites[op.name].append((sf, cell, site))
    out: List[dict] = []
    for op in ops:
        candidates = sites.get(op.name, [])
        rng = random.Random(stable_seed(seed, op.name, repo))
        order = list(range(len(candidates)))
        rng.shuffle(order)
        taken = 0
        for i in order:
            if taken >= picks:
                break
            sf, cell, site = candidates[i]
            try:
                m = judge(linter, op, sf, cell, site, set_name, fix_check)
            except Exception as exc:
                print(f"warning: judging {op.name} on {sf.rel} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            out.append(asdict(m))
            if m.verdict in ("found", "missed"):
                taken += 1
    return out, time.perf_counter() - start


# ---------------------------------------------------------------------------------------------------------------
# the command
# ---------------------------------------------------------------------------------------------------------------
def fresh_list(path: Path) -> List[Tuple[str, str]]:
    out = []
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, commit = line.split()[:2]
            out.append((name, commit))
    return out


def trees(realcode: Optional[str], fresh_root: Optional[str], fresh_txt: Path) -> List[Tuple[str, str, str]]:
    """(repo, folder, set) for every repository found."""
    out = []
    if realcode and os.path.isdir(realcode):
        for d in sorted(os.listdir(realcode)):
            full = os.path.join(realcode, d)
            if os.path.isdir(full) and "+" in d:
                out.append((d.replace("+", "/", 1), full, "realcode"))
    elif realcode:
        print(f"warning: no realcode folder at {realcode}", file=sys.stderr)
    if fresh_root:
        for name, _ in fresh_list(fresh_txt):
            full = os.path.join(fresh_root, name.replace("/", "+", 1))
            if os.path.isdir(full):
                out.append((name, full, "fresh"))
            else:
                print(f"warning: {name} is not checked out under {fresh_root}", file=sys.stderr)
    return out


def rate(found: int, n: int) -> str:
    return f"{found}/{n} ({found / n:.2f})" if n else "–"


def tables(mutants: List[dict], op_names: Sequence[str], fix_check: bool) -> str:
    lines = []
    judged = [m for m in mutants if m["verdict"] in ("found", "missed")]
    by = defaultdict(lambda: [0, 0])
    skipped = Counter()
    invalid = Counter()
    for m in mutants:
        if m["verdict"] == "skipped":
            skipped[(m["operator"], m["set"])] += 1
        elif m["verdict"] == "invalid":
            invalid[(m["operator"], m["set"])] += 1
    for m in judged:
        c = by[(m["operator"], m["set"])]
        c[1] += 1
        c[0] += m["verdict"] == "found"
    lines.append("| operator | rule | realcode found/injected | fresh found/injected | skipped (already reported) |")
    lines.append("|---|---|---|---|---|")
    tot = {"realcode": [0, 0], "fresh": [0, 0]}
    for name in op_names:
        op = OPERATOR_BY_NAME[name]
        r, f = by[(name, "realcode")], by[(name, "fresh")]
        for s, c in (("realcode", r), ("fresh", f)):
            tot[s][0] += c[0]
            tot[s][1] += c[1]
        sk = skipped[(name, "realcode")] + skipped[(name, "fresh")]
        bad = invalid[(name, "realcode")] + invalid[(name, "fresh")]
        lines.append(f"| {name} | {'/'.join(op.codes)} | {rate(*r)} | {rate(*f)} | {sk}{f' ({bad} invalid)' if bad else ''} |")
    lines.append(f"| **all** | | {rate(*tot['realcode'])} | {rate(*tot['fresh'])} | {sum(skipped.values())} |")
    lines.append("")
    lines.append("| repository | set | found/injected | skipped |")
    lines.append("|---|---|---|---|")
    per_repo = defaultdict(lambda: [0, 0, 0, ""])
    for m in mutants:
        c = per_repo[m["repo"]]
        c[3] = m["set"]
        if m["verdict"] == "skipped":
            c[2] += 1
        elif m["verdict"] in ("found", "missed"):
            c[1] += 1
            c[0] += m["verdict"] == "found"
    for repo in sorted(per_repo, key=lambda r: (per_repo[r][3] != "realcode", r.lower())):
        f, n, s, st = per_repo[repo]
        lines.append(f"| {repo} | {st} | {rate(f, n)} | {s} |")
    if fix_check:
        lines.append("")
        lines.append("| operator | fix check of the found mutants |")
        lines.append("|---|---|")
        for name in op_names:
            cnt = Counter(m["fix"] for m in judged if m["operator"] == name and m["verdict"] == "found")
            if cnt:
                lines.append(f"| {name} | " + ", ".join(f"{k} {v}" for k, v in sorted(cnt.items())) + " |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    checkout = HERE.parent
    parser = argparse.ArgumentParser(
        description="Inject one known mistake at a time into correct public code and measure whether torchlint "
                    "reports it (see the module's documentation).")
    near = [checkout.parent / "shared" / "realcode", checkout.parent.parent / "shared" / "realcode"]
    parser.add_argument("--realcode", default=str(next((p for p in near if p.is_dir()), near[0])),
                        help="folder of owner+name checkouts the rules were built on (default: ../shared/realcode "
                             "beside the checkout, or beside its folder: %(default)s); '' for none")
    parser.add_argument("--fresh-root", default=None,
                        help="folder holding the repositories of --fresh-list, checked out as owner+name (none: skip them)")
    parser.add_argument("--fresh-list", default=str(HERE / "fresh.txt"), help="default: %(default)s")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--picks", type=int, default=2, help="mutants per operator and repository (default 2)")
    parser.add_argument("--operators", default="", help="comma-separated operator names (default: all); --list-operators")
    parser.add_argument("--list-operators", action="store_true", help="print the operators and what they do, then exit")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--json", default=None, help="write every mutant and its verdict to this file")
    parser.add_argument("--fix-check", action="store_true", help="apply torchlint's fix to each found mistake and check it")
    parser.add_argument("--show-misses", action="store_true", help="list the missed mutants")
    parser.add_argument("paths", nargs="*", help="extra trees (folders) to measure, reported as set 'other'")
    args = parser.parse_args(argv)
    if args.list_operators:
        for op in OPERATORS:
            print(f"{op.name} ({'/'.join(op.codes)})\n    " + op.doc.replace("\n", "\n    ") + "\n")
        return 0
    names = [n.strip() for n in args.operators.split(",") if n.strip()] or [op.name for op in OPERATORS]
    unknown = [n for n in names if n not in OPERATOR_BY_NAME]
    if unknown:
        parser.error(f"unknown operator(s): {', '.join(unknown)} (see --list-operators)")
    repos = trees(args.realcode, args.fresh_root, Path(args.fresh_list))
    repos += [(os.path.basename(os.path.abspath(p)), os.path.abspath(p), "other") for p in args.paths]
    if not repos:
        print("no trees to measure (--realcode, --fresh-root, paths)", file=sys.stderr)
        return 2
    rules_from = _use_checkout_rules()
    import torchlint

    print(f"torchlint from {os.path.dirname(torchlint.__file__)}; rules from {os.path.dirname(rules_from or '?')}",
          file=sys.stderr)
    jobs = [(repo, folder, set_name, args.seed, args.picks, tuple(names), args.fix_check)
            for repo, folder, set_name in repos]
    start = time.perf_counter()
    mutants: List[dict] = []
    if args.jobs > 1:
        import multiprocessing

        ctx = multiprocessing.get_context("fork") if hasattr(os, "fork") else multiprocessing.get_context()
        # the biggest trees first, so that the workers finish together
        jobs.sort(key=lambda j: -sum(os.path.getsize(p) for p, _ in ((p, 0) for p in _py_paths(j[1]))))
        with ctx.Pool(args.jobs) as pool:
            for res, secs in pool.imap_unordered(run_repo, jobs):
                mutants.extend(res)
                if res:
                    print(f"  {res[0]['repo']}: {len(res)} mutants, {secs:.0f}s", file=sys.stderr)
    else:
        for job in jobs:
            res, secs = run_repo(job)
            mutants.extend(res)
            print(f"  {job[0]}: {len(res)} mutants, {secs:.0f}s", file=sys.stderr)
    mutants.sort(key=lambda m: (m["operator"], m["set"], m["repo"], m["path"], m["cell"], m["line"], m["what"]))
    print(tables(mutants, names, args.fix_check))
    print(f"\n{len(mutants)} mutants in {time.perf_counter() - start:.0f}s "
          f"(seed {args.seed}, {args.picks} picks per operator and repository, {args.jobs} jobs)")
    if args.show_misses:
        print("\nmissed:")
        for m in mutants:
            if m["verdict"] == "missed":
                where = f"{m['repo']}/{m['path']}" + (f" cell {m['cell']}" if m["cell"] else "") + f":{m['line']}"
                print(f"  {m['operator']}  {where}  {m['what']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"seed": args.seed, "picks": args.picks, "operators": names, "mutants": mutants}, fh, indent=1)
    return 0


def _py_paths(root: str) -> List[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        out.extend(os.path.join(folder, f) for f in files if f.endswith((".py", ".ipynb")))
    return out


if __name__ == "__main__":
    sys.exit(main())
