# fix-safety: absent=TL105 safe=same unsafe=same
"""An evaluation-looking loop that hands each loss to a closure it was given; the closure runs the
backward pass.  Turning gradients off around the loop would make that backward raise."""
import torch
import torch.nn as nn


def make_step(optimizer):
    def step(loss, opt):
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def evaluate(model, loader, step, optimizer):
    correct = 0
    for x, y in loader:
        out = model(x)
        step(nn.functional.cross_entropy(out, y), optimizer)
        correct += (out.argmax(1) == y).sum().item()
    return correct


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
print(evaluate(model, loader, make_step(optimizer), optimizer))
print(round(sum(p.sum().item() for p in model.parameters()), 4))
