"""TL401 and a batch of one made on purpose across files: a generation script reads its model back from a
checkpoint (its class unknown) and builds the recurrent state with the model's own method for one sample.
The state is a batch of one when every class the script has in view -- imported from the project's
model module -- that defines the method gives its argument as a size to a tensor constructor."""
from __future__ import annotations

import pytest

from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

MODELS = """import torch
import torch.nn as nn


class WordRNN(nn.Module):
    def __init__(self, n, h, layers):
        super().__init__()
        self.h, self.layers = h, layers
        self.emb = nn.Embedding(n, h)
        self.rnn = nn.LSTM(h, h, layers)
        self.out = nn.Linear(h, n)

    def forward(self, tok, state):
        y, state = self.rnn(self.emb(tok), state)
        return self.out(y), state

    def start_state(self, rows):
        w = next(self.parameters())
        return (w.new_zeros(self.layers, rows, self.h), w.new_zeros(self.layers, rows, self.h))


class WordAttention(nn.Module):
    def __init__(self, n, h):
        super().__init__()
        self.emb = nn.Embedding(n, h)
        self.out = nn.Linear(h, n)

    def forward(self, tok, state=None):
        return self.out(self.emb(tok)), state
{other}
"""

# the method of a second class of the same name that is given its argument for another purpose
OTHER = """

class WordGRU(WordRNN):
    def start_state(self, rows):
        return torch.full((self.layers, 4, self.h), float(rows))
"""

SAMPLE = """import torch

from {pkg}.models import WordAttention, WordRNN{extra}

net = torch.load("lm.pt", weights_only=False)
net.eval()
state = net.start_state({rows})
tok = torch.randint(100, (1, 1))
with torch.no_grad():
    for step in range(40):
        if step % 8 == 0:
            tok = torch.cat([tok, tok[-1:]], 0)
        logits, state = net(tok, state)
        probs = logits.squeeze().softmax(-1)
        tok = probs.multinomial(1).view(1, 1)
"""


def _tl401(tmp_path, rows, other):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'lm'\n")
    pkg = tmp_path / "lm"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text(MODELS.format(other=OTHER if other else ""))
    script = pkg / "sample.py"
    script.write_text(SAMPLE.format(pkg="lm", rows=rows, extra=", WordGRU" if other else ""))
    found = lint_source(str(script), script.read_text(), Settings(all_rules())).diagnostics
    return [d for d in found if d.code == "TL401"]


@pytest.mark.parametrize("rows, other, reported", [
    (1, False, False),  # a state for one sample: squeeze() drops the batch of one on purpose
    (8, False, True),  # a state for eight samples: the batch is real
    (1, True, True),  # one class in view uses the argument as a fill value: nothing says one sample
])
def test_a_state_built_for_one_sample_by_an_imported_class(tmp_path, rows, other, reported):
    found = _tl401(tmp_path, rows, other)
    assert bool(found) is reported, found
    if reported:
        assert "`logits.squeeze()`" in found[0].message and "the output of `net`" in found[0].message
