"""``torchlint verify-runtime``: check the runtime functions on this machine's devices.

For each device (cpu, and cuda when available) and each function of :mod:`torchlint.runtime`, one row
per dtype:

- ``max abs err``: the largest absolute difference from a float64 reference computed from the same
  inputs, and whether it is within the dtype's tolerance;
- ``extremes``: softmax cross-entropy on the cookbook's logits ``[1000., 0.]`` with labels ``[.5, .5]``
  must give 500 and gradient ``[.5, -.5]``, and stay finite for logits spread over thousands;
- ``gradcheck``: ``torch.autograd.gradcheck`` in float64 (reported on the float64 row);
- ``vs naive``: how many times faster (``3.2x faster``) or slower (``1.5x slower``) than the naive
  version (the cookbook's unstable formula for the cross-entropy, the Python loop for ``batch_gather``),
  timed in float32 (fastest of 20 runs each, on
  one thread on CPU).

:func:`main` prints one table per device and returns 0 when every check passes, 1 otherwise.
"""
from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

import torch

__all__ = ["Row", "check_device", "verify", "format_table", "main", "available_devices"]

DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
# relative tolerance on the result (output dtype rounding, plus float32 accumulation)
_TOLERANCE = {torch.float64: 1e-10, torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


@dataclass
class Row:
    function: str
    dtype: str
    max_abs_err: Optional[float] = None
    tolerance: Optional[float] = None
    extremes: Optional[bool] = None
    gradcheck: Optional[bool] = None
    speedup: Optional[float] = None
    notes: List[str] = field(default_factory=list)
    missing: bool = False

    @property
    def ok(self) -> bool:
        if self.missing or self.notes and any(n.startswith("error") for n in self.notes):
            return False
        if self.max_abs_err is not None and self.tolerance is not None and not self.max_abs_err <= self.tolerance:
            return False
        return self.extremes is not False and self.gradcheck is not False


def available_devices() -> List[str]:
    devices = ["cpu"]
    if torch.cuda.is_available():
        devices.append("cuda")
    return devices


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(device)


def _time(fn: Callable[[], object], device: str, repeat: int = 20) -> float:
    """Fastest wall time of ``fn`` over ``repeat`` runs (after warm-up), synchronising the device.

    On CPU the timing runs on one thread: on a machine busy with other work, a multi-threaded kernel
    waits for a second core for a whole scheduler tick (milliseconds), which would say more about the
    machine's load than about the code.  One thread compares the work each version does."""
    threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)
    try:
        for _ in range(3):
            fn()
        _sync(device)
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            _sync(device)
            best = min(best, time.perf_counter() - start)
        return best
    finally:
        torch.set_num_threads(threads)


# -- softmax cross-entropy -------------------------------------------------------------------------
def _sce_reference(labels: torch.Tensor, logits: torch.Tensor, dim: int) -> torch.Tensor:
    x = logits.double()
    y = labels.double()
    return -(y * (x - torch.logsumexp(x, dim=dim, keepdim=True))).sum(dim=dim)


def _naive_sce(labels: torch.Tensor, logits: torch.Tensor, dim: int) -> torch.Tensor:
    return -torch.sum(labels * torch.log(torch.softmax(logits, dim=dim)), dim=dim)  # noqa: TL206 - the naive formula on purpose: the reference verify-runtime compares against


def _check_sce(device: str, speed: bool) -> List[Row]:
    from torchlint.runtime.cross_entropy import softmax_cross_entropy

    gen = torch.Generator(device="cpu").manual_seed(0)
    rows = []
    for dtype in DTYPES:
        row = Row("softmax_cross_entropy", _name(dtype), tolerance=None)
        try:
            logits = (torch.randn(64, 33, generator=gen) * 8).to(device=device, dtype=dtype)
            labels = torch.softmax(torch.randn(64, 33, generator=gen), dim=-1).to(device=device, dtype=dtype)
            got = softmax_cross_entropy(labels, logits, dim=-1, reduction="none")
            ref = _sce_reference(labels, logits, -1)
            err = (got.double() - ref).abs().max().item()
            row.max_abs_err = err
            row.tolerance = _TOLERANCE[dtype] * max(1.0, ref.abs().max().item())
            if got.dtype != dtype or got.device.type != torch.device(device).type:
                row.notes.append(f"error: returned {got.dtype} on {got.device}")
            row.extremes = _sce_extremes(softmax_cross_entropy, device, dtype, gen)
            if dtype == torch.float64:
                row.gradcheck = _sce_gradcheck(softmax_cross_entropy, device, gen)
            if speed and dtype == torch.float32:
                row.speedup = _sce_speed(softmax_cross_entropy, device, gen)
        except Exception as exc:  # report, never crash the table
            row.notes.append(f"error: {type(exc).__name__}: {exc}")
        rows.append(row)
    return rows


def _sce_extremes(fn: Callable, device: str, dtype: torch.dtype, gen: torch.Generator) -> bool:
    labels = torch.tensor([0.5, 0.5], device=device, dtype=dtype)
    logits = torch.tensor([1000.0, 0.0], device=device, dtype=dtype, requires_grad=True)
    loss = fn(labels, logits)
    (grad,) = torch.autograd.grad(loss, logits)
    ok = abs(loss.double().item() - 500.0) <= 500.0 * _TOLERANCE[dtype] * 4
    ok = ok and torch.allclose(grad.double().cpu(), torch.tensor([0.5, -0.5], dtype=torch.float64), atol=1e-2)
    # logits spread over thousands (within float16 range), soft labels on every class
    wide = ((torch.rand(16, 10, generator=gen) - 0.5) * 8000).to(device=device, dtype=dtype).requires_grad_()
    soft = torch.softmax(torch.randn(16, 10, generator=gen), -1).to(device=device, dtype=dtype)
    out = fn(soft, wide, dim=-1, reduction="mean")
    (g,) = torch.autograd.grad(out, wide)
    return bool(ok and torch.isfinite(out).all().item() and torch.isfinite(g).all().item())


def _sce_gradcheck(fn: Callable, device: str, gen: torch.Generator) -> bool:
    logits = torch.randn(4, 5, generator=gen, dtype=torch.float64).to(device).requires_grad_()
    labels = torch.rand(4, 5, generator=gen, dtype=torch.float64).to(device).requires_grad_()
    ok = torch.autograd.gradcheck(lambda y, x: fn(y, x, dim=-1, reduction="none"), (labels, logits))
    ok = ok and torch.autograd.gradcheck(lambda y, x: fn(y, x, dim=0, reduction="mean"), (labels, logits))
    ok = ok and torch.autograd.gradcheck(lambda y, x: fn(y, x, dim=None), (labels, logits))
    return bool(ok)


def _sce_speed(fn: Callable, device: str, gen: torch.Generator) -> float:
    n, c = (256, 1000) if device == "cpu" else (4096, 32000)
    logits = torch.randn(n, c, generator=gen).to(device).requires_grad_()
    labels = torch.softmax(torch.randn(n, c, generator=gen), -1).to(device)

    def ours() -> None:
        fn(labels, logits, dim=-1).backward()

    def naive() -> None:
        _naive_sce(labels, logits, -1).sum().backward()

    return _time(naive, device) / _time(ours, device)


# -- batch_gather ----------------------------------------------------------------------------------
def _naive_gather(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    return torch.stack([tensor[i][indices[i]] for i in range(tensor.size(0))])  # noqa: TL302 - the naive loop on purpose: the reference verify-runtime compares against


def _check_gather(device: str, speed: bool) -> List[Row]:
    try:
        from torchlint.runtime.gather import batch_gather
    except ImportError:
        row = Row("batch_gather", "-", missing=True)
        row.notes.append("missing: torchlint.runtime.gather.batch_gather is not available")
        return [row]
    gen = torch.Generator(device="cpu").manual_seed(1)
    rows = []
    for dtype in DTYPES:
        row = Row("batch_gather", _name(dtype), tolerance=0.0)
        try:
            tensor = torch.randn(8, 12, 3, 2, generator=gen).to(device=device, dtype=dtype)
            indices = torch.randint(0, 12, (8, 5), generator=gen).to(device)
            got = batch_gather(tensor, indices)
            ref = _naive_gather(tensor.double(), indices)
            if got.shape != ref.shape:
                row.notes.append(f"error: shape {tuple(got.shape)}, expected {tuple(ref.shape)}")
            else:
                row.max_abs_err = (got.double() - ref).abs().max().item()
            if got.dtype != dtype or got.device.type != torch.device(device).type:
                row.notes.append(f"error: returned {got.dtype} on {got.device}")
            if dtype == torch.float64:
                t = torch.randn(4, 6, 3, generator=gen, dtype=torch.float64).to(device).requires_grad_()
                idx = torch.randint(0, 6, (4, 2), generator=gen).to(device)
                row.gradcheck = bool(torch.autograd.gradcheck(lambda a: batch_gather(a, idx), (t,)))
            if speed and dtype == torch.float32:
                big = torch.randn(512, 64, 32, generator=gen).to(device)
                big_idx = torch.randint(0, 64, (512, 8), generator=gen).to(device)
                row.speedup = _time(lambda: _naive_gather(big, big_idx), device) / _time(
                    lambda: batch_gather(big, big_idx), device
                )
        except Exception as exc:
            row.notes.append(f"error: {type(exc).__name__}: {exc}")
        rows.append(row)
    return rows


# -- tables ----------------------------------------------------------------------------------------
def check_device(device: str, speed: bool = True) -> List[Row]:
    """Every check for one device."""
    return _check_sce(device, speed) + _check_gather(device, speed)


def verify(devices: Optional[Sequence[str]] = None, speed: bool = True) -> Dict[str, List[Row]]:
    """Rows per device; a requested device that is not available gets one failing row."""
    result: Dict[str, List[Row]] = {}
    for device in devices or available_devices():
        try:
            torch.empty(1, device=device)
        except Exception as exc:
            row = Row("-", "-", missing=True)
            row.notes.append(f"device not available: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            result[device] = [row]
            continue
        result[device] = check_device(device, speed)
    return result


def _fmt(value: Optional[object]) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "pass" if value else "FAIL"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.2e}"
    return str(value)


def speed_cell(speedup: Optional[float]) -> str:
    """``vs naive``: the ratio of the naive version's time to ours, said as faster or slower."""
    if speedup is None or not math.isfinite(speedup) or speedup <= 0:
        return "-"
    if speedup >= 1:
        return f"{speedup:.1f}x faster"
    return f"{1 / speedup:.1f}x slower"


def format_table(device: str, rows: Sequence[Row]) -> str:
    header = ["function", "dtype", "max abs err", "tolerance", "extremes", "gradcheck", "vs naive", "status"]
    lines = [header]
    notes: List[str] = []
    for row in rows:
        speed = speed_cell(row.speedup)
        status = "missing" if row.missing else ("ok" if row.ok else "FAIL")
        lines.append(
            [row.function, row.dtype, _fmt(row.max_abs_err), _fmt(row.tolerance), _fmt(row.extremes),
             _fmt(row.gradcheck), speed, status]
        )
        notes.extend(f"  {row.function} {row.dtype}: {n}" for n in row.notes)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    if device.startswith("cuda") and torch.cuda.is_available():
        where = f" ({torch.cuda.get_device_name(device)})"
    elif device == "cpu":
        where = f" ({platform.machine() or 'unknown machine'}, {torch.get_num_threads()} threads)"
    else:
        where = ""
    out = [f"device: {device}{where}"]
    for i, line in enumerate(lines):
        out.append("  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip())
        if i == 0:
            out.append("  ".join("-" * w for w in widths))
    out.extend(notes)
    return "\n".join(out)


def build_line() -> str:
    """Which torch build runs the checks: its version and what it was built for (CPU only, a CUDA or
    ROCm version), and whether that accelerator is usable here."""
    cuda = getattr(torch.version, "cuda", None)
    hip = getattr(torch.version, "hip", None)
    if hip:
        kind = f"ROCm {hip} build"
    elif cuda:
        kind = f"CUDA {cuda} build"
    else:
        kind = "CPU-only build"
    if cuda or hip:
        kind += (f", {torch.cuda.device_count()} GPU(s) visible" if torch.cuda.is_available()
                 else ", no GPU usable here")
    return f"torch {torch.__version__} ({kind})"


def main(devices: Optional[Sequence[str]] = None) -> int:
    """Print the torch build, then one table per device; 0 when every check passes, 1 otherwise."""
    tables = verify(devices)
    ok = True
    print(build_line())
    print()
    for i, (device, rows) in enumerate(tables.items()):
        if i:
            print()
        print(format_table(device, rows))
        ok = ok and all(row.ok for row in rows)
    print()
    print("all checks passed" if ok else "some checks FAILED")
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
