# fix-safety: codes=TL303 safe=same unsafe=same
"""Indexing x[i] row by row in a loop."""
import torch


def norms(x: torch.Tensor):
    out = []
    for i in range(x.size(0)):
        out.append(torch.linalg.norm(x[i]))
    return torch.stack(out)


torch.manual_seed(0)
print([round(v, 4) for v in norms(torch.randn(4, 3)).tolist()])
