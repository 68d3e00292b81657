# fix-safety: codes=TL206 safe=same unsafe=same
"""Soft labels that broadcast (a class prior [C] against logits [N, C]): the fix keeps the expression,
so it keeps the broadcast; on ordinary logits the values are the same."""
import torch
import torch.nn.functional as F


def prior_loss(prior, logits):
    p = F.softmax(logits, dim=1)
    return -(prior * torch.log(p)).sum(dim=1).mean()


torch.manual_seed(0)
prior = torch.tensor([0.7, 0.2, 0.1])
print(round(prior_loss(prior, torch.randn(5, 3)).item(), 4))
