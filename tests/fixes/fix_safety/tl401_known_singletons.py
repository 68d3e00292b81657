# fix-safety: codes=TL401 safe=same unsafe=same
"""Singletons the code itself made (unsqueeze(0), [None], torch.rand(1, ...), a tokenizer's output for
one string): the fix squeezes exactly those."""
import torch


class Tokenizer:
    def __call__(self, text, return_tensors=None):
        ids = torch.tensor([[ord(c) % 50 for c in text]])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}


def embed(tokenizer, table, text):
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    return table[ids.squeeze()].mean(dim=0)


def embed_caption(tokenizer, table):
    ids = tokenizer("a photo of a cat", return_tensors="pt")["input_ids"]
    return table[ids.squeeze()].mean(dim=0)


def predict(image):
    batch = image.unsqueeze(0)
    scores = batch.mean(dim=(2, 3))
    return torch.softmax(batch.squeeze(), dim=0).sum(dim=0)


def noise():
    n = torch.rand(1, 3, 1)
    return n.squeeze() * 2


def show(t):
    return [round(v, 4) for v in t.flatten().tolist()]


torch.manual_seed(0)
print(show(embed(Tokenizer(), torch.randn(50, 3), "a photo of a cat")))
print(show(embed_caption(Tokenizer(), torch.randn(50, 3))))
print(show(predict(torch.randn(3, 2, 2))))
print(show(noise()), tuple(noise().shape))
