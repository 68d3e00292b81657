# fix-safety: codes=TL105 safe=same unsafe=same
"""A prediction at the end of the main block, after the training: wrapping it in `no_grad` changes no
number the script prints."""
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.Adam(net.parameters(), lr=0.05)
    xs, ys = torch.randn(32, 3), torch.randint(0, 2, (32,))
    for epoch in range(20):
        opt.zero_grad()
        nn.functional.cross_entropy(net(xs), ys).backward()
        opt.step()
    predicted = net(xs[:5]).argmax(dim=1)
    print(predicted.tolist())


if __name__ == "__main__":
    main()
