# fix-safety: codes=TL202 safe=changed unsafe=changed
"""log(softmax(x)): -inf once a probability underflows."""
import torch


def log_probs(x):
    return torch.log(torch.softmax(x, dim=-1))


print(log_probs(torch.tensor([[200.0, 0.0]])).tolist())
