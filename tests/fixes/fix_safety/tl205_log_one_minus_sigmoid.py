# fix-safety: codes=TL204 absent=TL205 safe=changed unsafe=changed
"""log(1 - sigmoid(z)) is -inf for large z; log1p(-sigmoid(z)) is too; logsigmoid(-z) is not."""
import torch


def log_prob_negative(z):
    return torch.log(1 - torch.sigmoid(z))


print([round(v, 4) for v in log_prob_negative(torch.tensor([50.0, 0.0])).tolist()])
