# fix-safety: absent=TL105,TL106 safe=same unsafe=same
"""An epoch whose backward pass runs inside a loss-scaler object (its `__call__` scales the loss,
runs backward and steps the optimizer): it trains, so no fix may turn gradients off around it."""
import torch
import torch.nn as nn


class LossScaler:
    def __call__(self, loss, optimizer, parameters=None):
        (loss * 1.0).backward()
        optimizer.step()


def validate_epoch(model, loader, optimizer, loss_scaler):
    model.train()
    correct = 0
    for x, y in loader:
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, parameters=model.parameters())
        correct += (out.argmax(1) == y).sum().item()
    return correct


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
print(validate_epoch(model, loader, optimizer, LossScaler()))
print(round(sum(p.sum().item() for p in model.parameters()), 4))
