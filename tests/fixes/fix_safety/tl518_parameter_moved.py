# fix-safety: codes=TL518 safe=same unsafe=changed
"""A parameter cast after it was made is a plain tensor: it never trains; moved inside, it does."""
import torch
import torch.nn as nn


class Gain(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.body = nn.Linear(n, n).double()
        self.gain = nn.Parameter(torch.ones(n)).double()

    def forward(self, x):
        return self.body(x) * self.gain


torch.manual_seed(0)
model = Gain(3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 3, dtype=torch.float64)
for _ in range(10):
    opt.zero_grad()
    loss = (model(x) - 2 * x).pow(2).mean()
    loss.backward()
    opt.step()
print(sorted(name for name, _ in model.named_parameters()))
print([round(v, 4) for v in model.gain.tolist()])
