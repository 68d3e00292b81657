"""torchlint.runtime.softmax_cross_entropy against a float64 reference, on every device.

CPU always runs; only the CUDA cases skip, and only when no GPU is present.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from torchlint.runtime import softmax_cross_entropy  # noqa: E402

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")
    ),
]
LOW = [torch.float16, torch.bfloat16]


def reference(labels, logits, dim=-1, reduction="sum"):
    """The cookbook's stable formula, in float64."""
    x = logits.detach().double()
    y = labels.detach().double()
    if dim is None:
        shape = torch.broadcast_shapes(x.shape, y.shape)
        x, y, dim = x.expand(shape).reshape(-1), y.expand(shape).reshape(-1), 0
    loss = -(y * (x - torch.logsumexp(x, dim=dim, keepdim=True))).sum(dim=dim)
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def make(device, shape=(6, 7), dtype=torch.float32, scale=3.0, seed=0):
    gen = torch.Generator().manual_seed(seed)
    logits = (torch.randn(*shape, generator=gen) * scale).to(device=device, dtype=dtype)
    labels = torch.softmax(torch.randn(*shape, generator=gen), dim=-1).to(device=device, dtype=dtype)
    return labels, logits


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_cookbook_extremes(device):
    labels = torch.tensor([0.5, 0.5], device=device)
    logits = torch.tensor([1000.0, 0.0], device=device, requires_grad=True)
    loss = softmax_cross_entropy(labels, logits)
    assert loss.item() == pytest.approx(500.0)
    (grad,) = torch.autograd.grad(loss, logits)
    torch.testing.assert_close(grad.cpu(), torch.tensor([0.5, -0.5]))
    # the naive formula is not finite here: that is what the runtime replaces
    naive = -torch.sum(labels * torch.log(torch.softmax(logits.detach(), -1)))
    assert not torch.isfinite(naive)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
def test_matches_float64_reference(device, dtype, reduction):
    labels, logits = make(device, (5, 4, 9), dtype=dtype, scale=20.0)
    got = softmax_cross_entropy(labels, logits, dim=-1, reduction=reduction)
    want = reference(labels, logits, -1, reduction)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    torch.testing.assert_close(got.double().cpu(), want.cpu(), rtol=tol, atol=tol)
    assert got.dtype == dtype and got.device.type == torch.device(device).type


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2])
def test_any_dim(device, dim):
    labels, logits = make(device, (3, 4, 5), scale=10.0)
    labels = torch.softmax(torch.randn(3, 4, 5, device=device), dim=dim)
    got = softmax_cross_entropy(labels, logits, dim=dim, reduction="none")
    torch.testing.assert_close(got.double().cpu(), reference(labels, logits, dim, "none").cpu(), rtol=1e-5, atol=1e-5)
    expected_shape = list(logits.shape)
    del expected_shape[dim]
    assert list(got.shape) == expected_shape


@pytest.mark.parametrize("device", DEVICES)
def test_dim_none_normalises_over_every_element(device):
    labels, logits = make(device, (3, 4), scale=50.0)
    got = softmax_cross_entropy(labels, logits, dim=None)
    assert got.shape == ()
    torch.testing.assert_close(got.double().cpu(), reference(labels, logits, None).cpu(), rtol=1e-5, atol=1e-5)
    flat = softmax_cross_entropy(labels.flatten(), logits.flatten(), dim=0)
    torch.testing.assert_close(got, flat)
    assert softmax_cross_entropy(labels, logits, dim=None, reduction="none").shape == ()


@pytest.mark.parametrize("device", DEVICES)
def test_mean_averages_over_positions_like_cross_entropy(device):
    labels, logits = make(device, (8, 5), scale=5.0)
    ours = softmax_cross_entropy(labels, logits, dim=1, reduction="mean")
    torch.testing.assert_close(ours, F.cross_entropy(logits, labels))
    # spatial positions count too: (N, C, H) with classes on dim 1
    labels3 = torch.softmax(torch.randn(2, 5, 3, device=device), 1)
    logits3 = torch.randn(2, 5, 3, device=device)
    torch.testing.assert_close(
        softmax_cross_entropy(labels3, logits3, dim=1, reduction="mean"), F.cross_entropy(logits3, labels3)
    )
    torch.testing.assert_close(
        softmax_cross_entropy(labels3, logits3, dim=1, reduction="none"),
        F.cross_entropy(logits3, labels3, reduction="none"),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_soft_and_one_hot_labels(device):
    labels, logits = make(device, (6, 4))
    smoothed = labels * 0.9 + 0.1 / 4
    torch.testing.assert_close(
        softmax_cross_entropy(smoothed, logits, reduction="none").double().cpu(),
        reference(smoothed, logits, -1, "none").cpu(),
        rtol=1e-5,
        atol=1e-5,
    )
    y = torch.tensor([0, 3, 1, 2, 2, 0], device=device)
    one_hot = F.one_hot(y, 4)  # int64 labels are accepted
    torch.testing.assert_close(
        softmax_cross_entropy(one_hot, logits, reduction="mean"), F.cross_entropy(logits, y)
    )
    # nothing is broadcast: soft labels of another shape are refused
    uniform = torch.full((4,), 0.25, device=device)
    with pytest.raises(ValueError, match="do not match"):
        softmax_cross_entropy(labels=uniform, logits=logits)
    torch.testing.assert_close(
        softmax_cross_entropy(labels=uniform.expand(6, 4), logits=logits, reduction="none"),
        reference(uniform.expand(6, 4), logits, -1, "none").to(logits.dtype),
    )


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("reduction", ["sum", "mean", "none"])
def test_class_indices_are_handled_like_cross_entropy(device, reduction):
    # [4, 4] logits with [4] labels: broadcasting would silently spread the indices over the classes
    labels, logits = make(device, (4, 4))
    y = torch.tensor([0, 3, 1, 2], device=device)
    torch.testing.assert_close(
        softmax_cross_entropy(labels=y, logits=logits, reduction=reduction),
        F.cross_entropy(logits, y, reduction=reduction),
    )
    # classes on another dim: [N, L, C] logits, [N, L] indices
    _, logits3 = make(device, (2, 5, 3))
    y3 = torch.randint(0, 3, (2, 5), generator=torch.Generator().manual_seed(1)).to(device)
    torch.testing.assert_close(
        softmax_cross_entropy(labels=y3, logits=logits3, dim=-1, reduction=reduction),
        F.cross_entropy(logits3.movedim(-1, 1), y3, reduction=reduction),
    )
    with pytest.raises(ValueError, match="match neither"):
        softmax_cross_entropy(labels=y3[:, :2], logits=logits3, dim=-1)
    with pytest.raises(ValueError, match="class dimension"):
        softmax_cross_entropy(labels=y, logits=logits, dim=None)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", LOW)
def test_half_precision_is_stable_and_keeps_dtype(device, dtype):
    labels, logits = make(device, (16, 10), dtype=dtype, scale=2000.0)
    logits.requires_grad_(True)
    got = softmax_cross_entropy(labels, logits, reduction="none")
    assert got.dtype == dtype and got.device.type == torch.device(device).type
    assert torch.isfinite(got).all()
    want = reference(labels, logits, -1, "none")
    rtol = 2e-3 if dtype == torch.float16 else 1e-2
    torch.testing.assert_close(got.double().cpu(), want.cpu(), rtol=rtol, atol=rtol * 10)
    (grad,) = torch.autograd.grad(got.sum(), logits)
    assert grad.dtype == dtype and torch.isfinite(grad).all()
    # cookbook case in half precision
    half = softmax_cross_entropy(
        torch.tensor([0.5, 0.5], device=device, dtype=dtype), torch.tensor([1000.0, 0.0], device=device, dtype=dtype)
    )
    assert half.item() == pytest.approx(500.0)


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_float64(device):
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(3, 5, generator=gen, dtype=torch.float64).to(device).requires_grad_()
    labels = torch.rand(3, 5, generator=gen, dtype=torch.float64).to(device).requires_grad_()
    for dim, reduction in [(-1, "sum"), (0, "mean"), (1, "none"), (None, "sum")]:
        assert torch.autograd.gradcheck(
            lambda y, x: softmax_cross_entropy(y, x, dim=dim, reduction=reduction), (labels, logits)
        )
    assert torch.autograd.gradgradcheck(lambda y, x: softmax_cross_entropy(y, x), (labels, logits))


@pytest.mark.parametrize("device", DEVICES)
def test_gradient_is_softmax_minus_labels(device):
    labels, logits = make(device, (4, 6), dtype=torch.float64, scale=100.0)
    logits.requires_grad_(True)
    (grad,) = torch.autograd.grad(softmax_cross_entropy(labels, logits), logits)
    expected = torch.softmax(logits.detach(), -1) * labels.sum(-1, keepdim=True) - labels
    torch.testing.assert_close(grad, expected)


def test_bad_arguments():
    x = torch.zeros(2, 3)
    with pytest.raises(ValueError, match="reduction"):
        softmax_cross_entropy(x, x, reduction="max")
    with pytest.raises(TypeError, match="floating"):
        softmax_cross_entropy(x, torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(IndexError, match="out of range"):
        softmax_cross_entropy(x, x, dim=2)
    with pytest.raises(ValueError, match="at least one dimension"):
        softmax_cross_entropy(torch.tensor(1.0), torch.tensor(0.5))


@pytest.mark.parametrize("device", DEVICES)
def test_empty_batch(device):
    x = torch.zeros(0, 4, device=device)
    assert softmax_cross_entropy(x, x).item() == 0.0
    assert softmax_cross_entropy(x, x, reduction="none").shape == (0,)
    assert torch.isnan(softmax_cross_entropy(x, x, reduction="mean"))  # like F.cross_entropy


@pytest.mark.slow
def test_import_torchlint_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, torchlint, torchlint.runtime, torchlint.rules; torchlint.rules.all_rules(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
