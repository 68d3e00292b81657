"""The shared light shape inference (torchlint.families.shapes.shapes), and its agreement with torch."""
from __future__ import annotations

from typing import Dict, Optional

import libcst as cst
import pytest

from torchlint.analysis.context import FileContext
from torchlint.families.shapes.shapes import Shape, broadcast, index, is_tensor, ranks_differ, shape_of, unsqueeze
from torchlint.engine import analyze


def infer(source: str) -> Dict[str, Optional[str]]:
    """Shapes of the arguments of every ``probe(expr)`` call, asked where the call stands."""
    module = cst.parse_module(source)
    ctx = FileContext("probe.py", source, module)
    found: Dict[str, Optional[str]] = {}

    def on_visit(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "probe":
            expr = node.args[0].value
            shape = shape_of(ctx, expr)
            found[ctx.code(expr)] = None if shape is None else str(shape)
            found[ctx.code(expr) + " :tensor"] = str(is_tensor(ctx, expr))

    analyze(ctx, on_visit)
    return found


LITERALS = """
import torch
import torch.nn as nn
a = torch.tensor([[1.], [2.]])
b = torch.tensor([1., 2.])
x = torch.rand([5, 3, 5])
lin = nn.Linear(5, 1)
probe(a); probe(b); probe(a + b); probe(torch.sum(a + b)); probe(a.squeeze()); probe(b[:, None])
probe(torch.zeros(5, 3)); probe(torch.ones((2, 4))); probe(torch.full((2, 2), 7.)); probe(torch.eye(3))
probe(torch.arange(10)); probe(torch.arange(2, 8, 2)); probe(torch.zeros(n, 3)); probe(torch.zeros(size))
probe(x.view(-1, 5)); probe(x.reshape(5, 15)); probe(torch.reshape(x, (3, -1))); probe(x.unsqueeze(1))
probe(x[..., None]); probe(x[0]); probe(x[:, None, 1:]); probe(x.sum(dim=1, keepdim=True)); probe(x.mean(1))
probe(x.transpose(0, 2)); probe(torch.zeros(4, 3) @ torch.zeros(3, 2)); probe(lin(x)); probe(lin(unknown))
probe(2 * x + 1); probe(x.float().abs()); probe(torch.zeros_like(x)); probe(torch.exp(b))
"""


@pytest.mark.parametrize(
    "expr, shape",
    [
        ("a", "[2, 1]"),
        ("b", "[2]"),
        ("a + b", "[2, 2]"),
        ("torch.sum(a + b)", "[]"),
        ("a.squeeze()", "[2]"),
        ("b[:, None]", "[2, 1]"),
        ("torch.zeros(5, 3)", "[5, 3]"),
        ("torch.ones((2, 4))", "[2, 4]"),
        ("torch.full((2, 2), 7.)", "[2, 2]"),
        ("torch.eye(3)", "[3, 3]"),
        ("torch.arange(10)", "[10]"),
        ("torch.arange(2, 8, 2)", "[3]"),
        ("torch.zeros(n, 3)", "[?, 3]"),
        ("torch.zeros(size)", None),
        ("x.view(-1, 5)", "[15, 5]"),
        ("x.reshape(5, 15)", "[5, 15]"),
        ("torch.reshape(x, (3, -1))", "[3, 25]"),
        ("x.unsqueeze(1)", "[5, 1, 3, 5]"),
        ("x[..., None]", "[5, 3, 5, 1]"),
        ("x[0]", "[3, 5]"),
        ("x[:, None, 1:]", "[5, 1, 2, 5]"),
        ("x.sum(dim=1, keepdim=True)", "[5, 1, 5]"),
        ("x.mean(1)", "[5, 5]"),
        ("x.transpose(0, 2)", "[5, 3, 5]"),
        ("torch.zeros(4, 3) @ torch.zeros(3, 2)", "[4, 2]"),
        ("lin(x)", "[5, 3, 1]"),
        ("lin(unknown)", "[..., 1]"),
        ("2 * x + 1", "[5, 3, 5]"),
        ("x.float().abs()", "[5, 3, 5]"),
        ("torch.zeros_like(x)", "[5, 3, 5]"),
        ("torch.exp(b)", "[2]"),
    ],
)
def test_literal_shapes(expr, shape):
    assert infer(LITERALS)[expr] == shape


def test_values_flow_through_variables_and_rebinding():
    found = infer(
        """
import torch

def f(y, z: torch.Tensor, items):
    probe(y[:, None]); probe(y.unsqueeze(-1)); probe(z); probe(items[0])
    y = y.unsqueeze(0)
    probe(y)
    q = torch.zeros(4, 1)
    q = q.squeeze(1)
    probe(q)
    if y:
        w = torch.zeros(3)
    else:
        w = torch.zeros(3, 1)
    probe(w)
"""
    )
    assert found["y[:, None]"] == "[?, 1, ...]"
    assert found["y.unsqueeze(-1)"] == "[..., 1]"
    assert found["z"] is None and found["z :tensor"] == "True"
    assert found["items[0]"] is None and found["items[0] :tensor"] == "False"
    assert found["y"] == "[1, ...]"
    assert found["q"] == "[4]"
    assert found["w"] is None  # two branches, two shapes: unknown


def test_linear_layers_built_in_init_and_sequential():
    found = infer(
        """
import torch
import torch.nn as nn

class M(nn.Module):
    def __init__(self, f):
        super().__init__()
        self.head = torch.nn.Linear(f, 1)
        self.seq = nn.Sequential(nn.ReLU(), nn.Linear(f, 2))
        self.lazy = nn.LazyLinear(4)

    def forward(self, x):
        probe(self.head(x)); probe(self.seq(x)); probe(self.lazy(x)); probe(self.head(x.view(-1, 8)))
"""
    )
    assert found["self.head(x)"] == "[..., 1]"
    assert found["self.seq(x)"] == "[..., 2]"
    assert found["self.lazy(x)"] == "[..., 4]"
    assert found["self.head(x.view(-1, 8))"] == "[?, 1]"


def test_sizes_are_python_numbers():
    found = infer(
        """
import torch

def f(spec, p: int):
    v = torch.rand(1) * p
    probe(torch.rand(1) * (spec.size(-1) - 1)); probe(v); probe(torch.rand(2, 3) / len(spec))
"""
    )
    assert found["torch.rand(1) * (spec.size(-1) - 1)"] == "[1]"
    assert found["v"] == "[1]"
    assert found["torch.rand(2, 3) / len(spec)"] == "[2, 3]"


def test_not_tensors():
    found = infer(
        """
import numpy as np
import torch

lengths = [3, 4]
arr = np.zeros((3, 4))
probe(lengths); probe(arr); probe(torch.device("cpu")); probe(len(lengths))
"""
    )
    for key in ("lengths", "arr", 'torch.device("cpu")', "len(lengths)"):
        assert found[key] is None
        assert found[key + " :tensor"] == "False"


def test_algebra():
    assert broadcast(Shape.exact([2, 1]), Shape.exact([2])) == Shape.exact([2, 2])
    assert broadcast(Shape.exact([3]), Shape.exact([4])) is None
    assert ranks_differ(Shape.exact([2, 1]), Shape.exact([2]))
    assert not ranks_differ(Shape.partial((), (1,), 1), Shape.exact([3]))
    assert ranks_differ(Shape.partial((None, 1)), Shape.exact([3]))
    assert unsqueeze(Shape.partial(), 1) == Shape.partial((None, 1), (), 2)
    assert unsqueeze(Shape.exact([2, 3]), -1) == Shape.exact([2, 3, 1])
    assert Shape.exact([None, 1, 5, 1]).singleton_dims() == [1, 3]
    assert Shape.partial((), (1, 4, 1)).singleton_dims() == [-3, -1]


def test_index_without_base_shape():
    el = cst.parse_expression("x[:, None, 0]")
    assert isinstance(el, cst.Subscript)
    assert index(None, el.slice) == Shape.partial((None, 1), (), 2)


torch = pytest.importorskip("torch")


@pytest.mark.parametrize(
    "code",
    [
        "torch.tensor([[1.], [2.]]) + torch.tensor([1., 2.])",
        "torch.rand([5, 3, 5]).view(-1, 5)",
        "torch.rand([5, 3, 5])[:, None, 1:]",
        "torch.rand(5, 3, 5).sum(dim=1, keepdim=True)",
        "torch.zeros(4, 1, 3).squeeze(1).unsqueeze(-1)",
        "torch.zeros(4, 3) @ torch.zeros(3, 2)",
        "torch.eye(3)[..., None] * torch.ones(2)",
        "torch.arange(2, 9, 3)",
    ],
)
def test_inferred_shapes_agree_with_torch(code):
    found = infer(f"import torch\nprobe({code})\n")
    assert found[code] == str(list(eval(code).shape)).replace("'", "")



def test_model_output_last_dim_from_its_forward():
    found = infer("""
import torch
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x):
        return self.head(x)

class Other(nn.Module):
    def forward(self, x):
        return x * 2

net = Net()
other = Other()
probe(net(x)); probe(other(x))
""")
    assert found["net(x)"] == "[..., 2]"
    assert found["other(x)"] is None


def test_flattened_values_and_settings_fields():
    found = infer("""
from dataclasses import dataclass
import torch
import torch.nn as nn
import tyro

@dataclass
class Settings:
    gamma: float = 0.9
    steps: int = 3
    scale: torch.Tensor = None

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 1)

    def forward(self, x):
        y = self.out(x)
        return y

class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Linear(8, 1)

    def forward(self, x, wide=False):
        y = self.out(x)
        if wide:
            y = y.expand(-1, 4)
        return y

s = Settings()
t = tyro.cli(Settings)
net, branchy = Net(), Branchy()
z = torch.zeros(4, 3)
probe(z.flatten()); probe(torch.flatten(z)); probe(u.flatten()); probe(z.flatten(1)); probe(z.flatten() * s.gamma)
probe(u.flatten() / t.steps); probe(u.flatten() * s.scale); probe(u.flatten() * s.other); probe(net(u))
probe(branchy(u))
""")
    assert found["z.flatten()"] == found["torch.flatten(z)"] == "[12]"
    assert found["u.flatten()"] == "[?]" and found["z.flatten(1)"] is None
    assert found["z.flatten() * s.gamma"] == "[12]" and found["u.flatten() / t.steps"] == "[?]"
    # a field declared a tensor, or not declared, is not a number
    assert found["u.flatten() * s.scale"] is None and found["u.flatten() * s.other"] is None
    # `y = self.out(x)` then `return y`; not when a branch may rebind `y` before the return
    assert found["net(u)"] == "[..., 1]" and found["branchy(u)"] is None


def test_targets_from_lists_of_numbers_and_frame_columns():
    found = infer("""
import pandas as pd
import torch
df = pd.read_csv("d.csv")
ys = []
for r in rows:
    ys.append(float(r))
names = [r for r in rows]
probe(torch.tensor(ys)); probe(torch.tensor(df["y"].values)); probe(torch.tensor(names))
probe(torch.tensor([float(v) for v in rows]))
""")
    assert found["torch.tensor(ys)"] == "[?]"
    assert found['torch.tensor(df["y"].values)'] == "[?]"
    assert found["torch.tensor(names)"] is None
    assert found["torch.tensor([float(v) for v in rows])"] == "[?]"


def test_shapes_of_loader_batches_and_of_built_models():
    found = infer("""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision import datasets

class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(3, 4, 3)
        self.b = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        return self.b(self.a(x))

def run(device, other):
    pairs = TensorDataset(torch.zeros(10, 3, 8, 8), torch.zeros(10))
    net = Tiny().to(device)
    for i, (img, lab) in enumerate(DataLoader(pairs, batch_size=2)):
        probe(img); probe(lab); probe(net(img))
        img, lab = img.to(device), lab.to(device)
        probe(lab)
    for digits, classes in DataLoader(datasets.MNIST("d"), batch_size=4):
        probe(classes)
    for u, v in DataLoader(pairs, batch_size=2, collate_fn=other):
        probe(v)
    for u, w in DataLoader(other, batch_size=2):
        probe(w)
""")
    assert found["img"] == "[?, 3, 8, 8]"
    assert found["lab"] == "[?]"  # the last probe of `lab`, after `.to(device)`, agrees
    assert found["net(img)"] == "[?, 1, ?, ?]"
    assert found["classes"] == "[?]"
    assert found["v"] is None and found["w"] is None


def test_a_method_given_an_integer_dim_is_evidence_of_a_tensor():
    found = infer("""
import torch

def f(scores, field, plain):
    best = scores.argmax(dim=1)
    avg = field.mean(dim="time")
    probe(scores); probe(field); probe(plain)
""")
    assert found["scores :tensor"] == "True"
    assert found["field :tensor"] == "False"  # a labelled array names its dimensions
    assert found["plain :tensor"] == "False"


GATHERS_AND_IMAGES = """
import cv2
import numpy as np
import torch
from PIL import Image
q = torch.rand(8, 4)
a = torch.randint(0, 4, (8,))
gray = np.asarray(Image.open("d.png").convert("L"))
colour = np.asarray(Image.open("d.png").convert("RGB"))
mask = cv2.imread("m.png", cv2.IMREAD_GRAYSCALE)
photo = cv2.imread("m.png")
probe(q.gather(1, a.unsqueeze(1))); probe(q.max(1)[0]); probe(q.max(1).values); probe(q.min(1, keepdim=True)[1])
probe(torch.max(q, dim=1)[0]); probe(q.permute(1, 0)); probe(torch.from_numpy(gray)); probe(torch.from_numpy(mask))
probe(torch.from_numpy(colour)); probe(torch.from_numpy(photo)); probe(torch.tensor([float(a[0])]))
probe(np.asarray(gray).max(1)[0])
"""


@pytest.mark.parametrize(
    "expr, shape",
    [
        ("q.gather(1, a.unsqueeze(1))", "[8, 1]"),  # the index's shape
        ("q.max(1)[0]", "[8]"),
        ("q.max(1).values", "[8]"),
        ("q.min(1, keepdim=True)[1]", "[8, 1]"),
        ("torch.max(q, dim=1)[0]", "[8]"),
        ("q.permute(1, 0)", "[4, 8]"),
        ("torch.from_numpy(gray)", "[?, ?]"),  # one band per pixel
        ("torch.from_numpy(mask)", "[?, ?]"),
        ("torch.from_numpy(colour)", None),
        ("torch.from_numpy(photo)", None),
        ("torch.tensor([float(a[0])])", "[1]"),
        ("np.asarray(gray).max(1)[0]", None),  # numpy's: the first row's maximum
    ],
)
def test_gathers_maxima_and_one_band_images(expr, shape):
    assert infer(GATHERS_AND_IMAGES)[expr] == shape
