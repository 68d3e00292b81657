"""A small classifier trained the way the cookbooks warn against.

`torchlint examples/` reports each mistake; `torchlint --fix examples/` repairs what it safely can.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()


def train(loader, epochs=5):
    history = []
    for epoch in range(epochs):
        total_loss = 0.0
        for inputs, labels in loader:
            probs = F.softmax(model(inputs), dim=1)
            # the loss already applies log-softmax: probs should be logits
            loss = criterion(probs, labels)
            # gradients are never cleared: each step applies the sum of all earlier ones
            loss.backward()
            optimizer.step()
            # keeps every iteration's autograd graph alive
            total_loss += loss
        history.append(total_loss / len(loader))
        print(f"epoch {epoch}: accuracy {validate(loader):.3f}")
    return history


def validate(loader):
    correct = total = 0
    for inputs, labels in loader:
        outputs = model(inputs)
        correct += (outputs.argmax(dim=1) == labels).sum().item()
        total += labels.size(0)
    return correct / total


def naive_softmax(logits):
    exp = torch.exp(logits)
    return exp / torch.sum(exp)


def regress(features):
    head = nn.Linear(features.size(1), 1)
    return head(features).squeeze()


if __name__ == "__main__":
    data = [(torch.randn(32, 20), torch.randint(0, 3, (32,))) for _ in range(8)]
    print(train(data, epochs=2))
