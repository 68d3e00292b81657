"""The deprecated and removed torch APIs a user meets, as data: one table the version-aware rules read.

Each entry names the API by its qualified name, the torch version that deprecated it and the one that
removed it (None: still present), what to use instead, and how the fix rewrites a call:

- ``rename``: the callee is replaced by ``new`` and the arguments are kept (a drop-in replacement);
- ``device``: like ``rename``, with ``device`` inserted as the first argument (``torch.amp.autocast("cuda", ...)``);
- ``list``: the positional arguments are gathered into one list (``torch.linalg.multi_dot([a, b, c])``);
- ``unwrap``: ``Variable(x)`` becomes ``x``;
- None: the migration changes arguments or results, so it is described but not applied.

``rule`` names the rule that reports the entry; TL509 reports the entries without another owner.
Versions follow the deprecation notes of torch's releases; torchvision entries give the torch release
that shipped with the torchvision version that deprecated them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class Deprecation:
    name: str
    deprecated: str
    removed: Optional[str]
    use: str
    fix: Optional[str] = None
    new: Optional[str] = None
    device: Optional[str] = None
    rule: str = "TL509"
    #: argument keywords whose presence rules the drop-in fix out (their meaning differs in the new API)
    blocks_fix: Tuple[str, ...] = ()
    #: the torch version that took the deprecation back (the API stays, as an alias, without a warning)
    withdrawn: Optional[str] = None


def _entries() -> Tuple[Deprecation, ...]:
    D = Deprecation
    return (
        # linear algebra: torch.* moved to torch.linalg.* (deprecated in 1.9)
        D("torch.solve", "1.9", "1.13", "`torch.linalg.solve(A, B)` (arguments swapped; returns only the solution)"),
        D("torch.lstsq", "1.9", "1.13", "`torch.linalg.lstsq(A, B).solution` (arguments swapped)"),
        D("torch.eig", "1.9", "1.13", "`torch.linalg.eig` (complex results) or `torch.linalg.eigvals`"),
        D("torch.matrix_rank", "1.9", "1.13", "`torch.linalg.matrix_rank`", "rename", "torch.linalg.matrix_rank",
          blocks_fix=("tol", "symmetric")),
        D("torch.symeig", "1.9", "2.0", "`torch.linalg.eigh` (or `torch.linalg.eigvalsh` for eigenvalues only)"),
        D("torch.chain_matmul", "1.9", None, "`torch.linalg.multi_dot([...])`", "list", "torch.linalg.multi_dot",
          blocks_fix=("out",)),
        D("torch.qr", "1.9", None, "`torch.linalg.qr` (`some=False` becomes `mode=\"complete\"`)", "rename",
          "torch.linalg.qr", blocks_fix=("some",)),
        D("torch.cholesky", "1.9", None, "`torch.linalg.cholesky` (`upper=True` becomes `.mH` of the result)",
          "rename", "torch.linalg.cholesky", blocks_fix=("upper",)),
        D("torch.lu", "1.13", None, "`torch.linalg.lu_factor` (or `torch.linalg.lu`)"),
        D("torch.lu_solve", "1.13", None, "`torch.linalg.lu_solve(LU, pivots, B)` (arguments reordered)"),
        D("torch.triangular_solve", "1.11", None, "`torch.linalg.solve_triangular` (arguments reordered, keyword `upper`)"),
        D("torch.svd", "1.9", None, "`torch.linalg.svd(A, full_matrices=False)` (returns `Vh`, not `V`)"),
        D("torch.norm", "1.9", None, "`torch.linalg.vector_norm` / `torch.linalg.matrix_norm`"),
        D("torch.ger", "1.8", None, "`torch.outer`", "rename", "torch.outer"),
        D("torch.range", "0.4", None, "`torch.arange` (its end is exclusive: `arange(a, b + 1)`)"),
        # mixed precision: per-device namespaces folded into torch.amp (2.4)
        D("torch.cuda.amp.autocast", "2.4", None, "`torch.amp.autocast(\"cuda\", ...)`", "device", "torch.amp.autocast", "cuda"),
        D("torch.cpu.amp.autocast", "2.4", None, "`torch.amp.autocast(\"cpu\", ...)`", "device", "torch.amp.autocast", "cpu"),
        D("torch.cuda.amp.GradScaler", "2.4", None, "`torch.amp.GradScaler(\"cuda\", ...)`", "device", "torch.amp.GradScaler", "cuda"),
        D("torch.cuda.amp.custom_fwd", "2.4", None, "`torch.amp.custom_fwd(device_type=\"cuda\")`"),
        D("torch.cuda.amp.custom_bwd", "2.4", None, "`torch.amp.custom_bwd(device_type=\"cuda\")`"),
        # functorch became torch.func (2.0)
        *(
            D(f"functorch.{n}", "2.0", None, f"`torch.func.{n}`", "rename", f"torch.func.{n}")
            for n in ("vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functionalize")
        ),
        # nn.functional spellings that only forward to torch.* (deprecated in 0.4.1); the warning of
        # F.sigmoid and F.tanh was taken back for 2.0 (pytorch/pytorch#65909: kept as aliases)
        D("torch.nn.functional.sigmoid", "0.4.1", None, "`torch.sigmoid`", "rename", "torch.sigmoid", withdrawn="2.0"),
        D("torch.nn.functional.tanh", "0.4.1", None, "`torch.tanh`", "rename", "torch.tanh", withdrawn="2.0"),
        D("torch.nn.functional.upsample", "0.4.1", None, "`torch.nn.functional.interpolate`", "rename",
          "torch.nn.functional.interpolate"),
        D("torch.nn.functional.upsample_nearest", "0.4.1", None, "`F.interpolate(x, ..., mode=\"nearest\")`"),
        D("torch.nn.functional.upsample_bilinear", "0.4.1", None,
          "`F.interpolate(x, ..., mode=\"bilinear\", align_corners=True)`"),
        D("torch.nn.UpsamplingNearest2d", "0.4.1", None, "`nn.Upsample(..., mode=\"nearest\")`"),
        D("torch.nn.UpsamplingBilinear2d", "0.4.1", None, "`nn.Upsample(..., mode=\"bilinear\", align_corners=True)`"),
        # in-place initialisers lost their old names (0.4)
        *(
            D(f"torch.nn.init.{n}", "0.4", None, f"`torch.nn.init.{n}_`", "rename", f"torch.nn.init.{n}_")
            for n in ("uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                      "kaiming_normal", "orthogonal", "sparse")
        ),
        D("torch.nn.utils.clip_grad_norm", "0.4", None, "`torch.nn.utils.clip_grad_norm_`", "rename",
          "torch.nn.utils.clip_grad_norm_"),
        D("torch.nn.utils.weight_norm", "2.1", None,
          "`torch.nn.utils.parametrizations.weight_norm` (the state-dict keys change)"),
        D("torch.backends.cuda.sdp_kernel", "2.3", None, "`torch.nn.attention.sdpa_kernel([...backends])`"),
        D("torch.testing.assert_allclose", "1.12", None, "`torch.testing.assert_close` (stricter default tolerances)"),
        D("torch.utils._pytree._register_pytree_node", "2.2", None, "`torch.utils._pytree.register_pytree_node`",
          "rename", "torch.utils._pytree.register_pytree_node"),
        D("torch.utils.data._utils.collate.default_collate", "1.11", None, "`torch.utils.data.default_collate`",
          "rename", "torch.utils.data.default_collate"),
        D("torch.utils.data._utils.collate.default_convert", "1.11", None, "`torch.utils.data.default_convert`",
          "rename", "torch.utils.data.default_convert"),
        # Variable merged into Tensor (0.4)
        D("torch.autograd.Variable", "0.4", None, "the tensor itself (since torch 0.4 `Variable(x)` is `x` detached: `x.detach()` where `x` needs its graph)", "unwrap"),
        D("torch.autograd.variable.Variable", "0.4", None, "the tensor itself (since torch 0.4 `Variable(x)` is `x` detached: `x.detach()` where `x` needs its graph)", "unwrap"),
        # the 2-D negative log-likelihood: `NLLLoss` takes (N, C, H, W) input itself (0.4); the class only
        # warns ("use `NLLLoss` instead as a drop-in replacement")
        D("torch.nn.NLLLoss2d", "0.4", None, "`torch.nn.NLLLoss` (a drop-in replacement: it takes the same "
          "`(N, C, H, W)` input and `(N, H, W)` target)", "rename", "torch.nn.NLLLoss"),
        D("torch.nn.modules.loss.NLLLoss2d", "0.4", None, "`torch.nn.NLLLoss`", "rename",
          "torch.nn.modules.loss.NLLLoss"),
        # owned by their own rules
        D("torch.set_default_tensor_type", "2.1", None, "`torch.set_default_dtype` / `torch.set_default_device`",
          rule="TL505"),
        # torchvision
        D("torchvision.transforms.v2.ToTensor", "2.1", None,
          "`v2.Compose([v2.ToImage(), v2.ToDtype(torch.float32, scale=True)])`"),
    )


TABLE: Tuple[Deprecation, ...] = _entries()
BY_NAME: Dict[str, Deprecation] = {d.name: d for d in TABLE}

#: Loss arguments replaced by ``reduction=`` (deprecated in 0.4.1; still accepted with a warning).
LEGACY_REDUCTION_ARGS = ("size_average", "reduce")
LEGACY_REDUCTION_SINCE = "0.4.1"
#: `reduction="elementwise_mean"` (0.4.1) was renamed `"mean"` in torch 1.0, which still takes it with a warning
ELEMENTWISE_MEAN_SINCE = "1.0"

#: ``backward(retain_variables=...)``: renamed ``retain_graph`` in torch 0.2 (the old keyword warned), gone
#: from the signature of ``Tensor.backward`` in 0.4 (the Tensor/Variable merge): a ``TypeError`` since
RETAIN_VARIABLES = ("0.2", "0.4")
#: ``loss.data[0]`` / ``loss[0]`` on a 0-d tensor: a warning in 0.4 ("will be an error in PyTorch 0.5"), an
#: ``IndexError`` since 1.0 (the release planned as 0.5); ``.item()`` (0.4) reads the number
ZERO_DIM_INDEX = ("0.4", "1.0")
#: ``iter(loader).next()``: the DataLoader iterator's Python 2 ``next`` alias is gone since torch 1.13 (an
#: ``AttributeError``); the builtin ``next(it)`` calls ``__next__``
LOADER_ITER_NEXT_REMOVED = "1.13"

#: torchvision's ``pretrained=`` / ``pretrained_backbone=`` (deprecated in torchvision 0.13, shipped with torch 1.12)
PRETRAINED_ARGS = {"pretrained": "weights", "pretrained_backbone": "weights_backbone"}
PRETRAINED_SINCE = "1.12"


def version(text: str) -> Tuple[int, int]:
    parts = text.split(".")
    return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
