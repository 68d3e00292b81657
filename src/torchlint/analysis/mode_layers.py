"""Which library layers behave differently in training and evaluation mode, read from how they are built.

A layer is *mode-dependent* when ``model.eval()`` changes what it computes:

- the dropout family (``nn.Dropout``, ``Dropout1d/2d/3d``, ``AlphaDropout``, ``FeatureAlphaDropout``)
  with ``p > 0`` (``p`` defaults to 0.5);
- batch norm (``nn.BatchNorm1d/2d/3d``, ``SyncBatchNorm``, the lazy ones) tracking running statistics
  (the default; with ``track_running_stats=False`` both modes normalise with the batch's statistics);
- instance norm only with ``track_running_stats=True`` (the default is ``False``);
- ``nn.RNN``/``nn.LSTM``/``nn.GRU`` with ``dropout > 0`` *and* more than one layer: PyTorch applies a
  recurrent layer's dropout between stacked layers only, so a one-layer GRU given ``dropout=0.3`` is the
  same in both modes;
- ``nn.Transformer``, ``nn.TransformerEncoderLayer``/``DecoderLayer`` (``dropout`` defaults to 0.1) and
  ``nn.MultiheadAttention`` (``dropout`` defaults to 0.0) with ``dropout > 0``;
- the torchvision classification, detection, segmentation and video models of the table below (batch
  norm, dropout or stochastic depth by construction).

``LayerNorm``, ``GroupNorm``, ``Embedding``, linear, convolution, pooling and activation layers are
mode-free.  Containers (``nn.Sequential``, ``nn.ModuleList``, ``nn.ModuleDict``) are what their elements
are, comprehensions included (``nn.ModuleList([nn.Linear(d, d) for _ in range(n)])``).

Every verdict is three-valued: ``True`` (proven by construction), ``False`` (provably mode-free), ``None``
(unknown: an argument that is a variable, a layer not in the tables).  Only torch and torchvision API
names are read, never the names of the program's variables.
"""
from __future__ import annotations

import os

from typing import Callable, Iterable, List, Optional

import libcst as cst

from torchlint.analysis.context import FileContext, arg
from torchlint.analysis.project import depends_on, project_of

#: dropout layers: their probability argument defaults to 0.5
DROPOUT_LAYERS = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"})
#: functional dropout: a model's ``F.dropout(x, p, self.training)`` follows its mode; one without ``training=``
#: drops at evaluation too (a dropout that ignores the mode), which the model's author meant to follow it; one
#: given ``training=True`` or ``False`` in so many words does what it says in either mode
FUNCTIONAL_DROPOUT = frozenset({"torch.nn.functional.dropout", "torch.nn.functional.dropout1d",
                                "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d",
                                "torch.nn.functional.alpha_dropout", "torch.nn.functional.feature_alpha_dropout"})
#: batch norm layers (``num_features, eps, momentum, affine, track_running_stats``): statistics tracked by default
BATCH_NORM_LAYERS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", "LazyBatchNorm1d",
                               "LazyBatchNorm2d", "LazyBatchNorm3d"})
#: instance norm layers: statistics not tracked by default
INSTANCE_NORM_LAYERS = frozenset({"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
                                  "LazyInstanceNorm2d", "LazyInstanceNorm3d"})
#: recurrent layers: (position of ``dropout``); ``num_layers`` is the third positional argument of all three
RECURRENT_LAYERS = {"LSTM": 5, "GRU": 5, "RNN": 6}
#: layers with a ``dropout`` argument: (its position, its default)
DROPOUT_ARGUMENT_LAYERS = {"Transformer": (5, 0.1), "TransformerEncoderLayer": (3, 0.1),
                           "TransformerDecoderLayer": (3, 0.1), "MultiheadAttention": (2, 0.0)}
#: stacks of a layer given as their first argument
STACKS = frozenset({"TransformerEncoder", "TransformerDecoder"})
PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.ParameterList",
                        "torch.nn.ParameterDict"})
CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
#: the same, by qualified name: containers whose contents are the modules they are given
CONTAINER_CLASSES = frozenset("torch.nn." + c for c in CONTAINERS)
#: torch.nn layers that compute the same in both modes
MODE_FREE_LAYERS = frozenset(
    {"Linear", "LazyLinear", "Bilinear", "Identity", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
     "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "ReLU", "ReLU6", "GELU",
     "SiLU", "Mish", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Softmax2d", "Softplus", "Softsign", "LeakyReLU",
     "ELU", "CELU", "SELU", "GLU", "PReLU", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink", "Threshold",
     "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
     "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
     "AdaptiveMaxPool3d", "LPPool1d", "LPPool2d", "Embedding", "EmbeddingBag", "Upsample", "UpsamplingNearest2d",
     "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "LayerNorm", "GroupNorm", "RMSNorm",
     "LocalResponseNorm", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
     "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
     "CosineSimilarity", "PairwiseDistance", "RNNCell", "LSTMCell", "GRUCell", "ChannelShuffle", "Fold", "Unfold"}
)
#: torch.nn layers that hold no parameter and no buffer and compute the same in both modes: activations,
#: pooling, padding, reshaping
STATELESS_LAYERS = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax",
    "LogSoftmax", "Softmax2d", "Softmin", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid",
    "Tanhshrink", "Softshrink", "Hardshrink", "Threshold", "LogSigmoid", "GLU", "Flatten", "Unflatten",
    "Identity", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d",
    "LPPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "Upsample",
    "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "CosineSimilarity",
    "PairwiseDistance", "Fold", "Unfold"})
#: torch.nn losses: their class weights are buffers, not parameters
LOSS_LAYERS = frozenset(
    {"L1Loss", "MSELoss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss", "SmoothL1Loss",
     "HuberLoss", "MarginRankingLoss", "HingeEmbeddingLoss", "CosineEmbeddingLoss", "TripletMarginLoss",
     "SoftMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss",
     "GaussianNLLLoss", "CTCLoss"}
)
#: torch.nn modules that hold no parameter: the stateless layers, dropout and the losses
PARAMETER_FREE_LAYERS = STATELESS_LAYERS | DROPOUT_LAYERS | LOSS_LAYERS
#: torchvision model builders (and classes) that contain batch norm, dropout or stochastic depth
TORCHVISION_MODE_DEPENDENT = ("resnet", "resnext", "wide_resnet", "vgg", "alexnet", "densenet", "mobilenet",
                              "efficientnet", "inception", "googlenet", "squeezenet", "shufflenet", "mnasnet",
                              "regnet", "convnext", "swin", "maxvit")
TORCHVISION_MODE_DEPENDENT_PACKAGES = ("torchvision.models.detection.", "torchvision.models.segmentation.",
                                       "torchvision.models.video.", "torchvision.models.quantization.")

#: timm architectures built with batch norm (``timm.create_model("resnet50")``); a timm model given
#: ``drop_rate``/``drop_path_rate`` > 0 drops at training whatever its architecture
TIMM_BATCH_NORM = ("resnet", "resnext", "seresnet", "seresnext", "wide_resnet", "efficientnet", "tf_efficientnet",
                   "mobilenet", "tf_mobilenet", "regnet", "densenet", "inception", "dla", "dpn", "hrnet",
                   "cspresnet", "cspdarknet", "rexnet", "ghostnet", "mixnet", "tf_mixnet", "mnasnet", "xception",
                   "res2net", "resnest", "skresnet", "nfnet", "repvgg", "fbnet", "lcnet", "tinynet")
#: Hugging Face transformers architectures whose configurations default to dropout > 0 (hidden/residual
#: dropout 0.1): the class names' prefixes, and the prefixes of the hub's checkpoint names
TRANSFORMERS_DROPOUT = ("Bert", "Roberta", "XLMRoberta", "DistilBert", "Electra", "GPT2", "OpenAIGPT", "T5", "MT5",
                        "Bart", "MBart", "Marian", "Pegasus", "XLNet", "Deberta", "DebertaV2", "Camembert",
                        "Longformer", "MPNet")
TRANSFORMERS_CHECKPOINTS = ("bert-", "google-bert/", "roberta-", "FacebookAI/roberta", "FacebookAI/xlm-roberta",
                            "xlm-roberta", "distilbert", "distilroberta", "distilgpt2", "gpt2", "openai-community/gpt2",
                            "openai-gpt", "t5-", "google-t5/", "google/mt5", "facebook/bart", "facebook/mbart",
                            "Helsinki-NLP/opus-mt", "google/pegasus", "xlnet", "microsoft/deberta", "camembert",
                            "allenai/longformer", "google/electra", "microsoft/mpnet")

#: how to judge an element of a container (a value of the program: a call, a name, ...)
Judge = Callable[[cst.BaseExpression], Optional[bool]]


def number(expr: Optional[cst.BaseExpression]) -> Optional[float]:
    """The value of a numeric literal (``0.3``, ``2``, ``-1``), else None."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = number(expr.expression)
        return -inner if inner is not None else None
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return float(expr.evaluated_value)
        except (ValueError, OverflowError):
            return None
    return None


def _flag(expr: Optional[cst.BaseExpression]) -> Optional[bool]:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def _argument(call: cst.Call, position: int, keyword: str) -> "tuple[bool, Optional[cst.BaseExpression]]":
    """(given, value): whether the call passes the argument, and its expression."""
    if any(a.star for a in call.args):
        return True, None  # `*args`/`**kwargs`: it may be given, its value is unknown
    a = arg(call, position, keyword)
    return (a is not None), (a.value if a is not None else None)


#: reads the number a value holds (a literal, or a name bound to literals / a parameter's literal default)
Numbers = Callable[[Optional[cst.BaseExpression]], List[float]]


def _positive(call: cst.Call, position: int, keyword: str, default: float, numbers: Numbers) -> Optional[bool]:
    given, value = _argument(call, position, keyword)
    if not given:
        return default > 0
    values = numbers(value)
    if not values:
        return None
    if all(v > 0 for v in values):
        return True
    return False if all(v <= 0 for v in values) else None


def literal_numbers(ctx: FileContext) -> Numbers:
    """The numbers a value may hold, read from construction: a literal (``0.3``); a name every assignment
    of which is a literal (``p = 0.3``); a parameter with a literal default (``dp_rate=0.1``: the
    configuration its callers get unless they pass another).  Empty when unknown."""

    def read(expr: Optional[cst.BaseExpression], hops: int = 0) -> List[float]:
        n = number(expr)
        if n is not None:
            return [n]
        if not isinstance(expr, cst.Name):
            return []
        if ctx.names.is_param_at(expr):
            function = ctx.enclosing(expr, cst.FunctionDef)
            if not isinstance(function, cst.FunctionDef):
                return []
            p = function.params
            for param in [*p.posonly_params, *p.params, *p.kwonly_params]:
                if param.name.value == expr.value:
                    d = number(param.default) if param.default is not None else None
                    passed = _constructor_arguments(ctx, function, param, d) if hops < 2 else None
                    if passed is not None:
                        out: List[float] = []
                        for a in passed:
                            if a is None:
                                got = [d] if d is not None else []
                            elif isinstance(a, (cst.Attribute, cst.Subscript)):
                                got = read_any(a)  # `Net(args.dropout)`: the option's default, a dict's entry
                            else:
                                got = read(a, hops + 1)
                            if not got:
                                return []
                            out.extend(got)
                        return out
                    return [d] if d is not None else []
            return []
        values = [number(v) for v in ctx.names.values_at(expr)]
        return [v for v in values if v is not None] if values and None not in values else []

    def read_any(expr: Optional[cst.BaseExpression]) -> List[float]:
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value != "self":
            found = option_default(ctx, expr.attr.value)  # `args.drop_path`: the parsed options of this file
            if not found:
                found = keyword_setting(ctx, expr.attr.value)  # `config = Namespace(dropout_p=0.1)` in this file
            if not found and ctx.names.is_param_at(expr.value):
                found = project_option_default(ctx, expr.attr.value)  # handed in by a script of the project
                if not found:
                    found = project_setting(ctx, expr.attr.value)  # a settings class's attribute
            return found
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Attribute) \
                and isinstance(expr.value.value, cst.Name) and expr.value.value.value == "self" \
                and _kept_parameter(ctx, expr.value):
            return project_setting(ctx, expr.attr.value)  # `self.config.dropout_keep`, `self.config = config`
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
            # `self.dropout`, last set in the class before the read from a number or from a constructor
            # parameter (see `read`); `self.dropout = nn.Dropout(p=self.dropout)` reads the value before
            around = set(map(id, ctx.ancestors(expr)))
            values = [v for v in ctx.names.values_before(expr) if id(v) not in around]
            return read(values[-1]) if values else []
        if isinstance(expr, cst.Subscript):
            return dict_entry(ctx, expr)
        return read(expr)

    return read_any


def _constructor_arguments(ctx: FileContext, function: cst.FunctionDef, param: cst.Param,
                           default: Optional[float]) -> Optional[List[Optional[cst.BaseExpression]]]:
    """For a parameter of the ``__init__`` of a module-level class: what each construction of the class in
    this file passes for it (None in the list where a construction leaves it to its default), when every
    construction can be read (``RNN(vocab, 128, DROPOUT)`` with ``DROPOUT = 0.5``: a rate its callers
    set); None when the function is no such ``__init__``, the class is never built here, or some
    construction passes ``*args``/``**kwargs``."""
    if function.name.value != "__init__":
        return None
    cls = ctx.enclosing(function, cst.ClassDef)
    if not isinstance(cls, cst.ClassDef) or cls not in ctx.module.body:
        return None
    p = function.params
    ordered = [q.name.value for q in [*p.posonly_params, *p.params]]
    position = ordered.index(param.name.value) - 1 if param.name.value in ordered else 10 ** 6
    out: List[Optional[cst.BaseExpression]] = []
    for call in ctx.calls_in(ctx.module):
        if not (isinstance(call.func, cst.Name) and call.func.value == cls.name.value):
            continue
        if ctx.names.qualified_names_at(call.func):
            continue  # an imported name that happens to be spelled alike
        if any(a.star for a in call.args):
            return None
        a = arg(call, position, param.name.value)
        if a is None and default is None:
            return None
        out.append(a.value if a is not None else None)
    return out or None


def option_default(ctx: FileContext, dest: str) -> List[float]:
    """``args.drop_path`` where this file declares ``parser.add_argument("--drop-path", default=0.1)``:
    the option's numeric default (what a run gets unless the command line says otherwise); empty when the
    file declares no such option or its default is not a number."""
    out: List[float] = []
    for call in ctx.calls_in(ctx.module):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "add_argument"):
            continue
        named = arg(call, 10**6, "dest")
        dests = [named.value] if named is not None else [a.value for a in call.args if a.keyword is None]
        spelled = set()
        for d in dests:
            if isinstance(d, cst.SimpleString) and isinstance(d.evaluated_value, str):
                spelled.add(d.evaluated_value.lstrip("-").replace("-", "_"))
        if dest not in spelled:
            continue
        default = arg(call, 10**6, "default")
        n = number(default.value) if default is not None else None
        if n is None:
            return []
        out.append(n)
    return out


#: settings objects built from keyword arguments (``argparse.Namespace(dropout_p=0.1)``)
KEYWORD_SETTINGS = frozenset({"argparse.Namespace", "types.SimpleNamespace", "easydict.EasyDict",
                              "ml_collections.ConfigDict"})


def keyword_setting(ctx: FileContext, name: str) -> List[float]:
    """``config.dropout_p`` where this file builds a settings object from keyword arguments
    (``config = argparse.Namespace(lr=1e-3, dropout_p=0.1)``, ``SimpleNamespace``, ``EasyDict``): the numbers its builds give the keyword ``name``; empty when none gives it, or one gives
    something that is not a number."""
    out: List[float] = []
    for call in ctx.calls_in(ctx.module):
        given = next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)
        if given is None or not ctx.names.qualified_names(call.func) & KEYWORD_SETTINGS:
            continue
        n = number(given.value)
        if n is None:
            return []
        out.append(n)
    return out


#: how many other files of the project are read for the declaration of an option
OPTION_FILES_MAX = 8


def project_option_default(ctx: FileContext, dest: str) -> List[float]:
    """``args.dropout`` where ``args`` comes into this file as a parameter (the parsed options a script
    hands to a model's constructor): the numeric defaults the other files of the project declare for that
    option (``parser.add_argument("-dropout", type=float, default=0.5)`` in ``main.py``); empty when none
    does, when more than :data:`OPTION_FILES_MAX` files would have to be read, or when a declaration's
    default is not a number."""
    if not ctx.path:
        return []
    project = project_of(ctx)
    key, _files = project.sources(ctx.path)
    depends_on(ctx, key)  # a file that declares the option added or removed changes the answer
    declaring = project.others_mentioning(ctx.path, ("add_argument",), (dest.split("_")[0],))
    if not declaring or len(declaring) > OPTION_FILES_MAX:
        return []
    out: List[float] = []
    for f in declaring:
        depends_on(ctx, os.path.abspath(f))
        other = project.load(f)
        if other is not None:
            out.extend(option_default(other, dest))
    return out


def _kept_parameter(ctx: FileContext, attr: cst.Attribute) -> bool:
    """``self.<name>`` set once, in the constructor of the class around ``attr``, to one of its parameters
    (``self.config = config``): an object its builders hand over."""
    values = ctx.names.values_at(attr)
    if len(values) != 1 or not isinstance(values[0], cst.Name):
        return False
    function = ctx.enclosing(values[0], cst.FunctionDef)
    return isinstance(function, cst.FunctionDef) and function.name.value == "__init__" \
        and ctx.names.is_param_at(values[0])


def project_setting(ctx: FileContext, name: str) -> List[float]:
    """``config.dropout_keep`` where ``config`` is handed in: the numbers the settings classes of the project
    give the attribute ``name`` in their bodies (``class Config: dropout_keep = 0.8``, a dataclass field
    ``dropout: float = 0.1``) in the files linked to this one by imports or beside it, when every such
    class that sets it at class level gives a number; empty when none does, when more than
    :data:`OPTION_FILES_MAX` files would have to be read, or when one gives something else."""
    if not ctx.path:
        return []
    project = project_of(ctx)
    # the settings an object of this file is built with come from the modules linked to it by imports (and
    # from the files beside it): a sibling package's own settings class is not read
    linked = project.import_connected(ctx.path)
    here = os.path.dirname(os.path.abspath(ctx.path))
    declaring = [f for f in project.others_mentioning(ctx.path, ("class",), (name,))
                 if linked is None or os.path.abspath(f) in linked or os.path.dirname(os.path.abspath(f)) == here]
    declaring.append(ctx.path)
    if len(declaring) > OPTION_FILES_MAX + 1:
        return []
    key, _files = project.sources(ctx.path)
    depends_on(ctx, key)  # a settings file added or removed changes the answer
    out: List[float] = []
    for f in declaring:
        if f != ctx.path:
            depends_on(ctx, os.path.abspath(f))
        other = ctx if f == ctx.path else project.load(f)
        if other is None:
            continue
        for cls in other.classes().values():
            body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ()
            for stmt in body:
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                for small in stmt.body:
                    target = value = None
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        target, value = small.targets[0].target, small.value
                    elif isinstance(small, cst.AnnAssign):
                        target, value = small.target, small.value
                    if isinstance(target, cst.Name) and target.value == name:
                        n = number(value)
                        if n is None:
                            return []
                        out.append(n)
    return out


def dict_entry(ctx: FileContext, expr: cst.Subscript) -> List[float]:
    """``cfg["drop_rate"]`` where every value ``cfg`` is bound to is a dict display holding that key as a
    number (``cfg = {"drop_rate": 0.1, ...}``); empty otherwise."""
    if not isinstance(expr.value, cst.Name) or len(expr.slice) != 1 or not isinstance(expr.slice[0].slice, cst.Index):
        return []
    key = expr.slice[0].slice.value
    if not (isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str)):
        return []
    values = ctx.names.values_at(expr.value)
    out: List[float] = []
    for v in values:
        if not isinstance(v, cst.Dict):
            return []
        found = [number(e.value) for e in v.elements if isinstance(e, cst.DictElement)
                 and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key.evaluated_value]
        if len(found) != 1 or found[0] is None:
            return []
        out.append(found[0])
    return out


def torch_layer_mode(call: cst.Call, last: str, judge: Judge, numbers: Numbers = lambda e: []) -> Optional[bool]:
    """The verdict for ``call``, a constructor of the ``torch.nn`` layer ``last`` (``"GRU"``); ``judge``
    answers for the elements of containers and the layer of a stack, ``numbers`` reads arguments."""
    def read(expr: Optional[cst.BaseExpression]) -> List[float]:
        n = number(expr)
        return [n] if n is not None else numbers(expr)

    if last in DROPOUT_LAYERS:
        return _positive(call, 0, "p", 0.5, read)
    if last in BATCH_NORM_LAYERS or last in INSTANCE_NORM_LAYERS:
        default = last in BATCH_NORM_LAYERS
        given, value = _argument(call, 4, "track_running_stats")
        if not given:
            return default
        return _flag(value)
    if last in RECURRENT_LAYERS:
        dropout = _positive(call, RECURRENT_LAYERS[last], "dropout", 0.0, read)
        given, layers = _argument(call, 2, "num_layers")
        counts = read(layers) if given else [1.0]
        stacked = None if not counts else (True if all(c > 1 for c in counts) else
                                           (False if all(c <= 1 for c in counts) else None))
        if dropout is False or stacked is False:
            return False
        if dropout is True and stacked is True:
            return True
        return None
    if last in DROPOUT_ARGUMENT_LAYERS:
        position, default = DROPOUT_ARGUMENT_LAYERS[last]
        return _positive(call, position, "dropout", default, read)
    if last in STACKS:
        given, layer = _argument(call, 0, "encoder_layer" if "Encoder" in last else "decoder_layer")
        return judge(layer) if layer is not None else None
    if last in CONTAINERS:
        return combine(judge(e) for e in container_elements(call))
    if last in MODE_FREE_LAYERS:
        return False
    return None


def container_elements(call: cst.Call) -> List[Optional[cst.BaseExpression]]:
    """The modules a ``Sequential``/``ModuleList``/``ModuleDict`` call holds: its arguments, the elements
    of a list, tuple or dict display, the element of a comprehension, the values of ``OrderedDict([(k, v)])``,
    a list it unpacks as a ``cst.StarredElement`` (``*layers``: a judge may read what the list holds);
    ``None`` for what cannot be read (a variable, ``**kwargs``)."""
    out: List[Optional[cst.BaseExpression]] = []
    for a in call.args:
        if a.star:
            out.append(cst.StarredElement(value=a.value) if a.star == "*" and isinstance(a.value, cst.Name) else None)
            continue
        out.extend(_held(a.value))
    return out


def _held(value: cst.BaseExpression) -> List[Optional[cst.BaseExpression]]:
    if isinstance(value, (cst.List, cst.Tuple, cst.Set)):
        out: List[Optional[cst.BaseExpression]] = []
        for e in value.elements:
            out.extend([None] if isinstance(e, cst.StarredElement) else [e.value])
        return out
    if isinstance(value, (cst.ListComp, cst.GeneratorExp, cst.SetComp)):
        return [value.elt]
    if isinstance(value, cst.Dict):
        return [e.value if isinstance(e, cst.DictElement) else None for e in value.elements]
    if isinstance(value, cst.DictComp):
        return [value.value]
    if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)) and (
        (value.func.value if isinstance(value.func, cst.Name) else value.func.attr.value) == "OrderedDict"
    ):
        pairs: List[Optional[cst.BaseExpression]] = []
        for a in value.args:
            for item in _held(a.value):
                if isinstance(item, cst.Tuple) and len(item.elements) == 2:
                    pairs.append(item.elements[1].value)
                else:
                    pairs.append(None)
        return pairs
    return [value]


def library_model_mode(qualified: str) -> Optional[bool]:
    """The verdict for a library model builder or class (``torchvision.models.resnet18``): True for the
    table's torchvision models, None for anything else."""
    if not qualified.startswith("torchvision.models."):
        return None
    if qualified.startswith(TORCHVISION_MODE_DEPENDENT_PACKAGES):
        return True
    last = qualified.rsplit(".", 1)[-1].lower()
    return True if last.startswith(TORCHVISION_MODE_DEPENDENT) else None


#: torchvision builders whose ``features`` part is convolutions, activations and pooling only: their dropout
#: sits in ``classifier`` (the ``_bn`` variants of VGG normalise in ``features`` too)
_MODE_FREE_FEATURES = frozenset({"vgg11", "vgg13", "vgg16", "vgg19", "alexnet", "squeezenet1_0", "squeezenet1_1"})


def library_part_mode(qualified: str, part: str) -> Optional[bool]:
    """The verdict for a part taken from a library model as it is built (``models.vgg16(True).features``):
    False for the parts the tables know to compute the same in both modes, None otherwise."""
    if not qualified.startswith("torchvision.models.") or part != "features":
        return None
    return False if qualified.rsplit(".", 1)[-1] in _MODE_FREE_FEATURES else None


def part_call_mode(ctx: FileContext, value: cst.BaseExpression) -> Optional[bool]:
    """For ``<library model builder>(...).<part>``: :func:`library_part_mode` of the builder and the part;
    None for any other value."""
    if not isinstance(value, cst.Attribute) or not isinstance(value.value, cst.Call):
        return None
    verdicts = {library_part_mode(q, value.attr.value) for q in ctx.names.qualified_names_at(value.value.func)}
    return verdicts.pop() if len(verdicts) == 1 else None


def _string(expr: Optional[cst.BaseExpression]) -> Optional[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def timm_model_mode(call: cst.Call, numbers: "Numbers") -> Optional[bool]:
    """``timm.create_model(name, ...)``: True with ``drop_rate``/``drop_path_rate`` > 0 or an architecture
    of the batch-norm table; None otherwise (ViT, ConvNeXt and many more are mode-free by default)."""
    for keyword in ("drop_rate", "drop_path_rate", "drop_block_rate"):
        a = arg(call, 10**6, keyword)
        if a is not None:
            values = [number(a.value)] if number(a.value) is not None else numbers(a.value)
            if values and all(v is not None and v > 0 for v in values):
                return True
    first = arg(call, 0, "model_name")
    name = _string(first.value) if first is not None else None
    if name is not None and name.split(".", 1)[0].lower().startswith(TIMM_BATCH_NORM):
        return True
    return None


def transformers_model_mode(qualified: str, call: cst.Call) -> Optional[bool]:
    """A Hugging Face model built (``BertModel(config)``, ``X.from_config(config)``) or loaded
    (``X.from_pretrained(name)``) from an architecture of the dropout table, or an ``AutoModel*`` loaded
    from a checkpoint name of the table: True (dropout 0.1 by default).  None for anything else."""
    parts = qualified.split(".")
    if len(parts) < 2 or parts[0] != "transformers":
        return None
    method = parts[-1] if parts[-1] in ("from_pretrained", "from_config") else None
    cls = parts[-2] if method else parts[-1]
    if cls.startswith("Auto"):
        if method != "from_pretrained":
            return None
        first = arg(call, 0, "pretrained_model_name_or_path")
        name = _string(first.value) if first is not None else None
        return True if name is not None and name.startswith(TRANSFORMERS_CHECKPOINTS) else None
    if not cls[:1].isupper() or cls.endswith(("Config", "Tokenizer", "TokenizerFast", "Processor")):
        return None
    for prefix in TRANSFORMERS_DROPOUT:
        rest = cls[len(prefix):]
        if cls.startswith(prefix) and (rest == "" or rest.startswith(("Model", "For", "LMHead", "Encoder", "Decoder",
                                                                       "PreTrained"))):
            return True
    return None


def combine(verdicts: Iterable[Optional[bool]]) -> Optional[bool]:
    """A module made of parts: True when one part is mode-dependent, False when every part is provably
    mode-free, None otherwise (an empty container is mode-free)."""
    seen_unknown = False
    for v in verdicts:
        if v is True:
            return True
        if v is None:
            seen_unknown = True
    return None if seen_unknown else False


def layer_call_mode(ctx: FileContext, call: cst.Call, judge: Judge) -> "tuple[bool, Optional[bool]]":
    """(known, verdict) for a call of a torch.nn layer or a table's library model; known is False when the
    callee is none of those (a project class, an unknown function)."""
    for q in sorted(ctx.names.qualified_names_at(call.func)):
        if q in FUNCTIONAL_DROPOUT:
            given, value = _argument(call, 2, "training")
            if given and _flag(value) is not None:
                return True, False  # `training=False`: never drops; `training=True`: drops in both modes on purpose
                # (test-time noise): switching the mode changes neither
            return True, _positive(call, 1, "p", 0.5, literal_numbers(ctx))
        if q.startswith(("torch.nn.init.", "torch.nn.utils.")) or q in PARAMETERS:
            return True, False  # `nn.Parameter(...)`, `nn.utils.spectral_norm(conv)`: no mode of their own
        if q.startswith("torch.nn.") and not q.startswith("torch.nn.functional"):
            return True, torch_layer_mode(call, q.rsplit(".", 1)[-1], judge, literal_numbers(ctx))
        if q in ("timm.create_model", "timm.models.create_model") or q.startswith("timm.models."):
            creates = q in ("timm.create_model", "timm.models.create_model")
            return True, (timm_model_mode(call, literal_numbers(ctx)) if creates else None)
        if q.startswith("transformers."):
            return True, transformers_model_mode(q, call)
        verdict = library_model_mode(q)
        if verdict is not None:
            return True, verdict
    return False, None


__all__ = [
    "KEYWORD_SETTINGS",
    "keyword_setting",
    "BATCH_NORM_LAYERS",
    "CONTAINERS",
    "CONTAINER_CLASSES",
    "DROPOUT_LAYERS",
    "FUNCTIONAL_DROPOUT",
    "MODE_FREE_LAYERS",
    "LOSS_LAYERS",
    "PARAMETER_FREE_LAYERS",
    "STATELESS_LAYERS",
    "combine",
    "container_elements",
    "layer_call_mode",
    "library_model_mode",
    "library_part_mode",
    "part_call_mode",
    "literal_numbers",
    "number",
    "project_setting",
    "torch_layer_mode",
]
