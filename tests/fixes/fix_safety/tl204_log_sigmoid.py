# fix-safety: codes=TL204 safe=changed unsafe=changed
"""log(sigmoid(x)): -inf for very negative x."""
import torch


def log_prob_positive(x):
    return torch.log(torch.sigmoid(x))


print([round(v, 4) for v in log_prob_positive(torch.tensor([-200.0, 0.0, 3.0])).tolist()])
