"""Light shape inference for tensors, shared by the rules that need to know ranks and sizes.

Only what the source spells out is inferred: literal constructors (``torch.tensor([[1.], [2.]])``,
``torch.zeros(5, 3)``, ``torch.rand([5, 3, 5])``), ``unsqueeze``/``squeeze(k)``, ``view``/``reshape`` with
literal sizes, indexing with ``None``/``:``/integers/``...``, reductions with a literal ``dim``, elementwise
arithmetic (with broadcasting) and the output of ``nn.Linear`` layers, whose last dimension is known even
when the input's shape is not.  Values flow through local variables (``a = torch.zeros(2, 1)`` ...
``a + b``), straight-line rebinding included (``x = x.unsqueeze(1)``).

A :class:`Shape` may be partial: the rank may be unknown while the first dimensions (``x[:, None]`` has a
singleton second dimension whatever ``x`` is) or the last ones (``linear(x)`` ends in ``out_features``)
are known.  Everything else is "unknown" (``None``): the rules built on this stay silent then.

:func:`is_tensor` answers a weaker question — "is there evidence this expression is a torch tensor?" —
from constructors, torch functions, tensor methods, ``Tensor`` annotations and known shapes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.analysis.context import FileContext, arg, canonical_keyword, keyword_arg
from torchlint.analysis.ops import sequential_ending_in
from torchlint.analysis.names import target_names
from torchlint.analysis.walk import iter_nodes
from torchlint.analysis.definitions import arguments_for_param, bind_arguments, class_body, definition_of

Dim = Optional[int]  # a dimension's size; None when unknown


@dataclass(frozen=True)
class Shape:
    """The known part of a tensor's shape.

    With ``rank`` known, ``head`` holds every dimension and ``tail`` is empty.  With ``rank`` None, ``head``
    holds the known first dimensions, ``tail`` the known last ones, and ``min_rank`` a lower bound.
    """

    head: Tuple[Dim, ...] = ()
    tail: Tuple[Dim, ...] = ()
    rank: Optional[int] = None
    min_rank: int = 0

    @staticmethod
    def exact(dims: Iterable[Dim]) -> "Shape":
        d = tuple(dims)
        return Shape(d, (), len(d), len(d))

    @staticmethod
    def partial(head: Sequence[Dim] = (), tail: Sequence[Dim] = (), min_rank: int = 0) -> "Shape":
        h, t = tuple(head), tuple(tail)
        return Shape(h, t, None, max(min_rank, len(h), len(t)))

    @property
    def dims(self) -> Optional[Tuple[Dim, ...]]:
        """Every dimension when the rank is known, else None."""
        return self.head if self.rank is not None else None

    def size(self, k: int) -> Tuple[bool, Dim]:
        """(position known, size) of dimension ``k`` (negative counts from the end)."""
        if self.rank is not None:
            if -self.rank <= k < self.rank:
                return True, self.head[k]
            return False, None
        if 0 <= k < len(self.head):
            return True, self.head[k]
        if k < 0 and -k <= len(self.tail):
            return True, self.tail[k]
        return False, None

    def singleton_dims(self) -> List[int]:
        """Dimensions known to have size 1: non-negative indices when the rank is known, else the
        negative indices of the known tail followed by the non-negative ones of the known head."""
        if self.rank is not None:
            return [i for i, d in enumerate(self.head) if d == 1]
        tail = [i - len(self.tail) for i, d in enumerate(self.tail) if d == 1]
        if tail:
            return tail
        return [i for i, d in enumerate(self.head) if d == 1]

    def __str__(self) -> str:
        def show(ds: Iterable[Dim]) -> List[str]:
            return ["?" if d is None else str(d) for d in ds]

        if self.rank is not None:
            return "[" + ", ".join(show(self.head)) + "]"
        parts = show(self.head) + ["..."] + show(self.tail)
        return "[" + ", ".join(parts) + "]"


SCALAR = Shape.exact(())

# -- shape algebra -------------------------------------------------------------------------------


def unsqueeze(s: Shape, k: int) -> Optional[Shape]:
    if s.rank is not None:
        r = s.rank
        if k < 0:
            k += r + 1
        if not 0 <= k <= r:
            return None
        d = list(s.head)
        d.insert(k, 1)
        return Shape.exact(d)
    head, tail = list(s.head), list(s.tail)
    # a valid call means the input has at least |k| (k >= 0) or |k| - 1 (k < 0) dimensions
    min_rank = max(s.min_rank, k if k >= 0 else -k - 1)
    if k >= 0:
        head = head + [None] * (k - len(head))
        head = head[:k] + [1] + head[k:]
        if k > min_rank - len(tail):
            tail = []
    else:
        pos = -k - 1  # dimensions after the new one
        tail = [None] * (pos - len(tail)) + tail
        tail = tail[: len(tail) - pos] + [1] + tail[len(tail) - pos:]
        if min_rank + 1 + k < len(head):
            head = []
    return Shape.partial(head, tail, min_rank + 1)


def squeeze_dim(s: Shape, k: int) -> Optional[Shape]:
    known, size = s.size(k)
    if not known or size is None:
        return None
    if size != 1:
        return s
    if s.rank is not None:
        d = list(s.head)
        del d[k]
        return Shape.exact(d)
    head, tail = list(s.head), list(s.tail)
    if k >= 0:
        del head[k]
        if k >= s.min_rank - len(tail):
            tail = []
    else:
        del tail[k]
        if s.min_rank + k < len(head):
            head = []
    return Shape.partial(head, tail, s.min_rank - 1)


def squeeze_all(s: Shape) -> Optional[Shape]:
    if s.rank is None or any(d is None for d in s.head):
        return None
    return Shape.exact(d for d in s.head if d != 1)


def reduce(s: Shape, dims: Optional[Sequence[int]], keepdim: bool) -> Optional[Shape]:
    """The shape after a reduction over ``dims`` (None: every dimension)."""
    if dims is None:
        if keepdim:
            return Shape.exact([1] * s.rank) if s.rank is not None else None
        return SCALAR
    if s.rank is None:
        if keepdim and len(dims) == 1:
            # the reduced dimension becomes 1, wherever it is
            k = dims[0]
            head, tail = list(s.head), list(s.tail)
            if k >= 0:
                head = head + [None] * (k + 1 - len(head))
                head[k] = 1
            else:
                tail = [None] * (-k - len(tail)) + tail
                tail[k] = 1
            return Shape.partial(head, tail, max(s.min_rank, k + 1 if k >= 0 else -k))
        return None
    norm = set()
    for k in dims:
        if not -s.rank <= k < s.rank:
            return None
        norm.add(k % s.rank if s.rank else 0)
    if keepdim:
        return Shape.exact(1 if i in norm else d for i, d in enumerate(s.head))
    return Shape.exact(d for i, d in enumerate(s.head) if i not in norm)


def reshape(s: Optional[Shape], sizes: Sequence[Optional[int]]) -> Shape:
    """``view``/``reshape`` with literal sizes (None for a size that is not a literal)."""
    sizes = list(sizes)
    if sizes.count(-1) == 1:
        i = sizes.index(-1)
        total = numel(s) if s is not None else None
        known = [d for j, d in enumerate(sizes) if j != i]
        if total is not None and all(d is not None for d in known):
            prod = 1
            for d in known:
                prod *= d  # type: ignore[operator]
            sizes[i] = total // prod if prod and total % prod == 0 else None
        else:
            sizes[i] = None
    return Shape.exact(d if d is None or d >= 0 else None for d in sizes)


def numel(s: Shape) -> Optional[int]:
    if s.rank is None or any(d is None for d in s.head):
        return None
    n = 1
    for d in s.head:
        n *= d  # type: ignore[operator]
    return n


def _broadcast_dim(a: Dim, b: Dim) -> Tuple[bool, Dim]:
    """(compatible, result) of two aligned dimensions."""
    if a == 1:
        return True, b
    if b == 1:
        return True, a
    if a is None or b is None:
        return True, a if b is None else b if a is None else None
    return a == b, a


def broadcast(a: Shape, b: Shape) -> Optional[Shape]:
    """The broadcast result of two shapes; None when unknown or incompatible."""
    if a.rank is not None and b.rank is not None:
        r = max(a.rank, b.rank)
        da = (1,) * (r - a.rank) + a.head
        db = (1,) * (r - b.rank) + b.head
        out: List[Dim] = []
        for x, y in zip(da, db):
            ok, d = _broadcast_dim(x, y)
            if not ok:
                return None
            # a size-1 dimension against an unknown one: the result is unknown, not 1
            out.append(None if (x is None or y is None) and d == 1 else d)
        return Shape.exact(out)
    ta = a.tail if a.rank is None else a.head
    tb = b.tail if b.rank is None else b.head
    n = min(len(ta), len(tb))
    tail: List[Dim] = []
    for x, y in zip(ta[len(ta) - n:], tb[len(tb) - n:]):
        ok, d = _broadcast_dim(x, y)
        if not ok:
            return None
        tail.append(None if (x is None or y is None) and d == 1 else d)
    return Shape.partial((), tail, max(a.min_rank, b.min_rank))


def ranks_differ(a: Shape, b: Shape) -> bool:
    """Whether the two ranks are known to differ."""
    if a.rank is not None and b.rank is not None:
        return a.rank != b.rank
    if a.rank is not None:
        return b.min_rank > a.rank
    if b.rank is not None:
        return a.min_rank > b.rank
    return False


def linear_output(s: Optional[Shape], out: Dim) -> Shape:
    """The output of a linear layer with ``out`` features applied to an input of shape ``s``."""
    if s is None:
        return Shape.partial((), (out,), 1)
    if s.rank is not None:
        if s.rank == 0:
            return Shape.partial((), (out,), 1)
        return Shape.exact(s.head[:-1] + (out,))
    tail = s.tail[:-1] + (out,) if s.tail else (out,)
    return Shape.partial(s.head[: max(0, s.min_rank - 1)], tail, max(1, s.min_rank))


def index(s: Optional[Shape], elements: Sequence[cst.SubscriptElement]) -> Optional[Shape]:
    """The shape of ``x[...]`` for basic indexing: ``:``, ``a:b:c`` with literal bounds, ``None``,
    integers, ``...``."""
    items: List[Tuple[str, Optional[slice]]] = []
    for el in elements:
        sl = el.slice
        if isinstance(sl, cst.Slice):
            bounds = [None if b is None else _int_literal(b) for b in (sl.lower, sl.upper, sl.step)]
            literal = all(v is not None or b is None for v, b in zip(bounds, (sl.lower, sl.upper, sl.step)))
            full = sl.lower is None and sl.upper is None and sl.step is None
            items.append(("all" if full else "slice", slice(*bounds) if literal else None))
        elif isinstance(sl, cst.Index):
            v = sl.value
            if isinstance(v, cst.Name) and v.value == "None":
                items.append(("new", None))
            elif isinstance(v, cst.Ellipsis):
                items.append(("...", None))
            elif _int_literal(v) is not None:
                items.append(("int", None))
            else:
                return None  # advanced (tensor/list) indexing or a variable index
        else:
            return None
    kinds = [k for k, _ in items]
    if kinds.count("...") > 1:
        return None
    consumed = sum(1 for k in kinds if k in ("all", "slice", "int"))
    if "..." in kinds:
        cut = kinds.index("...")
        before, after = items[:cut], items[cut + 1:]
    else:
        before, after = items, []
    if s is not None and s.rank is not None:
        if consumed > s.rank:
            return None
        dims = list(s.head)
        n_before = sum(1 for k, _ in before if k != "new")
        n_after = sum(1 for k, _ in after if k != "new")
        mid = dims[n_before: len(dims) - n_after]
        tail_dims = dims[len(dims) - n_after:] if n_after else []
        return Shape.exact(_apply(before, dims) + mid + _apply(after, tail_dims))
    # unknown rank: what the index says about the first (or, after `...`, the last) dimensions
    head = _apply(before, list(s.head) if s is not None else [])
    tail: List[Dim] = []
    if "..." in kinds:
        tail_src = list(s.tail) if s is not None else []
        n_after = sum(1 for k, _ in after if k != "new")
        known = tail_src[len(tail_src) - n_after:] if n_after <= len(tail_src) else []
        tail = _apply(after, known)
    elif s is not None and s.tail and consumed <= s.min_rank - len(s.tail):
        tail = list(s.tail)  # the index stops before the known last dimensions
    base_min = s.min_rank if s is not None else 0
    min_rank = max(base_min, consumed) - kinds.count("int") + kinds.count("new")
    return Shape.partial(head, tail, min_rank)


def _apply(items: Sequence[Tuple[str, Optional[slice]]], dims: Sequence[Dim]) -> List[Dim]:
    """The dimensions that ``items`` (no ``...``) make of ``dims`` (sizes unknown past its end)."""
    out: List[Dim] = []
    pos = 0
    for kind, sl in items:
        if kind == "new":
            out.append(1)
            continue
        d = dims[pos] if pos < len(dims) else None
        pos += 1
        if kind == "all":
            out.append(d)
        elif kind == "slice":
            out.append(len(range(d)[sl]) if d is not None and sl is not None and sl.step != 0 else None)
    return out


def matmul(a: Shape, b: Shape) -> Optional[Shape]:
    if a.rank is None or b.rank is None or a.rank == 0 or b.rank == 0:
        return None
    if a.rank == 1 and b.rank == 1:
        return SCALAR
    if a.rank == 1:
        return Shape.exact(b.head[:-2] + b.head[-1:])
    if b.rank == 1:
        return Shape.exact(a.head[:-1])
    batch = broadcast(Shape.exact(a.head[:-2]), Shape.exact(b.head[:-2]))
    if batch is None or batch.rank is None:
        return None
    return Shape.exact(batch.head + (a.head[-2], b.head[-1]))


# -- reading literals ------------------------------------------------------------------------------


def _int_literal(node: Optional[cst.BaseExpression]) -> Optional[int]:
    if isinstance(node, cst.Integer):
        try:
            return int(node.value, 0)
        except ValueError:
            return None
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = _int_literal(node.expression)
        return -v if v is not None else None
    return None


int_literal = _int_literal


def _is_number(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _is_number(node.expression)
    return False


is_number = _is_number


def literal_dims(node: cst.BaseExpression) -> Optional[List[Dim]]:
    """``(5, 3)`` / ``[5, n]`` -> [5, 3] / [5, None]; None when not a list/tuple display."""
    if not isinstance(node, (cst.List, cst.Tuple)):
        return None
    out: List[Dim] = []
    for el in node.elements:
        if isinstance(el, cst.StarredElement):
            return None
        out.append(_int_literal(el.value))
    return out


def _data_shape(node: cst.BaseExpression, depth: int = 0) -> Optional[Tuple[int, ...]]:
    """Shape of a nested list literal: ``[[1.], [2.]]`` -> (2, 1); a number -> ()."""
    if depth > 8:
        return None
    if _is_number(node) or (isinstance(node, cst.Name) and node.value in ("True", "False")):
        return ()
    if isinstance(node, (cst.List, cst.Tuple)):
        if any(isinstance(el, cst.StarredElement) for el in node.elements):
            return None
        inner = [_data_shape(el.value, depth + 1) for el in node.elements]
        if not inner:
            return (0,)
        if any(i is None for i in inner) or len(set(inner)) != 1:
            return None
        return (len(inner),) + inner[0]  # type: ignore[operator]
    return None


def _positional(call: cst.Call) -> Optional[List[cst.BaseExpression]]:
    out: List[cst.BaseExpression] = []
    for a in call.args:
        if a.star:
            return None
        if a.keyword is None:
            out.append(a.value)
    return out


def _size_args(values: Sequence[cst.BaseExpression]) -> Optional[List[Dim]]:
    """The size given as ``f(5, 3)`` or ``f((5, 3))`` / ``f([5, 3])``."""
    if len(values) == 1:
        dims = literal_dims(values[0])
        if dims is not None:
            return dims
        v = _int_literal(values[0])
        return [v] if v is not None else None  # a lone variable may be an int or a tuple
    if not values:
        return None
    return [_int_literal(v) for v in values]


def _dim_list(node: Optional[cst.BaseExpression]) -> Optional[List[int]]:
    if node is None:
        return None
    v = _int_literal(node)
    if v is not None:
        return [v]
    dims = literal_dims(node)
    if dims is not None and all(d is not None for d in dims):
        return [d for d in dims if d is not None]
    return None


def _true(node: Optional[cst.BaseExpression]) -> Optional[bool]:
    if node is None:
        return False
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


# -- the tables --------------------------------------------------------------------------------

_T = "torch."
SIZE_CONSTRUCTORS = frozenset(_T + n for n in ("zeros", "ones", "empty", "rand", "randn"))
DATA_CONSTRUCTORS = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray"})
# legacy typed constructors: a sequence argument is data, integers are sizes (only data is inferred here)
VECTOR_CONSTRUCTORS = frozenset({"torch.FloatTensor", "torch.LongTensor", "torch.DoubleTensor", "torch.from_numpy"})
LIKE_CONSTRUCTORS = frozenset(
    _T + n for n in ("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like", "randint_like")
)
ELEMENTWISE = frozenset(
    {
        "abs", "neg", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "square",
        "sigmoid", "tanh", "relu", "sin", "cos", "tan", "sign", "sgn", "floor", "ceil", "round", "trunc",
        "frac", "reciprocal", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "erf", "erfc",
        "float", "double", "half", "bfloat16", "int", "long", "bool", "byte", "char", "short",
        "to", "type_as", "cuda", "cpu", "detach", "clone", "contiguous", "requires_grad_",
        "softmax", "log_softmax", "logical_not", "isnan", "isinf", "isfinite", "pin_memory", "sigmoid_",
        "relu_", "abs_", "clamp_", "exp_", "log_", "mul_", "add_", "sub_", "div_", "neg_", "zero_",
        "fill_", "normal_", "uniform_", "detach_", "cumsum", "cumprod", "flip", "roll", "tril", "triu",
    }
)
FUNCTIONAL_ELEMENTWISE = frozenset(
    "torch.nn.functional." + n
    for n in (
        "relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "mish", "leaky_relu", "softplus", "sigmoid",
        "tanh", "hardtanh", "hardswish", "hardsigmoid", "logsigmoid", "softmax", "log_softmax", "dropout",
        "normalize", "softsign", "tanhshrink",
    )
)
BINARY_FUNCS = frozenset(
    _T + n for n in ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "pow",
                     "maximum", "minimum", "atan2", "fmod", "remainder", "hypot", "eq", "ne", "lt", "le",
                     "gt", "ge", "logical_and", "logical_or", "logical_xor")
)
BINARY_METHODS = frozenset(n.split(".", 1)[1] for n in BINARY_FUNCS)
REDUCTIONS = frozenset(
    {"sum", "mean", "prod", "amax", "amin", "std", "var", "logsumexp", "all", "any", "nansum", "nanmean",
     "count_nonzero", "norm"}
)
LINEAR_LAYERS = frozenset(
    {"torch.nn.Linear", "torch.nn.modules.linear.Linear", "torch.nn.modules.Linear", "torch.nn.LazyLinear",
     "torch.nn.modules.linear.LazyLinear"}
)
#: convolutions, by the rank of their batched input (and output)
CONV_RANKS = {
    **{f"torch.nn.Conv{k}d": k + 2 for k in (1, 2, 3)},
    **{f"torch.nn.modules.conv.Conv{k}d": k + 2 for k in (1, 2, 3)},
}
_HEAD_LAYERS = LINEAR_LAYERS | frozenset(CONV_RANKS)
BINOPS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)

# torch functions whose result is a tensor (the evidence :func:`is_tensor` accepts)
TENSOR_FUNCS = (
    SIZE_CONSTRUCTORS
    | DATA_CONSTRUCTORS
    | LIKE_CONSTRUCTORS
    | BINARY_FUNCS
    | FUNCTIONAL_ELEMENTWISE
    | frozenset(_T + n for n in ELEMENTWISE if not n.endswith("_"))
    | frozenset(_T + n for n in REDUCTIONS)
    | frozenset(
        _T + n
        for n in (
            "full", "arange", "linspace", "logspace", "eye", "randint", "randperm", "from_numpy", "stack",
            "cat", "concat", "concatenate", "matmul", "mm", "bmm", "einsum", "where", "gather",
            "index_select", "masked_select", "reshape", "flatten", "unsqueeze", "squeeze", "transpose",
            "permute", "cumsum", "outer", "cdist", "bernoulli", "multinomial", "normal", "argmax", "argmin",
            "nonzero", "cross", "diag", "tril", "triu", "zeros_like", "clone", "bucketize", "searchsorted",
        )
    )
)
TENSOR_METHODS = ELEMENTWISE | REDUCTIONS | BINARY_METHODS | frozenset(
    {
        "view", "reshape", "flatten", "unsqueeze", "squeeze", "permute", "transpose", "t", "expand",
        "expand_as", "repeat", "view_as", "reshape_as", "matmul", "mm", "bmm", "gather", "index_select",
        "masked_fill", "masked_select", "argmax", "argmin", "narrow", "select", "new_zeros", "new_ones",
        "new_empty", "new_full", "new_tensor", "unfold", "pow", "sqrt", "sum", "mean",
    }
)

#: torch functions whose first argument is a tensor (``torch.sigmoid(x)``, ``torch.cat([a, b])`` aside): a value
#: passed there first is used as a tensor.  Factories take sizes, numbers or data (``torch.randn(n, d)``,
#: ``torch.tensor(xs)``): what they are given first is no tensor by that use.
TENSOR_INPUT_FUNCS = TENSOR_FUNCS - SIZE_CONSTRUCTORS - DATA_CONSTRUCTORS - frozenset(
    _T + n for n in ("full", "arange", "linspace", "logspace", "eye", "randint", "randperm", "from_numpy", "stack",
                     "cat", "concat", "concatenate", "einsum", "normal")
)


def number_annotation(annotation: Optional[cst.BaseExpression]) -> bool:
    """Whether a parameter's annotation is ``int`` or ``float``: a number, never a tensor."""
    return _number_annotation(annotation)


# -- inference ---------------------------------------------------------------------------------

_MAX_DEPTH = 24
_MAX_CHAIN = 16  # straight-line rebindings of one name replayed to find its shape (the last ones)


class _Infer:
    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.open = set(map(id, ctx.stack))  # the nodes enclosing the traversal's position
        self.env: Dict[str, Optional[Shape]] = {}
        self.busy: set = set()
        self.depth = 0

    # names -----------------------------------------------------------------------------------
    def name(self, node: cst.Name) -> Optional[Shape]:
        if node.value in self.env:
            return self.env[node.value]
        if node.value in self.busy:
            return None
        vals = self.ctx.names.bound_values(node)
        if not vals:
            return None
        last = vals[-1]
        if last is None:
            if len(vals) > 1 and self._read_by_own_assignment(node):
                vals = vals[:-1]  # `x, y = x.to(d), y.to(d)`: the `y` read holds the value bound before
            if all(v is None for v in vals) and (len(vals) == 1 or self._no_assignment_reaches(node)):
                # a loop target (`for x, y in loader`), also where an earlier loop bound the same names
                # (a training loop and a validation loop in one method): the loop around the read binds it
                self.busy.add(node.value)
                try:
                    return self.loader_element(node)
                finally:
                    self.busy.discard(node.value)
            return self.unpacked_element(node)
        self.busy.add(node.value)
        try:
            block = _block(self.ctx, last)
            if block is not None and id(block) in self.open:
                # straight-line rebinding: the last value in the block where the name is used, with
                # earlier values of the same block feeding `x = x.unsqueeze(1)`
                chain: List[cst.BaseExpression] = []
                for v in reversed(vals):
                    if v is None or _block(self.ctx, v) is not block or len(chain) == _MAX_CHAIN:
                        break  # bounded: each use replays the chain, so 400 rebindings cost 400 x 400
                    chain.append(v)
                chain.reverse()
                shape: Optional[Shape] = None
                saved = self.env.get(node.value, _MISSING)
                for v in chain:
                    self.env[node.value] = shape
                    shape = self.expr(v)
                if saved is _MISSING:
                    self.env.pop(node.value, None)
                else:
                    self.env[node.value] = saved  # type: ignore[assignment]
                return shape
            if any(v is None for v in vals):
                return None
            shapes = [self.expr(v) for v in vals]
            if shapes and all(s is not None and s == shapes[0] for s in shapes):
                return shapes[0]
            return None
        finally:
            self.busy.discard(node.value)

    # expressions -----------------------------------------------------------------------------
    def expr(self, node: cst.BaseExpression) -> Optional[Shape]:
        if self.depth > _MAX_DEPTH:
            return None
        self.depth += 1
        try:
            return self._expr(node)
        finally:
            self.depth -= 1

    def _expr(self, node: cst.BaseExpression) -> Optional[Shape]:
        if isinstance(node, cst.Name):
            return self.name(node)
        if isinstance(node, cst.Call):
            return self.call(node)
        if isinstance(node, cst.Subscript):
            picked = self.max_along(node.value)
            if picked is not None and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
                    and _int_literal(node.slice[0].slice.value) in (0, 1):
                return picked  # `q.max(1)[0]`: the values (or indices) of the maximum along a dimension
            base = self.expr(node.value)
            if base is None and not any(_array_index(el) for el in node.slice):
                return None  # `items[0]` says nothing; `x[:, None]` only makes sense on an array
            return index(base, node.slice)
        if isinstance(node, cst.BinaryOperation):
            return self.binary(node.left, node.right, node.operator)
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus, cst.BitInvert)):
            return self.expr(node.expression)
        if isinstance(node, cst.Attribute) and node.attr.value in ("values", "indices"):
            return self.max_along(node.value)
        if isinstance(node, cst.Attribute) and node.attr.value == "T":
            base = self.expr(node.value)
            if base is not None and base.rank is not None:
                return Shape.exact(tuple(reversed(base.head)))
            return None
        if isinstance(node, cst.Attribute) and node.attr.value == "data":
            return self.expr(node.value)  # `out.data`: the same tensor, off the graph
        if self.dataset_labels(node):
            return Shape.exact((None,))
        return None

    def max_along(self, node: cst.BaseExpression) -> Optional[Shape]:
        """``x.max(1)`` / ``torch.min(x, dim=1)`` (``keepdim=``): the shape of the values and of the indices
        that the pair holds, the dimension reduced."""
        if not isinstance(node, cst.Call):
            return None
        func = node.func
        qn = self.ctx.names.qualified_names(func)
        if qn & {"torch.max", "torch.min"}:
            offset = 1
            first = arg(node, 0, "input")
            x = first.value if first is not None else None
        elif not qn and isinstance(func, cst.Attribute) and func.attr.value in ("max", "min") \
                and not self.ctx.names.qualified_names(func.value) and is_tensor(self.ctx, func.value):
            offset, x = 0, func.value  # a tensor's (numpy's `a.max(1)[0]` is the first row's maximum)
        else:
            return None
        dim = _int_literal(_arg_value(node, offset, "dim"))
        keep = _true(_arg_value(node, offset + 1, "keepdim"))
        if x is None or dim is None or keep is None:
            return None
        base = self.expr(x)
        return reduce(base, [dim], keep) if base is not None else None

    def _read_by_own_assignment(self, node: cst.Name) -> bool:
        ctx = self.ctx
        if ctx.parent(node) is None:
            return False
        assign = next((a for a in ctx.ancestors(node) if isinstance(a, cst.Assign)), None)
        if assign is None or not any(n.value == node.value for t in assign.targets for n in target_names(t.target)):
            return False
        return any(a is assign.value for a in ctx.ancestors(node)) or node is assign.value

    def _no_assignment_reaches(self, node: cst.Name) -> bool:
        """No assignment reaches the read, and the innermost loop around it that binds the name binds
        it nowhere else in its body (``for y in ys:`` nested in ``for x, y in loader:`` rebinds it)."""
        ctx = self.ctx
        at = node if ctx.parent(node) is not None or not ctx.stack else ctx.stack[-1]  # the walk's position
        if ctx.names.reaching_assignment(node.value, at, ctx.names.function_scope_node()) is not None:
            return False
        around = [a for a in ctx.ancestors(node) if isinstance(a, cst.For)] if ctx.parent(node) is not None else [
            a for a in reversed(ctx.stack) if isinstance(a, cst.For)
        ]
        loop = next((a for a in around if _target_position(a.target, node.value) is not None), None)
        if loop is None:
            return False
        for inner in iter_nodes(loop.body):
            if isinstance(inner, (cst.For, cst.CompFor)) and any(n.value == node.value for n in target_names(inner.target)):
                return False
            if isinstance(inner, cst.Assign) and any(
                    n.value == node.value for t in inner.targets for n in target_names(t.target)):
                return False
            if isinstance(inner, (cst.AugAssign, cst.AnnAssign, cst.NamedExpr)) and any(
                    n.value == node.value for n in target_names(inner.target)):
                return False
            if isinstance(inner, cst.WithItem) and inner.asname is not None and any(
                    n.value == node.value for n in target_names(inner.asname.name)):
                return False
        return True

    def unpacked_element(self, node: cst.Name) -> Optional[Shape]:
        """``y`` after ``x, y = x.to(device), y.to(device)``: the element of the tuple at ``y``'s place
        (its own names read as they were before the assignment)."""
        ctx = self.ctx
        at = node if ctx.parent(node) is not None or not ctx.stack else ctx.stack[-1]  # the walk's position
        found = ctx.names.reaching_assignment(node.value, at, ctx.names.function_scope_node())
        if found is None or found[1] is None:
            return None
        assign, k = found
        if len(assign.targets) != 1 or not isinstance(assign.value, cst.Tuple):
            return None
        target = assign.targets[0].target
        elements = assign.value.elements
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(elements) or any(
            isinstance(el, cst.StarredElement) for el in list(elements) + list(target.elements)
        ):
            return None
        return self.expr(elements[k].value)

    def _split_piece(self, it: cst.BaseExpression) -> Optional[Shape]:
        """A piece of ``for y in torch.split(x, 1)`` (``x.split(1, dim=d)``): ``x``'s shape with dimension ``d``
        (0 by default) made 1."""
        source = split_source(self.ctx, it)
        if source is None:
            return None
        x, dim = source
        base = self.expr(x)
        if base is None or base.rank is None:
            # the source's shape unknown: dimension `d` of each piece is 1 all the same
            return Shape.partial(head=[None] * dim + [1]) if dim >= 0 else None
        if not -base.rank <= dim < base.rank:
            return None
        dims = list(base.head)
        dims[dim] = 1
        return Shape.exact(dims)

    def loader_element(self, node: cst.Name) -> Optional[Shape]:
        """``y`` of ``for x, y in loader`` (also ``for i, (x, y) in enumerate(loader)``), ``loader`` a
        ``DataLoader`` built in view over a ``TensorDataset(a, b, ...)`` whose tensors' shapes are known, or
        over a torchvision classification dataset (its labels): the shape of that tensor with its first
        dimension (the samples) made the batch's, of unknown size.  A ``collate_fn``, a ``batch_sampler``
        or ``batch_size=None`` changes what a batch is: nothing is inferred then."""
        ctx = self.ctx
        # the loops around the name (the walk's open nodes when the name is not reached yet)
        around = [a for a in ctx.ancestors(node) if isinstance(a, cst.For)] if ctx.parent(node) is not None else [
            a for a in reversed(ctx.stack) if isinstance(a, cst.For)
        ]
        loop, position = None, None
        for candidate in around:
            position = _target_position(candidate.target, node.value)
            if position is not None:
                loop = candidate
                break
        if loop is None or position is None:
            return None
        it = loop.iter
        if isinstance(it, cst.Call) and ctx.names.matches(it.func, frozenset({"builtins.enumerate"})) \
                and len(it.args) >= 1 and it.args[0].keyword is None:
            if not position or position[0] != 1:
                return None
            it, position = it.args[0].value, position[1:]
        if not position:
            return self._split_piece(it)
        if len(position) != 1:
            return None
        k = position[0]
        # the call that built the loader: spelled here, or the value of a local bound once
        loader = it if isinstance(it, cst.Call) else ctx.names.sole_value(it) if isinstance(it, cst.Name) \
            else _attribute_loader(ctx, it)
        if not isinstance(loader, cst.Call) or not ctx.names.matches(loader.func, _DATA_LOADERS):
            return None
        if any(a.star or (a.keyword is not None and a.keyword.value in ("collate_fn", "batch_sampler"))
               for a in loader.args):
            return None
        batch = arg(loader, 1, "batch_size")
        if batch is not None and isinstance(batch.value, cst.Name) and batch.value.value == "None":
            return None
        data = arg(loader, 0, "dataset")
        dataset = None if data is None else data.value if isinstance(data.value, cst.Call) \
            else ctx.names.sole_value(data.value) if isinstance(data.value, cst.Name) else None
        if not isinstance(dataset, cst.Call):
            return None
        if ctx.names.matches(dataset.func, _TENSOR_DATASETS):
            if any(a.star or a.keyword is not None for a in dataset.args) or k >= len(dataset.args):
                return None
            sample = self.expr(dataset.args[k].value)
            if sample is None or sample.rank is None or sample.rank == 0:
                return None
            return Shape.exact((None,) + tuple(sample.head[1:]))
        element = _dataset_element(ctx, dataset, k)
        if element is not None:
            # one number (or one tensor of known rank) per sample, stacked by the default collate: [B, ...]
            return Shape.exact((None,) + tuple(element.head))
        if k == 1 and any(
            q.startswith("torchvision.datasets.") and q.rsplit(".", 1)[-1] in _LABELLED_DATASETS
            for q in ctx.names.qualified_names(dataset.func)
        ) and not any(a.keyword is not None and a.keyword.value == "target_transform" for a in dataset.args):
            return Shape.exact((None,))  # one class index per sample
        return None

    def dataset_labels(self, node: cst.BaseExpression) -> bool:
        """``train_set.targets`` / ``.labels`` of a dataset built by one of ``torchvision.datasets``'
        classification classes (MNIST, CIFAR10, ImageFolder, ...): one class index per sample, a 1-D tensor
        or list."""
        if not (isinstance(node, cst.Attribute) and node.attr.value in _DATASET_LABELS):
            return False
        values = self.ctx.names.values_before(node.value) if isinstance(node.value, (cst.Name, cst.Attribute)) else []
        return bool(values) and all(
            isinstance(v, cst.Call) and any(
                q.startswith("torchvision.datasets.") and q.rsplit(".", 1)[-1] in _LABELLED_DATASETS
                for q in self.ctx.names.qualified_names(v.func)
            )
            for v in values
        )

    def binary(self, left: cst.BaseExpression, right: cst.BaseExpression, op: cst.BaseBinaryOp) -> Optional[Shape]:
        if isinstance(op, cst.MatrixMultiply):
            a, b = self.expr(left), self.expr(right)
            return matmul(a, b) if a is not None and b is not None else None
        if not isinstance(op, BINOPS):
            return None
        if self.python_number(left):
            return self.expr(right)
        if self.python_number(right):
            return self.expr(left)
        a, b = self.expr(left), self.expr(right)
        if a is None or b is None:
            return None
        return broadcast(a, b)

    def python_number(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A literal, or an int computed from sizes: ``x.size(2)``, ``x.shape[-1]``, ``len(x)``,
        ``x.numel()``, ``x.dim()``, ``int(...)``, and arithmetic on those."""
        if depth > 4:
            return False
        if _is_number(node):
            return True
        if isinstance(node, cst.Name):
            bound = self.ctx.names.bound_values(node)
            if not bound or node.value in self.busy:
                return False
            self.busy.add(node.value)
            try:
                for v in bound:
                    if v is None:
                        if not _number_annotation(_param_annotation(self.ctx, node)):
                            return False
                    elif not self.python_number(v, depth + 1):
                        return False
                return True
            finally:
                self.busy.discard(node.value)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, BINOPS):
            return self.python_number(node.left, depth + 1) and self.python_number(node.right, depth + 1)
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            return self.number_field(node)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Attribute):
            return node.value.attr.value == "shape" and len(node.slice) == 1 and isinstance(
                node.slice[0].slice, cst.Index
            )
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Attribute):
                if func.attr.value == "size":
                    return len(node.args) == 1 and node.args[0].keyword is None
                return func.attr.value in ("numel", "dim", "ndimension", "item") and not node.args
            if self.ctx.names.matches(func, ("builtins.len", "builtins.int", "builtins.float", "math.prod")):
                return True
            target = self.ctx.function_for_call(node)  # a helper of this module annotated `-> int`
            return target is not None and target.returns is not None and _number_annotation(
                target.returns.annotation
            )
        return False

    def number_field(self, node: cst.Attribute) -> bool:
        """``args.gamma`` where ``args`` holds an instance of a class whose body declares ``gamma: float``
        (or ``int``): built as ``Args(...)``, or parsed from the command line by ``tyro.cli(Args)``, which
        returns an instance of the class it is given (a dataclass of settings)."""
        ctx = self.ctx
        built = ctx.names.reaching_value(node.value) if isinstance(node.value, cst.Name) else None
        if not isinstance(built, cst.Call):
            return False
        cls = built.func
        if ctx.names.matches(built.func, ("tyro.cli",)):
            first = arg(built, 0, "f")
            if first is None:
                return False
            cls = first.value
        found = definition_of(ctx, cls)
        if found is None or not isinstance(found[1], cst.ClassDef):
            return False
        for stmt in class_body(found[1]):
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if (isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)
                            and small.target.value == node.attr.value):
                        return _number_annotation(small.annotation.annotation)
        return False

    def vector_data(self, node: cst.BaseExpression) -> bool:
        """Data that makes a 1-D tensor: a list of Python numbers (a literal, a comprehension of numbers, or
        a name bound only to such lists and grown only by ``append(<number>)``), or one column of a pandas
        data frame (``df["y"].values`` / ``.to_numpy()`` with ``df`` read by ``pd.read_csv`` & co.)."""
        if isinstance(node, cst.ListComp):
            return self.python_number(node.elt)
        if isinstance(node, (cst.List, cst.Tuple)):
            return bool(node.elements) and all(
                not isinstance(el, cst.StarredElement) and self.python_number(el.value) for el in node.elements
            )
        if isinstance(node, cst.Attribute) and node.attr.value == "values":
            return self._frame_column(node.value)
        if self.dataset_labels(node):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and not node.args:
            if node.func.attr.value == "to_numpy":
                return self._frame_column(node.func.value)
            return False
        if isinstance(node, cst.Name):
            bound = self.ctx.names.bound_values(node)
            if not bound or any(v is None for v in bound):
                return False
            for v in bound:
                if isinstance(v, cst.List) and not v.elements:
                    continue
                if not isinstance(v, (cst.List, cst.ListComp)) or not self.vector_data(v):
                    return False
            scope = self.ctx.names.function_scope_node() or self.ctx.module
            for c in self.ctx.contents(scope).calls:
                f = c.func
                if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and f.value.value == node.value:
                    if f.attr.value != "append" or len(c.args) != 1 or not self.python_number(c.args[0].value):
                        return False
            for a in self.ctx.contents(scope).assigns:
                if isinstance(a, cst.AugAssign) and isinstance(a.target, cst.Name) and a.target.value == node.value:
                    return False
            return True
        return False

    def _frame_column(self, node: cst.BaseExpression) -> bool:
        if not isinstance(node, cst.Subscript) or len(node.slice) != 1:
            return False
        key = node.slice[0].slice
        if not (isinstance(key, cst.Index) and isinstance(key.value, cst.SimpleString)):
            return False
        frame = node.value
        values = self.ctx.names.values_before(frame) if isinstance(frame, cst.Name) else []
        return bool(values) and all(
            isinstance(v, cst.Call) and any(q.startswith("pandas.read_") for q in self.ctx.names.qualified_names(v.func))
            for v in values
        )

    def call(self, call: cst.Call) -> Optional[Shape]:
        ctx = self.ctx
        func = call.func
        qn = ctx.names.qualified_names(func)
        if qn:
            return self.function(call, qn)
        if isinstance(func, cst.Attribute) and not qn:
            recv = func.value
            if not ctx.names.qualified_names(recv):  # not a module such as `np`
                shape = self.method(call, func.attr.value, recv)
                if shape is not None:
                    return shape
        return self.layer(call)

    def function(self, call: cst.Call, qn: FrozenSet[str]) -> Optional[Shape]:
        pos = _positional(call)
        if pos is None:
            return None
        if not qn.isdisjoint(SIZE_CONSTRUCTORS):
            size = keyword_arg(call, "size")
            values = [size.value] if size is not None else pos
            dims = _size_args(values)
            if dims is None and len(values) == 1 and self.python_number(values[0]):
                dims = [None]  # `torch.zeros(n)` with `n: int`
            return Shape.exact(dims) if dims is not None else None
        if not qn.isdisjoint(DATA_CONSTRUCTORS) or not qn.isdisjoint(VECTOR_CONSTRUCTORS):
            data = arg(call, 0, "data")
            if data is not None and not qn.isdisjoint(VECTOR_CONSTRUCTORS) and _data_shape(data.value) is None:
                if self.vector_data(data.value):
                    return Shape.exact([None])
                if "torch.from_numpy" not in qn:
                    return None
            shape = _data_shape(data.value) if data is not None else None
            if shape is None and data is not None and self.vector_data(data.value):
                # `torch.tensor([float(v)])`: as many entries as the display has
                return Shape.exact([len(data.value.elements) if isinstance(data.value, (cst.List, cst.Tuple)) else None])
            if shape is None and data is not None and not isinstance(data.value, (cst.List, cst.Tuple)):
                # `torch.from_numpy(a)` / `torch.tensor(a)` of an array whose rank is known: the same shape
                known = self.expr(data.value)
                return known if known is not None and known.rank is not None else None
            return Shape.exact(shape) if shape is not None else None
        if not qn.isdisjoint(LIKE_CONSTRUCTORS):
            first = arg(call, 0, "input")
            return self.expr(first.value) if first is not None else None
        name = _single(qn)
        if name is None:
            return None
        short = name.rsplit(".", 1)[-1]
        if name in _ARRAY_OF and pos:
            # `np.array(x)` / `np.asarray(x, dtype=...)`: a grayscale image is `[H, W]`; an array keeps its shape
            if _grayscale_image(self.ctx, pos[0]):
                return Shape.exact((None, None))
            known = self.expr(pos[0])
            return known if known is not None and known.rank is not None else None
        if name == "cv2.imread" and len(pos) >= 2 and _cv2_single_channel(self.ctx, pos[1]):
            return Shape.exact((None, None))  # one channel, no colour axis: `[H, W]`
        if name == "torch.full":
            size = arg(call, 0, "size")
            dims = literal_dims(size.value) if size is not None else None
            return Shape.exact(dims) if dims is not None else None
        if name == "torch.randint":
            size = keyword_arg(call, "size")
            if size is None and pos:
                size_node: Optional[cst.BaseExpression] = pos[-1]
            else:
                size_node = size.value if size is not None else None
            dims = literal_dims(size_node) if size_node is not None else None
            return Shape.exact(dims) if dims is not None else None
        if name in ("torch.arange", "torch.randperm"):
            if len(pos) == 1:
                return Shape.exact([_int_literal(pos[0])])
            if len(pos) in (2, 3):
                nums = [_int_literal(p) for p in pos]
                if all(n is not None for n in nums):
                    step = nums[2] if len(nums) == 3 else 1
                    if step:
                        n = -(-(nums[1] - nums[0]) // step)  # type: ignore[operator]
                        return Shape.exact([max(0, n)])
                return Shape.exact([None])
            return None
        if name in ("torch.linspace", "torch.logspace"):
            steps = arg(call, 2, "steps")
            return Shape.exact([_int_literal(steps.value) if steps is not None else None])
        if name == "torch.eye":
            n = arg(call, 0, "n")
            m = arg(call, 1, "m")
            nv = _int_literal(n.value) if n is not None else None
            return Shape.exact([nv, _int_literal(m.value) if m is not None else nv])
        if name.startswith("torch.") and len(pos) >= 1:
            x = pos[0]
            if name in FUNCTIONAL_ELEMENTWISE or (name.count(".") == 1 and short in ELEMENTWISE):
                return self.expr(x)
            if name in BINARY_FUNCS and len(pos) >= 2:
                return self.binary(pos[0], pos[1], cst.Add())
            if name in ("torch.matmul", "torch.mm", "torch.bmm") and len(pos) >= 2:
                return self.binary(pos[0], pos[1], cst.MatrixMultiply())
            if name.count(".") == 1:
                return self._shape_op(call, short, x, pos[1:], 1)
        return None

    def method(self, call: cst.Call, name: str, recv: cst.BaseExpression) -> Optional[Shape]:
        if name in ELEMENTWISE or name == "astype":
            return self.expr(recv)
        pos = _positional(call)
        if pos is None:
            return None
        if name == "permute" and pos:
            # `x.permute(2, 0, 1)`: the rank is the number of dimensions named
            order = literal_dims(pos[0]) if len(pos) == 1 else [_int_literal(p) for p in pos]
            if not order or any(o is None for o in order):
                return None
            base = self.expr(recv)
            if base is not None and base.rank == len(order):
                return Shape.exact(base.head[o] for o in order)  # type: ignore[index]
            return Shape.exact((None,) * len(order))
        if name == "gather" and len(pos) == 2:
            return self.expr(pos[1])  # the result has the index's shape
        if name in BINARY_METHODS and pos:
            return self.binary(recv, pos[0], cst.Add())
        if name in ("matmul", "mm", "bmm") and pos:
            return self.binary(recv, pos[0], cst.MatrixMultiply())
        return self._shape_op(call, name, recv, pos, 0)

    def _shape_op(self, call: cst.Call, name: str, x: cst.BaseExpression, rest: Sequence[cst.BaseExpression],
                  offset: int) -> Optional[Shape]:
        """``unsqueeze``/``squeeze``/``view``/``reshape``/reductions, as methods (offset 0) or functions
        (offset 1: the tensor is the first positional argument)."""
        if name == "unsqueeze":
            k = _int_literal(_arg_value(call, offset, "dim"))
            base = self.expr(x)
            if k is None:
                return None
            if base is None:
                base = Shape.partial()
            return unsqueeze(base, k)
        if name == "squeeze":
            dim = _arg_value(call, offset, "dim")
            base = self.expr(x)
            if base is None:
                return None
            if dim is None:
                return squeeze_all(base)
            ks = _dim_list(dim)
            if ks is None or len(ks) != 1:
                return None
            return squeeze_dim(base, ks[0])
        if name in ("view", "reshape"):
            if offset == 0:
                if not rest:
                    return None
                sizes = _size_args(rest)
            else:
                shape_arg = _arg_value(call, 1, "shape")
                sizes = literal_dims(shape_arg) if shape_arg is not None else None
            if sizes is None or sizes.count(-1) > 1:
                return None
            return reshape(self.expr(x), sizes)
        if name == "flatten" and len(call.args) == offset:
            return reshape(self.expr(x), [-1])  # `x.flatten()`, `torch.flatten(x)`: one dimension
        if name in ("t",) and offset == 0:
            base = self.expr(x)
            if base is not None and base.rank is not None and base.rank <= 2:
                return Shape.exact(tuple(reversed(base.head)))
            return None
        if name == "transpose":
            a, b = _int_literal(_arg_value(call, offset, "dim0")), _int_literal(_arg_value(call, offset + 1, "dim1"))
            base = self.expr(x)
            if a is None or b is None or base is None or base.rank is None:
                return None
            d = list(base.head)
            try:
                d[a], d[b] = d[b], d[a]
            except IndexError:
                return None
            return Shape.exact(d)
        if name in REDUCTIONS:
            if name in ("logsumexp", "count_nonzero") or name == "norm":
                return None
            dim = _arg_value(call, offset, "dim")
            keep = _true(_arg_value(call, offset + 1, "keepdim") if name not in ("std", "var") else
                         (keyword_arg(call, "keepdim").value if keyword_arg(call, "keepdim") else None))
            if keep is None:
                return None
            base = self.expr(x)
            if dim is None:
                if offset == 0 and rest:
                    return None
                return reduce(base, None, keep) if base is not None or not keep else None
            ks = _dim_list(dim)
            if ks is None:
                return None
            if base is None:
                if not keep:
                    return None
                base = Shape.partial()
            return reduce(base, ks, keep)
        return None

    def _model_head(self, func: cst.BaseExpression) -> Optional[Tuple[FileContext, cst.Call, bool]]:
        """``model(x)`` with ``model = Net(...)`` and ``Net`` a class of this module or of a project module it
        imports (the program model finds it) whose ``forward`` returns ``self.<head>(...)`` (or a name that
        holds it on every path to the ``return``: ``x = self.head(x)`` then ``return x``), ``<head>`` built
        in ``__init__`` as an ``nn.Linear`` (or an ``nn.Sequential`` ending in one): the file the class is in,
        that layer's constructor, so the output's last dimension is known, and whether the model's input
        stands for the head's (the head returned directly; a ``forward`` that binds its head's output may
        have reshaped on the way, ``x = x.view(n, -1)``, so only the last dimension is known then)."""
        ctx = self.ctx
        values = ctx.names.values_before(func) if isinstance(func, (cst.Name, cst.Attribute)) else []
        built = held_value(ctx, values[0]) if len(values) == 1 and isinstance(func, cst.Attribute) else \
            values[0] if len(values) == 1 else None
        if not isinstance(built, cst.Call):
            return None
        while isinstance(built.func, cst.Attribute) and built.func.attr.value in _MODULE_RETURNS_SELF \
                and isinstance(built.func.value, cst.Call):
            built = built.func.value  # `Net().to(device)`: the module itself
        found = definition_of(ctx, built.func)
        if found is None or not isinstance(found[1], cst.ClassDef):
            return None
        dctx, cls = found
        methods = {m.name.value: m for m in cls.body.body if isinstance(m, cst.FunctionDef)}
        forward, init = methods.get("forward"), methods.get("__init__")
        if forward is None or init is None or not isinstance(forward.body, cst.IndentedBlock):
            return None
        last = forward.body.body[-1] if forward.body.body else None
        if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[0], cst.Return)):
            return None
        returned = last.body[0].value
        direct = not isinstance(returned, cst.Name)
        if not direct:
            returned = dctx.names.reaching_value(returned)  # `x = self.out(x)` then `return x`
        if not (isinstance(returned, cst.Call) and isinstance(returned.func, cst.Attribute)
                and isinstance(returned.func.value, cst.Name) and returned.func.value.value == "self"):
            return None
        attr = returned.func.attr.value
        builders = []
        for node in dctx.contents(init).assigns:
            if isinstance(node, cst.Assign):
                for t in node.targets:
                    tg = t.target
                    if (isinstance(tg, cst.Attribute) and tg.attr.value == attr and isinstance(tg.value, cst.Name)
                            and tg.value.value == "self"):
                        builders.append(node.value)
        if len(builders) != 1:
            return None
        head = _linear_builder(dctx, builders[0])
        return (dctx, head, direct) if head is not None else None

    def layer(self, call: cst.Call) -> Optional[Shape]:
        """``linear(x)`` where ``linear`` was built as ``nn.Linear(in, out)`` (or an ``nn.Sequential``
        ending in one): the last dimension is ``out``."""
        ctx = self.ctx
        func = call.func
        builder: Optional[cst.Call] = None
        if isinstance(func, cst.Call) and ctx.names.matches(func.func, _HEAD_LAYERS):
            builder = func
        else:
            for value in reversed(ctx.names.values_before(func)):
                if isinstance(value, cst.Call):
                    if ctx.names.matches(value.func, _HEAD_LAYERS):
                        builder = value
                    else:
                        builder = sequential_ending_in(ctx, value, _HEAD_LAYERS)
                    break
        where = ctx
        through = True  # the call's input is the head's
        if builder is None:
            head = self._model_head(func)
            if head is not None:
                where, builder, through = head
        if builder is None:
            return None
        conv = [CONV_RANKS[q] for q in where.names.qualified_names(builder.func) if q in CONV_RANKS]
        if conv:
            # `nn.Conv2d(c, 1, k)`: `[B, out, ?, ?]` for a batched input of known rank
            out = arg(builder, 1, "out_channels")
            first = arg(call, 0, "input")
            if out is None or first is None or not through:
                return None
            x = self.expr(first.value)
            if x is None or x.rank != conv[0]:
                return None
            return Shape.exact((x.head[0], _int_literal(out.value)) + (None,) * (conv[0] - 2))
        lazy = any(q.endswith("LazyLinear") for q in where.names.qualified_names(builder.func))
        out = arg(builder, 0 if lazy else 1, "out_features")
        out_dim = _int_literal(out.value) if out is not None else None
        first = arg(call, 0, "input")
        if first is None:
            return None
        return linear_output(self.expr(first.value) if through else None, out_dim)


_MISSING = object()
#: numpy's array makers that keep their argument's shape
_ARRAY_OF = frozenset({"numpy.array", "numpy.asarray", "numpy.ascontiguousarray", "numpy.float32", "numpy.float64"})
#: PIL modes of one band per pixel: `np.array(img.convert("L"))` is `[H, W]`
_ONE_BAND_MODES = frozenset({"L", "F", "I", "I;16", "1"})
_CV2_ONE_CHANNEL = frozenset({"cv2.IMREAD_GRAYSCALE", "cv2.IMREAD_ANYDEPTH", "cv2.IMREAD_REDUCED_GRAYSCALE_2",
                              "cv2.IMREAD_REDUCED_GRAYSCALE_4", "cv2.IMREAD_REDUCED_GRAYSCALE_8"})


def _grayscale_image(ctx: FileContext, node: cst.BaseExpression, depth: int = 0) -> bool:
    """``Image.open(p).convert("L")`` (PIL), spelled here or bound once to a local: one band per pixel."""
    if depth > 3:
        return False
    if isinstance(node, cst.Name):
        value = ctx.names.sole_value(node, at=node) if ctx.parent(node) is not None else ctx.names.sole_value(node)
        return value is not None and _grayscale_image(ctx, value, depth + 1)
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "convert"):
        return False
    mode = arg(node, 0, "mode")
    if mode is None or not isinstance(mode.value, cst.SimpleString) or mode.value.evaluated_value not in _ONE_BAND_MODES:
        return False
    # the receiver is a PIL image: `Image.open(...)`, possibly through a name bound once
    recv = node.func.value
    if isinstance(recv, cst.Name):
        recv = ctx.names.sole_value(recv, at=recv) if ctx.parent(recv) is not None else ctx.names.sole_value(recv)
    return isinstance(recv, cst.Call) and any(q.startswith("PIL.Image.") for q in ctx.names.qualified_names(recv.func))


def _cv2_single_channel(ctx: FileContext, flag: cst.BaseExpression) -> bool:
    """``cv2.IMREAD_GRAYSCALE`` (or 0), ``cv2.IMREAD_ANYDEPTH`` alone: the image is read as one channel."""
    if isinstance(flag, cst.Integer):
        return flag.value == "0"
    return bool(ctx.names.qualified_names(flag) & _CV2_ONE_CHANNEL)
#: the per-sample label attributes of torchvision's classification datasets, and those datasets
_DATASET_LABELS = frozenset({"targets", "labels"})
_LABELLED_DATASETS = frozenset({"MNIST", "FashionMNIST", "KMNIST", "EMNIST", "CIFAR10", "CIFAR100", "SVHN", "STL10",
                                "ImageFolder", "DatasetFolder", "USPS", "SEMEION"})


#: methods of an `nn.Module` that return the module itself
_MODULE_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "float", "double", "half", "train", "eval", "requires_grad_"})
_DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})


def split_source(ctx: FileContext, it: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, int]]:
    """``(x, d)`` for ``torch.split(x, 1)``, ``x.split(1)``, ``torch.split(x, 1, dim=d)`` (pieces of size 1 along
    ``d``, a literal); None for anything else."""
    if not isinstance(it, cst.Call) or any(a.star for a in it.args):
        return None
    if ctx.names.matches(it.func, frozenset({"torch.split"})):
        x, size, dim = arg(it, 0, "tensor"), arg(it, 1, "split_size_or_sections"), arg(it, 2, "dim")
    elif isinstance(it.func, cst.Attribute) and it.func.attr.value == "split" and not ctx.names.qualified_names(it.func):
        x, size, dim = cst.Arg(it.func.value), arg(it, 0, "split_size"), arg(it, 1, "dim")
    else:
        return None
    if x is None or size is None or int_literal(size.value) != 1:
        return None
    d = int_literal(dim.value) if dim is not None else 0
    return (x.value, d) if d is not None else None


def _target_position(target: cst.BaseExpression, name: str) -> Optional[Tuple[int, ...]]:
    """Where ``name`` sits in a loop target: () for the target itself, (1,) for ``a, name``, (1, 0) for
    ``i, (name, b)``; None when it is not there (or under a star)."""
    if isinstance(target, cst.Name):
        return () if target.value == name else None
    if isinstance(target, (cst.Tuple, cst.List)):
        for k, el in enumerate(target.elements):
            if isinstance(el, cst.StarredElement):
                return None
            inner = _target_position(el.value, name)
            if inner is not None:
                return (k,) + inner
    return None


def held_value(ctx: FileContext, value: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """What ``self.<attr>`` holds when ``__init__`` sets it from one of its parameters (``self.model =
    model``): the argument the class's one construction in this file passes for it (``Fitter(Net(),
    DataLoader(...), nn.MSELoss())``), or the value bound once to a name passed there; ``value`` itself
    otherwise.  A class built twice, or never, in the file keeps the parameter (None)."""
    if not isinstance(value, cst.Name) or ctx.parent(value) is None:
        return value
    init = ctx.enclosing(value, cst.FunctionDef)
    if not isinstance(init, cst.FunctionDef) or init.name.value != "__init__":
        return value
    cls = ctx.parent(ctx.parent(init) or init)
    params = [p.name.value for p in list(init.params.posonly_params) + list(init.params.params)
              + list(init.params.kwonly_params)]
    if not isinstance(cls, cst.ClassDef) or value.value not in params[1:]:
        return value
    if len(ctx.names.bound_values(value)) != 1:
        return None  # the parameter is given another value in `__init__`
    built = []
    for c in ctx.calls_in(ctx.module):
        if isinstance(c.func, cst.Name) and c.func.value == cls.name.value:
            found = definition_of(ctx, c.func)
            if found is not None and found[1] is cls:
                built.append(c)  # a construction of this very class
    if len(built) != 1:
        return None
    bound = bind_arguments(built[0], init, 1)
    passed = bound.get(value.value) if bound else None
    if isinstance(passed, cst.Name):
        passed = ctx.names.sole_value(passed, at=passed)
    return passed


def _attribute_loader(ctx: FileContext, it: cst.BaseExpression) -> Optional[cst.Call]:
    """``self.loader`` of a trainer class, built once (``self.loader = DataLoader(TensorDataset(...))`` in
    ``__init__``) from values that read no local name of the method that built it (shapes of another
    function's locals are not followed)."""
    if not (isinstance(it, cst.Attribute) and isinstance(it.value, cst.Name) and it.value.value == "self"):
        return None
    built = held_value(ctx, ctx.names.sole_value(it))
    if not isinstance(built, cst.Call):
        return None
    # a project dataset class decides its samples' shapes in its own `__getitem__`: what its constructor is
    # given (the trainer's own arguments) is not read from here
    data = arg(built, 0, "dataset")
    own = data.value if data is not None and isinstance(data.value, cst.Call) \
        and _project_dataset(ctx, data.value) is not None else None
    skipped = set(map(id, iter_nodes(own))) if own is not None else set()
    for node in iter_nodes(built):  # the names read (not attribute names or keywords)
        if isinstance(node, cst.Name) and id(node) not in skipped and node.value not in ("True", "False", "None") \
                and not ctx.names.qualified_names(node):
            return None  # a local of `__init__`: its value is not followed from here
    return built


def _project_dataset(ctx: FileContext, dataset: cst.Call) -> Optional[Tuple[FileContext, cst.FunctionDef]]:
    """The ``__getitem__`` of the project class ``dataset`` builds (in this file or a project module it
    imports), with the file it is in."""
    found = definition_of(ctx, dataset.func)
    if found is None or not isinstance(found[1], cst.ClassDef):
        return None
    dctx, cls = found
    getitem = next((st for st in (cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ())
                    if isinstance(st, cst.FunctionDef) and st.name.value == "__getitem__"), None)
    return (dctx, getitem) if getitem is not None else None


def _dataset_element(ctx: FileContext, dataset: cst.Call, k: int) -> Optional[Shape]:
    """The shape of one sample's element ``k`` when ``dataset`` builds a class of the project whose
    ``__getitem__`` returns, at position ``k`` of every tuple it returns, one number (``float(...)``,
    ``int(...)``, ``x.item()``, a numeric literal, or ``torch.tensor`` of one of those: a 0-d tensor), or a
    tensor whose rank the shape inference knows in that method (``torch.from_numpy(gray)`` of a grayscale
    image read there: ``[H, W]``).  The default collate stacks them into ``[B, ...]``."""
    found = _project_dataset(ctx, dataset)
    if found is None:
        return None
    dctx, getitem = found
    returns = [r.value for r in _returns_of(getitem)]
    if not returns:
        return None
    shapes: List[Shape] = []
    for value in returns:
        if not (isinstance(value, cst.Tuple) and k < len(value.elements)) or any(
                isinstance(el, cst.StarredElement) for el in value.elements):
            return None
        element = value.elements[k].value
        if _one_number(dctx, element):
            shapes.append(SCALAR)
            continue
        shape = _Infer(dctx).expr(element)
        if shape is None or shape.rank is None:
            return None
        shapes.append(shape)
    if any(s.rank != shapes[0].rank for s in shapes):
        return None
    return Shape.exact(d if all(s.head[i] == d for s in shapes) else None for i, d in enumerate(shapes[0].head))


def _returns_of(function: cst.FunctionDef) -> List[cst.Return]:
    out: List[cst.Return] = []
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Return):
            out.append(node)
        elif not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            stack.extend(node.children)
    return [r for r in out if r.value is not None] if all(r.value is not None for r in out) else []


def _one_number(ctx: FileContext, value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Call):
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "item" and not value.args:
            return True
        if isinstance(value.func, cst.Name) and value.func.value in ("float", "int") and len(value.args) == 1:
            return True
        if ctx.names.matches(value.func, frozenset({"torch.tensor", "torch.as_tensor"})) and value.args \
                and value.args[0].keyword is None:
            return _one_number(ctx, value.args[0].value)
    return False


def _linear_builder(ctx: FileContext, value: cst.BaseExpression) -> Optional[cst.Call]:
    if isinstance(value, cst.Call):
        if ctx.names.matches(value.func, _HEAD_LAYERS):
            return value
        return sequential_ending_in(ctx, value, _HEAD_LAYERS)
    return None


def _array_index(el: cst.SubscriptElement) -> bool:
    sl = el.slice
    return isinstance(sl, cst.Index) and (
        isinstance(sl.value, cst.Ellipsis) or (isinstance(sl.value, cst.Name) and sl.value.value == "None")
    )


def _single(qn: FrozenSet[str]) -> Optional[str]:
    return min(qn) if qn else None


def _arg_value(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    a = arg(call, position, keyword)
    return a.value if a is not None else None


def _block(ctx: FileContext, value: cst.CSTNode) -> Optional[cst.CSTNode]:
    stmt = ctx.statement_of(value)
    if stmt is None:
        return None
    return ctx.parent(stmt)


def shape_of(ctx: FileContext, expr: cst.BaseExpression) -> Optional[Shape]:
    """The known part of ``expr``'s shape, or None when nothing is known.  The question is asked at the
    traversal's current position: names resolve in the current scope, to the values assigned so far."""
    shape = _Infer(ctx).expr(expr)
    if shape is not None and shape.rank is None and not shape.head and not shape.tail and not shape.min_rank:
        return None  # nothing known
    return shape


# -- is it a tensor? -----------------------------------------------------------------------------

TENSOR_ANNOTATIONS = frozenset(
    {"torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor", "torch.nn.Parameter",
     "torch.nn.parameter.Parameter"}
)


def _number_annotation(ann: Optional[cst.BaseExpression]) -> bool:
    return isinstance(ann, cst.Name) and ann.value in ("int", "float")


def _param_annotation(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """The annotation of the parameter of an enclosing function named like ``name``."""
    for fn in reversed(ctx.stack):
        if not isinstance(fn, cst.FunctionDef):
            continue
        params = fn.params
        for p in list(params.posonly_params) + list(params.params) + list(params.kwonly_params):
            if p.name.value == name.value:
                return p.annotation.annotation if p.annotation is not None else None
    return None


def param_annotation(ctx: FileContext, name: cst.Name) -> Optional[cst.BaseExpression]:
    """The annotation of the function parameter ``name`` refers to, if any."""
    return _param_annotation(ctx, name)


def annotated_tensor(ctx: FileContext, name: cst.Name) -> bool:
    """Whether ``name`` is a parameter annotated as a tensor (``x: torch.Tensor``, ``Optional[Tensor]``)."""
    ann = _param_annotation(ctx, name)
    if ann is None:
        return False
    if isinstance(ann, cst.SimpleString):
        return ann.value.strip("'\"") in ("Tensor", "torch.Tensor")
    return ctx.names.matches(ann, TENSOR_ANNOTATIONS)


# attributes only tensors have (NumPy arrays have none of these as methods)
TENSOR_ONLY_METHODS = frozenset(
    {"size", "dim", "numel", "unsqueeze", "detach", "cpu", "cuda", "float", "half", "masked_fill", "new_zeros",
     "new_ones", "new_full", "new_empty", "type_as", "expand", "expand_as", "softmax", "log_softmax"}
)
TENSOR_ONLY_ATTRIBUTES = frozenset({"device", "is_cuda", "requires_grad", "grad"})


def _used_as_tensor(ctx: FileContext, name: cst.Name) -> bool:
    """A parameter the function has already used as a tensor (``x.size(0)``, ``x.device``,
    ``x.unsqueeze(1)``), in the code visited so far."""
    fn = next((a for a in reversed(ctx.stack) if isinstance(a, (cst.FunctionDef, cst.Lambda))), None)
    if fn is None:
        return False
    for use in ctx.names_in(fn, name.value):
        parent = ctx.parent(use)
        if not isinstance(parent, cst.Attribute) or parent.value is not use:
            continue
        attr = parent.attr.value
        if attr in TENSOR_ONLY_ATTRIBUTES:
            return True
        call = ctx.parent(parent)
        if isinstance(call, cst.Call) and call.func is parent and (
            attr in TENSOR_ONLY_METHODS
            or any(a.keyword is not None and canonical_keyword(a.keyword.value) == "dim" and _int_literal(a.value) is not None
                   for a in call.args)
        ):
            # `x.unsqueeze(1)`; `x.argmax(dim=1)`: arrays take `axis=`, lists have no such method, and
            # labelled arrays name their dimensions (`dim="time"`)
            return True
    return False


def _callers_pass_tensors(ctx: FileContext, name: cst.Name, busy: set) -> bool:
    """A parameter every call of its function in this file passes a tensor made in the call's own
    expression (``confusion(torch.randint(0, 3, (10,)), ...)``); a function never called here, or a call
    passing a name or anything else, is no evidence."""
    args = arguments_for_param(ctx, name)
    if not args:
        return False
    return all(isinstance(a, cst.Call) and _is_tensor(ctx, a, busy, 1) for a in args)


def is_tensor(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """Whether there is evidence that ``expr`` is a torch tensor: a torch constructor or op, a tensor
    method on a tensor, a ``Tensor`` annotation, a parameter used as a tensor (``x.size(0)``,
    ``x.device``), a known shape.  Absence of evidence answers False."""
    return _is_tensor(ctx, expr, set(), 0)


_TENSOR_FUNCTIONAL = frozenset(
    "torch.nn.functional." + n for n in ("linear", "conv1d", "conv2d", "conv3d", "embedding", "one_hot", "pad",
                                         "interpolate", "avg_pool2d", "max_pool2d", "layer_norm", "batch_norm")
)


#: torch ops that return a tuple of tensors when given a dim (``values, indices``)
_TUPLE_OPS = frozenset({"max", "min", "topk", "sort", "kthvalue", "median", "mode"})


def _returns_tensors(ctx: FileContext, value: cst.BaseExpression, busy: set, depth: int) -> bool:
    """``torch.max(x, 1)``, ``x.topk(k)``: a call that returns a tuple of tensors."""
    if not isinstance(value, cst.Call):
        return False
    if ctx.names.qualified_names(value.func) & {"torch." + n for n in _TUPLE_OPS}:
        return True
    return isinstance(value.func, cst.Attribute) and value.func.attr.value in _TUPLE_OPS \
        and _is_tensor(ctx, value.func.value, busy, depth)


def _is_tensor(ctx: FileContext, expr: cst.BaseExpression, busy: set, depth: int) -> bool:
    if depth > 8:
        return False
    if isinstance(expr, cst.Call):
        qn = ctx.names.qualified_names(expr.func)
        if qn:
            return not qn.isdisjoint(TENSOR_FUNCS) or not qn.isdisjoint(_TENSOR_FUNCTIONAL)
        func = expr.func
        if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_METHODS:
            return _is_tensor(ctx, func.value, busy, depth + 1)
        return shape_of(ctx, expr) is not None
    if isinstance(expr, cst.Name):
        if expr.value in busy:
            return False
        bound = ctx.names.bound_values(expr)
        vals = [v for v in bound if v is not None]
        if len(vals) < len(bound) and (annotated_tensor(ctx, expr) or _used_as_tensor(ctx, expr)
                                       or (depth == 0 and _callers_pass_tensors(ctx, expr, busy))):
            return True
        if not vals:
            # `_, pred = torch.max(scores, 1)`, `values, idx = x.topk(k)`: a torch op that returns tensors
            unpacked = ctx.names.unpacked_values(expr)
            if not unpacked or len(unpacked) < len(bound):
                return False
            busy.add(expr.value)
            try:
                return all(_returns_tensors(ctx, v, busy, depth + 1) for v, _i in unpacked)
            finally:
                busy.discard(expr.value)
        busy.add(expr.value)
        try:
            # `x = torch.as_tensor(x)` is evidence; `x = x.float()` alone is not
            return all(_is_tensor(ctx, v, busy, depth + 1) for v in vals)
        finally:
            busy.discard(expr.value)
    if isinstance(expr, cst.Attribute):
        if expr.attr.value in ("T", "mT", "data", "grad", "real", "imag"):
            return _is_tensor(ctx, expr.value, busy, depth + 1)
        vals = ctx.names.values_before(expr)
        return bool(vals) and all(isinstance(v, cst.Call) and ctx.names.matches(v.func, TENSOR_FUNCS) for v in vals)
    if isinstance(expr, cst.Subscript):
        return _is_tensor(ctx, expr.value, busy, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return _is_tensor(ctx, expr.left, busy, depth + 1) or _is_tensor(ctx, expr.right, busy, depth + 1)
    return False


__all__ = [
    "split_source",
    "Shape",
    "DATA_CONSTRUCTORS",
    "SIZE_CONSTRUCTORS",
    "param_annotation",
    "SCALAR",
    "shape_of",
    "held_value",
    "is_tensor",
    "broadcast",
    "ranks_differ",
    "unsqueeze",
    "squeeze_dim",
    "squeeze_all",
    "reduce",
    "reshape",
    "index",
    "linear_output",
    "literal_dims",
    "int_literal",
    "is_number",
    "REDUCTIONS",
    "LINEAR_LAYERS",
    "BINARY_FUNCS",
    "BINARY_METHODS",
    "BINOPS",
    "TENSOR_ANNOTATIONS",
    "TENSOR_FUNCS",
    "TENSOR_INPUT_FUNCS",
    "number_annotation",
    "TENSOR_ONLY_ATTRIBUTES",
    "TENSOR_ONLY_METHODS",
    "annotated_tensor",
]
