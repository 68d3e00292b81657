# fix-safety: codes=TL301 safe=same unsafe=same
"""A row-wise accumulation loop and its one-call replacement."""
import torch


def total(x):
    acc = torch.zeros(x.size(1))
    for i in range(x.size(0)):
        acc += x[i]
    return acc


torch.manual_seed(0)
print([round(v, 4) for v in total(torch.randn(5, 3)).tolist()])
