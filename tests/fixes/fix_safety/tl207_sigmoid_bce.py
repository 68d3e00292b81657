# fix-safety: codes=TL207 safe=changed unsafe=changed
"""binary_cross_entropy(sigmoid(z)): clamps the log at -100 for saturated logits."""
import torch
import torch.nn.functional as F


def bce(z, y):
    return F.binary_cross_entropy(torch.sigmoid(z), y)


print(round(bce(torch.tensor([-200.0, 1.0]), torch.tensor([1.0, 0.0])).item(), 4))
