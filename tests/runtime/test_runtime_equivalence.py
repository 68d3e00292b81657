"""softmax_cross_entropy against F.cross_entropy with probability targets: the same loss and the same
gradients (to the logits and to the labels) over every reduction, class dim, dtype and device, once
the defaults are named (``reduction="sum"`` here, ``"mean"`` there) and the classes moved to dim 1.

CPU always runs; the CUDA cases skip only where no GPU is present.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from torchlint.runtime import softmax_cross_entropy  # noqa: E402

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")),
]
# (rtol, atol) per dtype: the result is rounded to its own dtype (fp16: 11 bits, bf16: 8 bits of mantissa)
TOLERANCE = {
    torch.float64: (1e-12, 1e-12),
    torch.float32: (1e-5, 1e-6),
    torch.float16: (2e-3, 2e-3),
    torch.bfloat16: (1.6e-2, 1.6e-2),
}
# (logits' shape, class dim)
LAYOUTS = [((8, 5), 1), ((8, 5), -1), ((7,), 0), ((4, 5, 3), 1), ((4, 3, 6), -1), ((2, 4, 3, 3), 1), ((2, 3, 3, 4), 3)]


def _inputs(shape, dim, dtype, device, seed=0):
    gen = torch.Generator().manual_seed(seed)
    logits = torch.randn(*shape, generator=gen) * 4
    labels = torch.softmax(torch.randn(*shape, generator=gen), dim=dim)
    return (logits.to(device=device, dtype=dtype).requires_grad_(),
            labels.to(device=device, dtype=dtype).requires_grad_())


def _torch_loss(logits, labels, dim, reduction):
    """F.cross_entropy, computed in float32 for the half types (the CPU kernels of some torch builds have
    no half log-softmax), the classes on dim 1 as it expects them."""
    x, y = logits, labels
    if x.dtype in (torch.float16, torch.bfloat16):
        x, y = x.float(), y.float()
    if x.dim() > 1 and dim % x.dim() != 1:
        x, y = x.movedim(dim, 1), y.movedim(dim, 1)
    return F.cross_entropy(x, y, reduction=reduction).to(logits.dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
@pytest.mark.parametrize("shape, dim", LAYOUTS)
def test_equals_f_cross_entropy_with_probability_targets(device, dtype, reduction, shape, dim):
    rtol, atol = TOLERANCE[dtype]
    ours_x, ours_y = _inputs(shape, dim, dtype, device)
    ref_x, ref_y = _inputs(shape, dim, dtype, device)
    ours = softmax_cross_entropy(labels=ours_y, logits=ours_x, dim=dim, reduction=reduction)
    ref = _torch_loss(ref_x, ref_y, dim, reduction)
    assert ours.dtype == dtype and ours.device.type == device and ours.shape == ref.shape
    torch.testing.assert_close(ours.float(), ref.float(), rtol=rtol, atol=atol)
    # gradients to the logits and to the labels (a teacher's probabilities may be trained too)
    weight = torch.linspace(0.5, 1.5, ours.numel(), device=device, dtype=dtype).reshape(ours.shape)
    g_ours = torch.autograd.grad((ours * weight).sum(), (ours_x, ours_y))
    g_ref = torch.autograd.grad((ref * weight).sum(), (ref_x, ref_y))
    for a, b in zip(g_ours, g_ref):
        assert a.dtype == dtype
        torch.testing.assert_close(a.float(), b.float(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("device", DEVICES)
def test_the_defaults_differ_by_the_number_of_positions(device):
    """The cookbook's sum is the default here; F.cross_entropy averages: sum = mean * positions."""
    x, y = _inputs((6, 4, 5), 1, torch.float64, device)
    total = softmax_cross_entropy(labels=y, logits=x, dim=1)
    torch.testing.assert_close(total, F.cross_entropy(x, y) * (6 * 5))
    torch.testing.assert_close(total, F.cross_entropy(x, y, reduction="sum"))
