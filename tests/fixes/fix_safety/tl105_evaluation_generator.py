# fix-safety: codes=TL105 safe=same unsafe=same
"""Evaluation written as a generator: `@torch.no_grad()` turns gradients off while it runs and gives the
consumer its own mode back at every `yield`, so the training step between two batches still trains."""
import torch
import torch.nn as nn


def evaluate_batches(model, loader):
    for x, y in loader:
        yield (model(x).argmax(1) == y).float().mean().item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
for accuracy in evaluate_batches(model, loader):
    print(round(accuracy, 4))
    x, y = loader[0]
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()  # the consumer trains between batches
    optimizer.step()
print(round(sum(p.sum().item() for p in model.parameters()), 4))
