# fix-safety: codes=TL109 safe=same unsafe=changed
"""scheduler.step() before optimizer.step(): the first learning rate is skipped (unsafe fix)."""
import warnings

import torch

warnings.simplefilter("ignore")
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=1.0)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for epoch in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    sched.step()
    opt.step()
print(round(loss.item(), 4), [round(g["lr"], 6) for g in opt.param_groups])
