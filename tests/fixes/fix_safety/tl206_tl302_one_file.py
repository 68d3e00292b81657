# fix-safety: codes=TL206,TL302 safe=changed unsafe=changed keep="# one row at a time"
"""Two runtime-shaped fixes in one file: the fixed program must run where torchlint is not installed
(the pre-commit hook's situation) and import nothing twice."""
import torch
import torch.nn.functional as F


def distill(student, teacher):
    p = F.softmax(student, dim=-1)
    return -(F.softmax(teacher, dim=-1) * torch.log(p)).sum(dim=-1).mean()


def batch_gather(tensor, indices):
    # one row at a time
    output = []
    for i in range(tensor.size(0)):
        output += [tensor[i][indices[i]]]
    return torch.stack(output)


def show(t):
    return [round(v, 4) for v in t.flatten().tolist()]


torch.manual_seed(0)
student = torch.randn(3, 4) * 100
teacher = torch.randn(3, 4)
print(distill(student, teacher).item())
table = torch.randn(5, 6)
print(show(batch_gather(table, torch.tensor([0, 5, 2, 3, 1]))))
print(show(batch_gather(table, torch.randint(0, 6, (5, 2)))))
print(show(batch_gather(table, [1, 2, 3, 4, 0])))
