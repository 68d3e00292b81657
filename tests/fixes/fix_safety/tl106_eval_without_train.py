# fix-safety: codes=TL106 safe=same unsafe=changed
"""An evaluation helper without model.eval(), and a training helper that never calls model.train():
adding eval() alone would train every later epoch in eval mode (the asserts catch that)."""
import torch


def train_epoch(model, opt, x, y):
    assert model.training, "training in eval mode"
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()


def evaluate(model, x, y):
    with torch.no_grad():
        return torch.nn.functional.mse_loss(model(x), y).item()


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(32, 3), torch.randn(32, 1)
for epoch in range(2):
    train_epoch(model, opt, x, y)
    first, second = evaluate(model, x, y), evaluate(model, x, y)
print("evaluation deterministic:", first == second)
