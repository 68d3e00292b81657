# fix-safety: codes=TL201 safe=changed unsafe=changed
"""softmax written as exp(x) / exp(x).sum(): nan for large logits."""
import torch


def normalize(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)


print([round(v, 4) for v in normalize(torch.tensor([[1000.0, 0.0, -5.0]])).flatten().tolist()])
print([round(v, 4) for v in normalize(torch.tensor([[1.0, 2.0, 3.0]])).flatten().tolist()])
