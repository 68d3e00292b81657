# fix-safety: absent=TL101 safe=same unsafe=same
"""A DistributedOptimizer steps gradients that live in a distributed-autograd context, one context per
iteration: there is nothing to clear, it has no `zero_grad`, and inserting one would fail with
AttributeError. TL101 must stay silent and offer no fix. Runs as one RPC worker on this machine."""
import os
import socket

import torch
import torch.distributed.autograd as dist_autograd
import torch.distributed.rpc as rpc
from torch.distributed.optim import DistributedOptimizer

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = str(port)
rpc.init_rpc("worker0", rank=0, world_size=1)
torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
opt = DistributedOptimizer(torch.optim.SGD, [rpc.RRef(p) for p in model.parameters()], lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for step in range(3):
    with dist_autograd.context() as context_id:
        loss = torch.nn.functional.mse_loss(model(x), y)
        dist_autograd.backward(context_id, [loss])
        opt.step(context_id)
print([round(v, 4) for v in model.weight.detach().flatten().tolist()])
rpc.shutdown()
