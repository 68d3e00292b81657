"""Speed of torchlint.runtime.batch_gather against the loop it replaces and against the built-ins.

    python benchmarks/bench_gather.py [--device cpu|cuda] [--backward] [--threads N]

Each row is one problem size; each column the median time of one call (milliseconds), measured with
torch.utils.benchmark:

- loop:            Effective PyTorch's loop, `output += [tensor[i][indices[i]]]` + `torch.stack`
- batch_gather:    torchlint.runtime.batch_gather (one advanced-indexing op)
- flat offset:     the cookbook's vectorized version (flatten, add row offsets), device-corrected
- torch.gather:    `torch.gather(tensor, 1, indices)` with indices expanded over trailing dims
- take_along_dim:  `torch.take_along_dim(tensor, indices[..., None, ...], dim=1)`

torch.gather and take_along_dim only express the case of one flat index set per row ([B, K] indices);
they are shown as "-" otherwise.  `--backward` times forward + backward of `out.sum()`.
"""
from __future__ import annotations

import argparse
from typing import Callable, Dict, List, Optional, Tuple

import torch
import torch.utils.benchmark as benchmark

from torchlint.runtime import batch_gather


def loop(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    output = []
    for i in range(tensor.size(0)):  # noqa: TL302 - the naive loop on purpose: what the benchmark measures against
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


def flat_offset(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    shape = list(tensor.shape)
    flat_first = torch.reshape(tensor, [shape[0] * shape[1]] + shape[2:])
    offset = torch.reshape(
        torch.arange(shape[0], device=tensor.device) * shape[1], [shape[0]] + [1] * (len(indices.shape) - 1)
    )
    return flat_first[indices + offset]


def gather_builtin(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    rest = tensor.shape[2:]
    idx = indices.reshape(indices.shape + (1,) * len(rest)).expand(indices.shape + rest)
    return torch.gather(tensor, 1, idx)


def take_along(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    rest = tensor.shape[2:]
    return torch.take_along_dim(tensor, indices.reshape(indices.shape + (1,) * len(rest)), dim=1)


METHODS: List[Tuple[str, Callable, bool]] = [
    ("loop", loop, True),
    ("batch_gather", batch_gather, True),
    ("flat offset", flat_offset, True),
    ("torch.gather", gather_builtin, False),  # False: only [B, K] indices
    ("take_along_dim", take_along, False),
]

# (label, tensor shape, indices shape after B)
CASES = [
    ("B=32   N=100  idx[B]", (32, 100), ()),
    ("B=256  N=128  idx[B,32]", (256, 128), (32,)),
    ("B=1024 N=64   idx[B,8]", (1024, 64), (8,)),
    ("B=64   N=512  D=64 idx[B,16]", (64, 512, 64), (16,)),
    ("B=128  N=50   idx[B,4,6]", (128, 50), (4, 6)),
]


def time_one(fn: Callable, tensor: torch.Tensor, indices: torch.Tensor, backward: bool) -> float:
    if backward:
        leaf = tensor.detach().clone().requires_grad_(True)

        def run() -> None:
            fn(leaf, indices).sum().backward()
            leaf.grad = None

    else:

        def run() -> None:
            fn(tensor, indices)

    timer = benchmark.Timer(stmt="run()", globals={"run": run})
    return timer.blocked_autorange(min_run_time=0.4).median * 1e3


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--backward", action="store_true", help="time forward + backward")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(0)
    mode = "forward + backward" if args.backward else "forward"
    print(f"batch gather, {mode}, device={device}, threads={torch.get_num_threads()}, torch {torch.__version__}")
    print("median ms per call (speed-up of batch_gather over the loop in the last column)")
    header = f"{'case':<30}" + "".join(f"{name:>16}" for name, _, _ in METHODS) + f"{'loop/bg':>10}"
    print(header)
    print("-" * len(header))
    for label, shape, idx_shape in CASES:
        tensor = torch.randn(shape, device=device)
        indices = torch.randint(0, shape[1], (shape[0],) + idx_shape, device=device)
        expected = loop(tensor, indices)
        row: Dict[str, Optional[float]] = {}
        for name, fn, general in METHODS:
            if not general and len(idx_shape) != 1:
                row[name] = None
                continue
            if not torch.equal(fn(tensor, indices), expected):
                raise AssertionError(f"{name} disagrees with the loop on {label}")
            row[name] = time_one(fn, tensor, indices, args.backward)
        cells = "".join(f"{'-':>16}" if row[n] is None else f"{row[n]:>16.4f}" for n, _, _ in METHODS)
        speedup = row["loop"] / row["batch_gather"]  # type: ignore[operator]
        print(f"{label:<30}{cells}{speedup:>9.0f}x")


if __name__ == "__main__":
    main()
