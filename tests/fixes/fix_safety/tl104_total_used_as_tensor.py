# fix-safety: codes=TL104 safe=same unsafe=same
"""A running total of losses that is used as a tensor afterwards: `.detach()` keeps it one (`.item()`
would turn it into a float, and `total.detach()` / `torch.cat` on it would fail)."""
import torch


torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
history = [torch.zeros(())]
total = 0
for step in range(5):
    x = torch.randn(4, 3)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss
snapshot = total.detach()
print(torch.cat([torch.stack(history), snapshot[None]]).round(decimals=4).tolist())
