# fix-safety: codes=TL206 safe=changed unsafe=changed
"""The Effective PyTorch example: a hand-written softmax cross-entropy is inf for logits [1000, 0]."""
import torch


def softmax(logits):
    exp = torch.exp(logits - torch.max(logits))
    return exp / torch.sum(exp)


def unstable_softmax_cross_entropy(labels, logits):
    logits = torch.log(softmax(logits))
    return -torch.sum(labels * logits)


print(unstable_softmax_cross_entropy(torch.tensor([0.5, 0.5]), torch.tensor([1000.0, 0.0])).item())
torch.manual_seed(0)
y = torch.softmax(torch.randn(4, 3), dim=-1)
x = torch.randn(4, 3)
print(round(unstable_softmax_cross_entropy(y, x).item(), 4))
