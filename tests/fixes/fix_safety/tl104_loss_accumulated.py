# fix-safety: codes=TL104 safe=same unsafe=same
"""A running total of loss tensors keeps every iteration's graph alive; .item() gives the same numbers."""
import torch


torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
total = 0
for step in range(5):
    x = torch.randn(4, 3)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    total += loss
print(round(float(total), 4))
