"""torchlint.runtime.batch_gather against the loop it replaces, on every available device."""
from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from torchlint.engine import Settings, lint_source  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402
from torchlint.runtime import batch_gather  # noqa: E402

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")),
]


def loop_gather(tensor, indices):
    """The reference: Effective PyTorch's loop."""
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


def _data(device, batch, n, rest, idx_shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    tensor = torch.randn((batch, n) + tuple(rest), generator=g, dtype=torch.float64).to(device=device, dtype=dtype)
    indices = torch.randint(-n, n, (batch,) + tuple(idx_shape), generator=g).to(device)
    return tensor, indices


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rest", [(), (3, 2)], ids=["tensor[B,N]", "tensor[B,N,D,E]"])
@pytest.mark.parametrize("idx_shape", [(), (4,), (4, 5)], ids=["idx[B]", "idx[B,K]", "idx[B,K,M]"])
def test_matches_the_loop_in_float64(device, rest, idx_shape):
    tensor, indices = _data(device, 6, 7, rest, idx_shape)
    expected = loop_gather(tensor, indices)
    got = batch_gather(tensor, indices)
    assert got.shape == expected.shape == (6,) + idx_shape + rest
    assert torch.equal(got, expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.int64, torch.bool])
def test_dtype_and_device_preserved(device, dtype):
    tensor, indices = _data(device, 3, 5, (2,), (4,), dtype=dtype)
    got = batch_gather(tensor, indices)
    assert got.dtype == dtype
    assert got.device == tensor.device
    assert torch.equal(got, loop_gather(tensor, indices))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rest", [(), (3,)], ids=["tensor[B,N]", "tensor[B,N,D]"])
def test_gradients_match_the_loop_and_pass_gradcheck(device, rest):
    tensor, indices = _data(device, 4, 6, rest, (5,))
    a = tensor.clone().requires_grad_(True)
    b = tensor.clone().requires_grad_(True)
    weights = torch.randn((4, 5) + rest, dtype=torch.float64, device=device)
    (batch_gather(a, indices) * weights).sum().backward()
    (loop_gather(b, indices) * weights).sum().backward()
    assert torch.allclose(a.grad, b.grad)
    # repeated indices accumulate, like the loop
    assert torch.autograd.gradcheck(lambda t: batch_gather(t, indices), (tensor.clone().requires_grad_(True),))


@pytest.mark.parametrize("device", DEVICES)
def test_indices_as_list_int32_or_on_the_cpu(device):
    tensor, indices = _data(device, 3, 5, (), (2,))
    expected = loop_gather(tensor, indices)
    assert torch.equal(batch_gather(tensor, indices.tolist()), expected)
    assert torch.equal(batch_gather(tensor, indices.to(torch.int32)), expected)
    got = batch_gather(tensor, indices.cpu())
    assert got.device == tensor.device and torch.equal(got, expected)


@pytest.mark.parametrize("device", DEVICES)
def test_boolean_mask_selecting_equal_counts(device):
    tensor = torch.arange(24.0, device=device).view(3, 4, 2)
    mask = torch.tensor([[1, 0, 1, 0], [0, 1, 1, 0], [1, 1, 0, 0]], dtype=torch.bool, device=device)
    assert torch.equal(batch_gather(tensor, mask), loop_gather(tensor, mask))
    ragged = mask.clone()
    ragged[0, 3] = True
    with pytest.raises(ValueError):
        batch_gather(tensor, ragged)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_batch_and_empty_selection(device):
    tensor = torch.randn(0, 5, 2, device=device)
    assert batch_gather(tensor, torch.zeros(0, 3, dtype=torch.long, device=device)).shape == (0, 3, 2)
    tensor = torch.randn(2, 5, device=device)
    assert batch_gather(tensor, torch.zeros(2, 0, dtype=torch.long, device=device)).shape == (2, 0)


def test_bad_inputs_raise():
    t = torch.randn(3, 4)
    with pytest.raises(TypeError):
        batch_gather([[1.0]], [0])
    with pytest.raises(ValueError):
        batch_gather(torch.randn(3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError):
        batch_gather(t, torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError):
        batch_gather(t, torch.tensor(1))
    with pytest.raises(TypeError):
        batch_gather(t, torch.zeros(3))
    with pytest.raises(IndexError):
        batch_gather(t, torch.full((3,), 4))


@settings(max_examples=60, deadline=None)
@given(
    batch=st.integers(1, 5),
    n=st.integers(1, 6),
    rest=st.lists(st.integers(1, 3), max_size=2),
    idx_shape=st.lists(st.integers(0, 3), max_size=2),
    seed=st.integers(0, 2**16),
)
def test_property_equals_loop(batch, n, rest, idx_shape, seed):
    tensor, indices = _data("cpu", batch, n, rest, idx_shape, seed=seed)
    assert torch.equal(batch_gather(tensor, indices), loop_gather(tensor, indices))


# -- the TL302 fix computes what the loop computed ----------------------------------------------
def _tl302():
    return next(r for r in all_rules() if r.CODE == "TL302")


FIX_CASES = [c for c in _tl302().INVALID if c.fixed is not None]
FIXTURE = '''
import torch

def gather_rows(scores, labels):
    picked = []
    for b in range(scores.shape[0]):
        picked.append(scores[b, labels[b]])
    return torch.stack(picked)

def gather_rows_comprehension(scores, labels):
    return torch.stack([scores[b][labels[b]] for b in range(scores.size(0))])
'''


def _fixed(code, options=None):
    settings = Settings(rules=[_tl302()], options=options or {}, fix=True, unsafe_fixes=True)
    result = lint_source("case.py", code, settings)
    assert not result.errors
    assert result.fixed_source is not None and result.fixed_source != code
    return result.fixed_source


def _functions(code):
    namespace = {}
    exec(compile(code, "case.py", "exec"), namespace)
    names = re.findall(r"^def (\w+)\(", code, flags=re.MULTILINE)
    return {n: namespace[n] for n in names}


def _call(fn, name, device):
    tensor, indices = _data(device, 5, 6, (3,), (2,), seed=len(name))
    if name == "first_n":
        return fn(tensor, indices, 3)
    if name == "select_tokens":
        return fn(tensor, indices)
    return fn(tensor, indices)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("code", [c.code for c in FIX_CASES] + [FIXTURE], ids=lambda c: c.strip().split("\n")[-1][:30])
def test_fix_keeps_the_result(device, code):
    before, after = _functions(code), _functions(_fixed(code))
    assert before.keys() == after.keys() and before
    for name in before:
        expected = _call(before[name], name, device)
        got = _call(after[name], name, device)
        assert got.device == expected.device and got.dtype == expected.dtype
        assert torch.equal(got, expected), name


def test_fixed_code_calls_the_runtime():
    fixed = _fixed(FIXTURE, {"runtime-fixes": "runtime"})
    assert fixed.count("return batch_gather(scores, labels)") == 2
    assert fixed.count("from torchlint.runtime import batch_gather\n") == 1  # one import for both fixes
    assert "for b in" not in fixed
