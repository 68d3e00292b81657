# fix-safety: codes=TL108 safe=changed unsafe=changed
"""Functional dropout without `training=`: still active after model.eval()."""
import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        return F.dropout(
            self.fc(x),
            p=0.5,
        )


torch.manual_seed(0)
net = Net().eval()
x = torch.randn(2, 8)
print("deterministic in eval:", torch.equal(net(x), net(x)))
