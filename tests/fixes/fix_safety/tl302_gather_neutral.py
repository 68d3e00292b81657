# fix-safety: codes=TL302 safe=same unsafe=same
"""Batch gathers written as loops and comprehensions: the vectorized fix gives the same values and
gradients."""
import torch


def label_scores(scores, labels):
    return torch.stack([scores[b][labels[b]] for b in range(scores.size(0))])


def first_n(x, idx, n):
    x = torch.as_tensor(x)
    return torch.stack([x[i][idx[i]] for i in range(n)])


def select_tokens(hidden: torch.Tensor, positions):
    picked = []
    for b in range(hidden.shape[0]):
        picked.append(hidden[b, positions[b]])
    out = torch.stack(picked, dim=0)
    return out


def show(t):
    return [round(v, 4) for v in t.flatten().tolist()]


torch.manual_seed(0)
scores = torch.randn(4, 7, requires_grad=True)
labels = torch.tensor([6, 0, 3, 3])
out = label_scores(scores, labels)
out.sum().backward()
print(show(out), show(scores.grad))
print(show(first_n(torch.randn(6, 3, 2), torch.tensor([[0, 1], [2, 2], [1, 0], [0, 0], [1, 1], [2, 0]]), 4)))
hidden = torch.randn(2, 5, 3)
print(show(select_tokens(hidden, torch.tensor([[4, 0, 1], [2, 2, 3]]))), tuple(select_tokens(hidden, torch.tensor([1, 2])).shape))
