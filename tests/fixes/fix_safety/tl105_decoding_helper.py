# fix-safety: codes=TL105 safe=same unsafe=same
"""A greedy decoding helper, found by what it does (the model runs on the token it picked), called
between training steps: `@torch.no_grad()` on the helper leaves the training around it as it was, and
the sampled tokens are the same."""
import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=11, width=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, ids):
        return self.head(torch.tanh(self.embed(ids)))


def continue_ids(lm, ids, steps):
    for _ in range(steps):
        picked = lm(ids)[:, -1].argmax(dim=-1, keepdim=True)
        ids = torch.cat([ids, picked], dim=1)
    return ids


torch.manual_seed(0)
lm = TinyLM()
opt = torch.optim.SGD(lm.parameters(), lr=0.5)
data = torch.randint(0, 11, (4, 6))
for step in range(3):
    opt.zero_grad()
    logits = lm(data[:, :-1])
    nn.functional.cross_entropy(logits.flatten(0, 1), data[:, 1:].flatten()).backward()
    opt.step()
    print(continue_ids(lm, data[:1, :2], 4).tolist())
print(round(sum(p.sum().item() for p in lm.parameters()), 4))
