# fix-safety: codes=TL103 safe=changed unsafe=changed
"""F.cross_entropy applies log_softmax itself: feeding it probabilities squashes the loss."""
import torch
import torch.nn.functional as F


def loss_fn(logits, target):
    return F.cross_entropy(torch.softmax(logits, dim=-1), target)


torch.manual_seed(0)
print(round(loss_fn(torch.randn(4, 3) * 5, torch.tensor([0, 1, 2, 1])).item(), 4))
