# fix-safety: codes=TL203 safe=same unsafe=same
"""A log-partition over every element that keeps its dimensions (`[1, 1]` for a matrix): the program
indexes it as a matrix, so a fix may not turn it into a 0-d tensor."""
import torch


def log_partition(scores):
    return torch.log(torch.sum(torch.exp(scores), None, keepdim=True))


torch.manual_seed(0)
log_z = log_partition(torch.randn(3, 4))
print(log_z.shape, round(log_z[0, 0].item(), 4))
