# fix-safety: codes= safe=same unsafe=same
"""Batch-of-one inference: the function makes one sample a batch of one itself and squeeze() undoes it on
purpose; with the output's shape unknown, TL401 stays silent and no fix touches it (squeeze(-1) would keep
[1, C] and multinomial would sample from the wrong rows)."""
import torch


def sample_next(model, features):
    logits = model(features.unsqueeze(0))
    probs = torch.softmax(logits.squeeze(), dim=-1)
    return torch.multinomial(probs, 3, replacement=True)


torch.manual_seed(0)
model = torch.nn.Linear(4, 6)
print(sample_next(model, torch.randn(4)).tolist())
