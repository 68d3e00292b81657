"""The verify-runtime tables: what they check, how they print, and what they return."""
from __future__ import annotations

import sys
import types

import pytest

torch = pytest.importorskip("torch")

from torchlint.runtime import verify  # noqa: E402

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")
    ),
]


def _loop_free_gather(tensor, indices):
    rows = torch.arange(tensor.size(0), device=tensor.device).unsqueeze(1).expand_as(indices)
    return tensor[rows, indices]


@pytest.fixture
def fake_gather(monkeypatch):
    """A correct batch_gather, whether or not the real one is installed."""
    module = types.ModuleType("torchlint.runtime.gather")
    module.batch_gather = _loop_free_gather
    monkeypatch.setitem(sys.modules, "torchlint.runtime.gather", module)
    return module


@pytest.fixture
def no_gather(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchlint.runtime.gather", None)  # import raises ImportError


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_rows_for_every_function_and_dtype(device, fake_gather):
    rows = verify.check_device(device, speed=False)
    seen = {(r.function, r.dtype) for r in rows}
    for fn in ("softmax_cross_entropy", "batch_gather"):
        for dtype in ("float64", "float32", "float16", "bfloat16"):
            assert (fn, dtype) in seen
    for row in rows:
        assert row.ok, (row, row.notes)
        assert row.max_abs_err is not None and row.max_abs_err <= row.tolerance
    sce64 = [r for r in rows if r.function == "softmax_cross_entropy" and r.dtype == "float64"][0]
    assert sce64.gradcheck is True and sce64.extremes is True
    bg64 = [r for r in rows if r.function == "batch_gather" and r.dtype == "float64"][0]
    assert bg64.gradcheck is True and bg64.max_abs_err == 0.0


@pytest.mark.slow
def test_main_prints_a_table_and_returns_zero(fake_gather, capsys):
    assert verify.main(["cpu"]) == 0
    out = capsys.readouterr().out
    assert "device: cpu" in out
    assert "softmax_cross_entropy" in out and "batch_gather" in out
    assert "vs naive" in out and "gradcheck" in out
    assert "all checks passed" in out
    # the speed column is filled on the float32 rows
    float32_rows = [line for line in out.splitlines() if " float32 " in line]
    assert len(float32_rows) == 2 and all("x " in line for line in float32_rows)


def test_missing_batch_gather_is_shown_and_fails(no_gather, capsys):
    assert verify.main(["cpu"]) == 1
    out = capsys.readouterr().out
    assert "missing" in out
    assert "some checks FAILED" in out


@pytest.mark.slow
def test_a_wrong_implementation_fails(fake_gather, monkeypatch, capsys):
    import torchlint.runtime.cross_entropy as ce

    def unstable(labels, logits, dim=-1, reduction="sum"):
        loss = -(labels * torch.log(torch.softmax(logits, dim=dim))).sum(dim=dim)
        return loss.sum() if reduction == "sum" else loss.mean() if reduction == "mean" else loss

    monkeypatch.setattr(ce, "softmax_cross_entropy", unstable)
    rows = verify.check_device("cpu", speed=False)
    sce = [r for r in rows if r.function == "softmax_cross_entropy"]
    assert any(r.extremes is False for r in sce)
    assert not all(r.ok for r in sce)
    monkeypatch.setattr(verify, "check_device", lambda device, speed=True: rows)
    assert verify.main(["cpu"]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_wrong_gather_is_caught(monkeypatch):
    module = types.ModuleType("torchlint.runtime.gather")
    module.batch_gather = lambda tensor, indices: _loop_free_gather(tensor, indices).flip(1)
    monkeypatch.setitem(sys.modules, "torchlint.runtime.gather", module)
    rows = [r for r in verify.check_device("cpu", speed=False) if r.function == "batch_gather"]
    assert rows and not any(r.ok for r in rows)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_unavailable_device_is_reported(fake_gather, capsys):
    tables = verify.verify(["cuda"], speed=False)
    assert not tables["cuda"][0].ok
    assert verify.main(["cpu", "cuda"]) == 1
    out = capsys.readouterr().out
    assert "device: cpu" in out and "device: cuda" in out and "not available" in out


def test_default_devices():
    devices = verify.available_devices()
    assert devices[0] == "cpu"
    assert ("cuda" in devices) == torch.cuda.is_available()


def test_speed_column_says_faster_or_slower():
    assert verify.speed_cell(3.24) == "3.2x faster"
    assert verify.speed_cell(0.5) == "2.0x slower"
    assert verify.speed_cell(None) == "-"
    row = verify.Row("batch_gather", "float32")
    row.speedup = 0.25
    assert "4.0x slower" in verify.format_table("cpu", [row])


def test_the_torch_build_and_the_device_are_named():
    line = verify.build_line()
    assert line.startswith(f"torch {torch.__version__} (")
    if torch.version.cuda is None and getattr(torch.version, "hip", None) is None:
        assert "CPU-only build" in line
    else:
        assert "build" in line and ("GPU(s) visible" in line or "no GPU usable" in line)
    table = verify.format_table("cpu", [])
    assert table.startswith("device: cpu (") and f"{torch.get_num_threads()} threads" in table
