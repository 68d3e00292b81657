# fix-safety: codes=TL105,TL106 safe=same unsafe=changed
"""A script that trains a model with dropout, then predicts at module level with the model still in
training mode.  TL105's safe fix wraps the prediction in `no_grad` (same numbers); the model still runs
with dropout on, so TL106 must still be reported after it; its unsafe fix (`model.eval()`) changes the
prediction: dropout is off."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
for features, targets in loader:
    optimizer.zero_grad()
    F.cross_entropy(model(features), targets).backward()
    optimizer.step()

logits = model(features[:2])
print(logits.softmax(dim=1).round(decimals=4).tolist())
