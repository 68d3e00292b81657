# fix-safety: codes=TL105 safe=same unsafe=same
"""A script (or a notebook's cells) that trains, then predicts at module level: the prediction runs with
autograd on. Wrapping the prediction statement and the sampling loop in `torch.no_grad()` changes no
printed value; a later fine-tuning step on a fresh output still trains."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
features = torch.randn(64, 4)
targets = (features.sum(dim=1) > 0).long()
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
for epoch in range(20):
    logits = model(features)
    loss = F.cross_entropy(logits, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

model.eval()
logits = model(features[:5])
print(logits.argmax(dim=1).tolist(), round(float(logits.sum()), 4))

for i in range(2):
    sample = model(torch.ones(1, 4) * i)
    print(sample.softmax(dim=1).round(decimals=4).tolist())

model.train()
out = model(features)
F.cross_entropy(out, targets).backward()
print(round(float(model[0].weight.grad.abs().sum()), 4))
