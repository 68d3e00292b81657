"""Speed of torchlint.runtime.softmax_cross_entropy against F.cross_entropy with probability targets
and against the naive `-sum(labels * log(softmax(logits)))`.

    python benchmarks/bench_cross_entropy.py [--device cpu|cuda] [--repeat 30] [--threads N]

Each row times forward alone and forward + backward on the same inputs.  The three implementations are
run interleaved, so that load on the machine affects them alike; the table shows the median and the
fastest run.  The last column compares the fastest runs (the least disturbed by other load) with
F.cross_entropy's: 1.00 = as fast, below 1 = faster.  On a CPU shared with other work, ``--threads 1``
gives steadier numbers (a multi-threaded kernel otherwise waits for a second core now and then).
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F

from torchlint.runtime import softmax_cross_entropy

SHAPES_CPU = [(64, 10), (256, 1000), (4096, 1000), (32, 50257)]
SHAPES_CUDA = [(256, 1000), (4096, 1000), (8192, 32000), (32768, 50257)]


def naive(labels: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    return -torch.sum(labels * torch.log(torch.softmax(logits, dim=1))) / logits.shape[0]  # noqa: TL206 - the naive formula on purpose: what the benchmark measures against


def ours(labels: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    return softmax_cross_entropy(labels, logits, dim=1, reduction="mean")


def reference(labels: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits, labels)


IMPLS: Dict[str, Callable] = {
    "softmax_cross_entropy": ours,
    "F.cross_entropy(probs)": reference,
    "naive": naive,
}


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run(device: str, shape, dtype: torch.dtype, repeat: int, backward: bool) -> Dict[str, List[float]]:
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(*shape, generator=gen).to(device=device, dtype=dtype).requires_grad_(backward)
    labels = torch.softmax(torch.randn(*shape, generator=gen), dim=1).to(device=device, dtype=dtype)

    def step(fn: Callable) -> None:
        out = fn(labels, logits)
        if backward:
            out.backward()
            logits.grad = None

    for fn in IMPLS.values():  # warm-up
        for _ in range(3):
            step(fn)
    sync(device)
    times: Dict[str, List[float]] = {name: [] for name in IMPLS}
    for _ in range(repeat):
        for name, fn in IMPLS.items():
            start = time.perf_counter()
            step(fn)
            sync(device)
            times[name].append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16", "float64"])
    parser.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's choice)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype)
    shapes = SHAPES_CUDA if args.device.startswith("cuda") else SHAPES_CPU
    name = torch.cuda.get_device_name() if args.device.startswith("cuda") else f"cpu, {torch.get_num_threads()} threads"
    print(f"device: {args.device} ({name}), dtype: {args.dtype}, torch {torch.__version__}, median of {args.repeat}")
    header = f"{'shape':>14}  {'pass':<8}  {'implementation':<24}  {'median ms':>10}  {'min ms':>9}  {'vs F.ce':>7}"
    print(header)
    print("-" * len(header))
    for shape in shapes:
        for backward in (False, True):
            times = run(args.device, shape, dtype, args.repeat, backward)
            base = min(times["F.cross_entropy(probs)"])
            for impl, values in times.items():
                med = statistics.median(values)
                print(
                    f"{str(shape):>14}  {'fwd+bwd' if backward else 'fwd':<8}  {impl:<24}  "
                    f"{med * 1e3:>10.3f}  {min(values) * 1e3:>9.3f}  {min(values) / base:>7.2f}"
                )
        print()


if __name__ == "__main__":
    main()
