# fix-safety: codes=TL203 safe=changed unsafe=changed
"""log(sum(exp(x))) by hand: inf for large values."""
import torch


def log_partition(scores):
    return torch.log(torch.sum(torch.exp(scores), dim=1))


print(log_partition(torch.tensor([[1000.0, 999.0], [1.0, 2.0]])).tolist())
