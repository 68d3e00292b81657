# fix-safety: safe=same unsafe=same
"""A helper that looks like evaluation, but whose result the caller trains on."""
import torch


def evaluate(model, x, y):
    model.eval()
    pred = model(x)
    return torch.nn.functional.mse_loss(pred, y)


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for step in range(3):
    opt.zero_grad()
    loss = evaluate(model, x, y)
    loss.backward()
    opt.step()
print(round(loss.item(), 4))
