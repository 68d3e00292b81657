# fix-safety: codes=TL102 safe=changed unsafe=changed
"""zero_grad() between backward() and step(): the step sees no gradient and the model never learns."""
import torch


torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for epoch in range(3):
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.zero_grad()
    opt.step()
print(round(torch.nn.functional.mse_loss(model(x), y).item(), 4))
