# fix-safety: safe=same unsafe=same
"""A hand-written optimizer that clears the gradients itself: it has no zero_grad()."""
import torch


class PlainSGD:
    def __init__(self, params, lr):
        self.params = list(params)
        self.lr = lr

    def step(self):
        with torch.no_grad():
            for p in self.params:
                p -= self.lr * p.grad
                p.grad = None


torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = PlainSGD(model.parameters(), lr=0.1)
x, y = torch.randn(16, 3), torch.randn(16, 1)
for epoch in range(5):
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
print(round(loss.item(), 4))
