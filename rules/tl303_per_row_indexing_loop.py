from __future__ import annotations

from typing import List, Optional

import libcst as cst

from torchlint.families.loops.nested import (
    NestedWork,
    inner_of_nest,
    inside_kernel_nest,
    kernel_nest,
    nested_slice_work,
    per_row_product,
)
from torchlint.families.loops.rowwork import comprehension_row_work, independent_row_work, nested_row_work
from torchlint.families.loops.loops import (
    comprehension_tally,
    RowIndexing,
    row_indexing,
    used_outside,
)
from torchlint.rule import Fix, Invalid, LintRule, Valid


class PerRowIndexingLoop(LintRule):
    """
    ## What it does
    Finds `for i in range(n)` loops over the rows of a tensor (`n` is `x.size(0)`, `x.shape[0]`,
    `len(x)`, or `b` from `b, c = x.shape`) whose body indexes the rows one at a time: `x[i]`,
    `x[i, 1:]`, `y[i]`. Row-wise sums and batch gathers have their own rules (TL301, TL302).

    ## Why is this bad?
    Indexing is an overloaded operator that launches a kernel each time; using it once per row turns
    one batched operation into `n` small ones plus Python overhead. Effective PyTorch's advice is to
    avoid this overuse: iterating over `torch.unbind(x)` instead of indexing `x[i]` is already faster
    (about 30% in its measurements), and rewriting the computation in batched form is far faster still
    ("4. 使用好重载的运算符" and "5. 采用 TorchScript 优化运行时间", Effective PyTorch: "将计算操作都重写为批次的形式").

    Only loops that could run as one batched operation are reported: every row read flows through
    arithmetic, torch functions, tensor methods or `nn` layers into a uniform result — a list stacked
    or concatenated after the loop, a write `out[i] = ...`, or an accumulation `+=`. Not reported:
    loops over modules, heads or layers (`range(len(self.layers))`), loops whose bound is not a
    tensor's first dimension, recurrences that carry state from one step to the next
    (`h = cell(x[t], h)`, `x[i] = x[i] + x[i - 1]`), ragged rows (`x[i, :lengths[i]]`,
    `boxes[i][keep[i]]`, `.nonzero()`, per-row results kept in a list that is never stacked), rows
    passed to functions of unknown behaviour (`save_image(x[i])`, `self._erase(x[i])`), sweeps of one
    value at a time against a whole tensor (`preds >= thresholds[i]`), loops that use the index for more
    than indexing (file names, arithmetic), and loops that can exit early.

    Beyond that shape, any loop whose iterations are independent is reported without a fix, with the
    batched idiom that fits: the loop walks a tensor's rows (`for row in x`, `enumerate(x)`, `range`
    to a size read from `x.size(k)`/`x.shape[k]`/`len(x)`, directly or through a variable), columns
    (`x[:, j]`) or windows (`x[:, i:i + k]` with `range(x.size(1) - k + 1)`), and each iteration
    writes only its own position (`out[i] = ...`), appends to a list stacked afterwards or made of
    Python numbers (`.item()`), or adds into an accumulator (`total += ...`, `acc[labels[i]] += ...`).
    The walked values must be tensors: a parameter counts as one where it is used as one, annotated as
    one, or every call of its function in the file passes a tensor made in the call (`torch.randint(...)`).
    Independence is decided from data flow: a name read before the iteration assigns it, the loop
    variable used as a number, a position other than the iteration's own (`out[i - 1]`), a list or
    buffer read while it is filled, calls of functions of unknown behaviour (I/O, logging), exits, nested
    loops, data-dependent shapes and small literal trip counts keep the loop silent. The idioms named:
    a mask and `torch.where` for bodies that branch on the data; `index_add_`/`scatter_add_`/`bincount`
    for scatters; `Tensor.unfold` for windows; reductions with `dim=` (then one `.tolist()`) for
    per-column work and lists of numbers; one `topk`/`kthvalue`/`argmax` with `dim=` for a selection
    made row by row (a mask that fills the row itself, `x[i].masked_fill(cols == y[i], -inf)`, is as large
    as the rows when batched, unlike a threshold swept over a whole tensor). A loop whose last index is read after it (before the name is bound again: an
    assignment, or another loop over the name) is left alone; a mere mention of the name after that new
    binding does not count. A loop that reads rows at an index it draws or computes in the iteration
    (`k = torch.randint(n, ()); others.append(x[k])`: a random partner per row) does not read its own
    position, and is left alone even where one batched draw (`x[torch.randint(n, (n,))]`) would do.

    Tallies are per-element work too: a loop over the elements (`range(len(y))`, `range(n)` with
    `n = y.size(0)`, `zip(preds, labels)`, `range(self.batch_size)` where `self.batch_size` is what a
    `DataLoader` of the file is given as `batch_size=` and the rows read come from that loader's batches) that reads each class with `.item()` or `int(...)` and counts
    it (`counts[int(y[i].item())] += 1` into a tensor or a list of zeros made before the loop; a confusion
    matrix `cm[t, p] += 1` over `zip(labels, preds)` or `cm[y[i].item(), p[i].item()] += 1`, one
    `torch.bincount(t * n + p, minlength=n * n).view(n, n)`), or counts
    the elements that pass a test on the data (`if preds[i].item() == y[i].item(): correct += 1`, or each
    row's count of matches, `correct += (preds[i] == y[i]).sum().item()`, a `.cpu()` copy of the row
    included), is one
    `torch.bincount` or one boolean mask and `.sum()`. A counter read inside the loop (a running count),
    a count that does not depend on the data, or a dictionary of counters keeps the loop silent.

    A list comprehension is the same loop: `torch.stack([torch.relu(r) * w for r in x])`, `torch.cat([...
    for a, b in zip(x, y)])` or `[int(x[i].argmax()) for i in range(x.size(0))]` is reported (without a fix)
    when its element is independent work on the slices, judged as a loop body is, and the list is put
    together by `torch.stack`/`torch.cat`/`torch.tensor` or holds one number or one full reduction per
    slice (`x.argmax(dim=1).tolist()`, `x.sum(dim=1)`). An element that is the slice itself, a list of
    tensors kept as a list, per-row functions with no batched form (`torch.bincount`, `torch.histc`) and
    comprehensions over lists of modules stay silent.

    A comprehension that tests tensor elements one index at a time is the same work: `[1 if pred[j] ==
    y[j] else 0 for j in range(n)]` (also `int(...)`, `.item()` of the test, or of each element) is one
    comparison `pred.flatten() == y.flatten()` (each element is one value, so the flattened tensors line up
    whatever their shapes; then `.sum()`, or `.long().tolist()` for the list), reported without a fix.
    Every indexed operand must be a tensor by evidence (`_, pred = torch.max(scores, 1)` counts; a list or
    a dict has no element-wise comparison); a comprehension with a condition, or one that uses the index
    for anything else, is left alone.

    Two nested loops over output positions (bounded by any size, the output's own `range(out.size(0))`
    included) are reported at the outer loop when each position is
    written once (`out[i, j] = ...`, `out[:, :, i, j] = ...`) from slices read at that position and
    the value is one of three kinds: a window that moves with the loop (`x[i:i + kh, j:j + kw]`,
    `x[..., i * s:i * s + s, ...]`) reduced alone (a hand-written pooling: `F.max_pool2d`,
    `F.avg_pool2d`) or multiplied by a kernel the loop does not change (a hand-written convolution:
    `F.conv2d`, or `F.unfold` and one `matmul`); a reduction under a mask built per pair
    (`feat[b][seg[b] == r].mean()`, `(feat[b] * mask).sum()`: one masked batched reduction over
    masks built by broadcasting); the product of a row read at one index and a row read at the other
    (`torch.dot(a[i], b[j])`, `(a[i] * b[j]).sum()`, `q[s] @ k[t]`, the rows of `enumerate(x)`: one
    `matmul` or `torch.einsum`); the distance between a row read at one index and a row read at the
    other (`torch.norm(x[i] - y[j])`, `((x[i] - y[j]) ** 2).sum().sqrt()`, `(x[i] - y[j]).abs().sum()`,
    `F.pairwise_distance(x[i], y[j])`, `torch.dist(u, v)` over the rows of `enumerate`: one
    `torch.cdist`).
    A convolution written with its kernel loops inside (four loops: output positions `i`, `j`, kernel
    offsets `di`, `dj`, accumulating `x[i + di, j + dj] * w[di, dj]` — strides `x[i * s + di, ...]` and
    leading whole dimensions `x[:, :, ...]` included — into `out[i, j]`, or into a number reset to zero
    per position and written to `out[i, j]` after the kernel loops) is reported once, at the outermost
    loop, naming `F.conv2d`. It stays silent when the accumulator is not reset per position, the kernel
    read depends on the position, the input or the kernel changes inside the nest, or nothing says the
    values are tensors (lists of lists are convolved the same way).
    Two loops over two dimensions of the same tensor (`for b in range(x.size(0)): for c in
    range(x.size(1)): out[b, c] = (x[b, c] - x[b, c].mean()) / x[b, c].std()`: statistics matched per
    sample and channel) are reported once, at the outer loop, when the inner loop is independent
    per-slice work and every subscript that reads or writes the inner slice also fixes the outer index
    at the dimension the outer loop walks: each `[b, c]` slice is then the work of one iteration. When
    the outer index has another use (a number, arithmetic) or a slice is read or written at `[c]` alone,
    only the inner loop is reported.
    A single loop whose rows are multiplied as matrices (`q[i] @ k.T`, `torch.matmul(w, row)`) and
    stacked or written afterwards is named the same way: the per-row scores are the rows of one
    product. The nest stays silent when the output is read at another position (dynamic programming,
    `cost[i - 1, j]`), a value is carried from one position to the next, a slice is cut to a per-row
    length (`x[i, :lengths[j]]`), a masked selection is kept rather than reduced, windows are copied
    without a reduction, the trip count is a literal, a value read per position is not known to be a
    tensor (a list of tensors may be ragged), or the body calls functions of unknown behaviour (I/O,
    layers, printing).

    A loop over a dimension known to hold a handful of entries (at most four: the three columns of
    `torch.zeros((n, 3))`, read from the tensor's shape or from the constructor a helper of the project
    returns) is not reported: it runs a few whole-tensor operations on named channels, and batching
    them gains nothing.

    ## Example
    ```python
    norms = []
    for i in range(x.size(0)):
        norms.append(torch.linalg.norm(x[i]))
    ```

    ## Use instead
    ```python
    norms = []
    for x_i in torch.unbind(x):
        norms.append(torch.linalg.norm(x_i))
    ```
    or, better, one batched call: `norms = torch.linalg.norm(x, dim=1)`.

    ## Fix safety
    When the body only reads `x[i]` (the index has no other use and the loop covers every row), the fix
    iterates over `torch.unbind(x)` and names the row `x_i`: the rows are the same views of `x`, so the
    fix is safe. It is unsafe when the loop variable is read after the loop. Other loops (tallies and
    per-row selections included) are reported without a fix; the message names the tensors whose rows
    the body should process as a batch, or the batched idiom. The nested loops (windows, masked
    reductions, pair scores, pair distances) and the per-row products get no fix either: the batched op sums in another
    order than the loop (the results differ in the last bits of floating point, so the rewrite is not
    provably equal), and the padding, stride and layout a `conv2d`/pooling call needs are not known from
    the loop alone.

    ## Options
    None.

    ## References
    - [torch.unbind](https://pytorch.org/docs/stable/generated/torch.unbind.html)
    - [torch.vmap](https://pytorch.org/docs/stable/generated/torch.vmap.html)
    - [Effective PyTorch](https://github.com/vahidk/EffectivePyTorch), vahidk
    """

    CODE = "TL303"
    NAME = "per-row-indexing-loop"
    MESSAGE = "Loop indexes a tensor one row at a time; vectorize the body over dim 0"
    FIX_TITLE = "Iterate over `torch.unbind(x)` instead of indexing `x[i]`"
    TRIGGERS = ("size(", "shape", "len(", "for ")

    VALID = [
        # three entries written out: the loop runs three times
        """
import torch

weights = torch.tensor([0.2, 0.5, 0.3])
total = 0.0
for j in range(len(weights)):
    total += weights[j] * weights[j]
print(total)
""",
        Valid(
            """
import torch

def run(self, x, h):
    outputs = []
    for t in range(x.size(0)):
        h = self.cell(x[t], h)
        outputs.append(h)
    return torch.stack(outputs), h
"""
        ),
        Valid(
            """
import torch.nn as nn

class Stack(nn.Module):
    def forward(self, x):
        for i in range(len(self.layers)):
            x = self.layers[i](x)
        return x
"""
        ),
        Valid(
            """
import torch

def unpad(x: torch.Tensor, lengths):
    out = []
    for i in range(x.size(0)):
        out.append(x[i, :lengths[i]])
    return out
"""
        ),
        Valid(
            """
import torch
from torchvision.utils import save_image

def dump(images: torch.Tensor):
    for i in range(images.size(0)):
        save_image(images[i], f"sample_{i}.png")
"""
        ),
        Valid(
            """
import torch

def prefix_sum(x: torch.Tensor):
    for i in range(1, x.size(0)):
        x[i] = x[i] + x[i - 1]
    return x
"""
        ),
        Valid(
            """
import torch

def first_positive(x: torch.Tensor):
    for i in range(x.size(0)):
        if x[i].sum() > 0:
            return x[i]
    return None
"""
        ),
        Valid(
            """
import torch

def train(model, loader, opt, num_epochs):
    for epoch in range(num_epochs):
        for batch in loader:
            opt.zero_grad()
            model(batch).sum().backward()
            opt.step()
"""
        ),
        Valid(
            """
import torch

def norms(x: torch.Tensor):
    return torch.linalg.norm(x, dim=1)
"""
        ),
        Valid(
            """
import torch

def erase_all(self, images: torch.Tensor):
    for i in range(images.size(0)):
        self._erase(images[i])
    return images
"""
        ),
        Valid(
            """
import torch
from torchvision.io import decode_jpeg, encode_jpeg

def jpeg(images: torch.Tensor, quality: int):
    out = []
    for i in range(images.shape[0]):
        out.append(decode_jpeg(encode_jpeg(images[i], quality=quality)))
    return torch.stack(out)
"""
        ),
        Valid(
            """
import torch

def filter_boxes(boxes: torch.Tensor, keep: torch.Tensor):
    kept = []
    for i in range(boxes.shape[0]):
        kept.append(boxes[i][keep[i]])
    return kept
"""
        ),
        Valid(
            """
import torch

def confusion(preds: torch.Tensor, target: torch.Tensor, thresholds: torch.Tensor):
    confmat = thresholds.new_empty((len(thresholds), 2), dtype=torch.int64)
    for i in range(len(thresholds)):
        above = preds >= thresholds[i]
        confmat[i, 0] = (target & above).sum()
        confmat[i, 1] = (target & ~above).sum()
    return confmat
"""
        ),
        Valid(
            """
import torch

def per_image_keypoints(heatmap: torch.Tensor):
    points = []
    for b in range(heatmap.size(0)):
        points.append(heatmap[b].nonzero())
    return points
"""
        ),
        # data-flow near misses of the wider analysis: a value carried from the previous iteration,
        # a list of tensors walked like rows, a threshold sweep, I/O in the body, a literal trip count
        Valid(
            """
import torch

def smooth(x: torch.Tensor):
    out = torch.empty_like(x)
    prev = torch.zeros_like(x[0])
    for i in range(x.size(0)):
        out[i] = torch.where(x[i] > 0, x[i], prev)
        prev = out[i]
    return out
"""
        ),
        Valid(
            """
import torch

def heads(features: list, conv):
    outs = []
    for f in features:
        outs.append(torch.relu(f))
    return torch.cat(outs)
"""
        ),
        Valid(
            """
import torch

def curve(preds: torch.Tensor, thresholds: torch.Tensor):
    out = torch.empty(thresholds.size(0))
    for i in range(thresholds.size(0)):
        out[i] = (preds >= thresholds[i]).float().mean()
    return out
"""
        ),
        Valid(
            """
import torch

def report(x: torch.Tensor):
    out = torch.empty(x.size(0))
    for i in range(x.size(0)):
        out[i] = x[i].mean()
        print(out[i])
    return out
"""
        ),
        Valid(
            """
import torch

def first_three(x: torch.Tensor):
    out = torch.empty(3)
    for i in range(3):
        if x[i].sum() > 0:
            out[i] = x[i].mean()
    return out
"""
        ),
        Valid(
            """
import torch

def running(x: torch.Tensor):
    out = torch.empty_like(x)
    for i in range(x.size(0)):
        if x[i].sum() > 0:
            out[i] = x[i] * 2
        else:
            out[i] = out[i - 1]
    return out
"""
        ),
        Valid(
            """
import torch

def unpadded(x: torch.Tensor, lengths):
    norms = []
    for i in range(x.size(0)):
        if lengths[i] > 0:
            norms.append(x[i, : lengths[i]].norm().item())
    return norms
"""
        ),
        Valid(
            """
import torch

def decay(x: torch.Tensor, rate: float):
    out = torch.empty_like(x)
    for i in range(x.size(0)):
        scale = rate ** i
        out[i] = x[i] * scale + out[i - 1]
    return out
"""
        ),
        Valid(
            """
import torch
import torch.nn as nn

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x: torch.Tensor):
        outs = []
        for layer in self.layers:
            outs.append(layer(x))
        for i in range(len(self.layers)):
            outs.append(self.layers[i](x))
        return torch.stack(outs)
"""
        ),
        Valid(
            """
import logging
import torch

def grad_norms(model):
    norms = []
    for p in model.parameters():
        norms.append(p.grad.norm())
    for name, p in model.named_parameters():
        logging.info("%s %s", name, p.norm())
    return torch.stack(norms)
"""
        ),
        Valid(
            """
import logging
import torch

def row_stats(x: torch.Tensor):
    out = torch.empty(x.size(0))
    for i in range(x.size(0)):
        out[i] = x[i].mean()
        logging.info("row %d", i)
    return out
"""
        ),
        Valid(
            """
import torch

def running_hits(x: torch.Tensor):
    seen = []
    hits = 0
    for i in range(x.size(0)):
        if x[i].item() > 0:
            hits += 1
        seen.append(hits)
    return seen
"""
        ),
        Valid(
            """
import torch

def visits(y: torch.Tensor):
    n = 0
    for i in range(len(y)):
        n += 1
    return n
"""
        ),
        Valid(
            """
import torch

def by_label(y: torch.Tensor, table: dict):
    for i in range(y.size(0)):
        table[y[i].item()] += 1
    return table
"""
        ),
        Valid(
            """
def positives(paths, flags):
    n = 0
    for path, flag in zip(paths, flags):
        if flag == 1:
            n += 1
    return n
"""
        ),
        Valid(
            """
import torch

def best_score(scores: torch.Tensor):
    best = float("-inf")
    for i in range(scores.size(0)):
        if scores[i].item() > best:
            best = scores[i].item()
    return best
"""
        ),
        Valid(
            """
import torch

def until_mismatch(a: torch.Tensor, b: torch.Tensor):
    same = 0
    for i in range(a.size(0)):
        if a[i].item() != b[i].item():
            break
        same += 1
    return same
"""
        ),
        # nested loops near misses: dynamic programming, ragged slices, kept selections, I/O, copied
        # windows, layers called per pair; a loop over a dimension of three named channels
        Valid(
            """
import torch

def dtw(x: torch.Tensor, y: torch.Tensor):
    cost = torch.full((x.size(0), y.size(0)), float("inf"))
    for i in range(x.size(0)):
        for j in range(y.size(0)):
            cost[i, j] = (x[i] - y[j]).abs().sum() + torch.minimum(cost[i - 1, j], cost[i, j - 1])
    return cost
"""
        ),
        Valid(
            """
import torch

def prefix_scores(x: torch.Tensor, lengths: torch.Tensor):
    out = torch.zeros(x.size(0), lengths.size(0))
    for i in range(x.size(0)):
        for j in range(lengths.size(0)):
            out[i, j] = x[i, :lengths[j]].sum()
    return out
"""
        ),
        Valid(
            """
import torch

def region_pixels(feat: torch.Tensor, seg: torch.Tensor, regions: int):
    pixels = []
    for b in range(feat.size(0)):
        for r in range(regions):
            pixels.append(feat[b][seg[b] == r])
    return pixels
"""
        ),
        Valid(
            """
import torch

def logged(a: torch.Tensor, b: torch.Tensor):
    sim = torch.zeros(a.size(0), b.size(0))
    for i in range(a.size(0)):
        for j in range(b.size(0)):
            sim[i, j] = torch.dot(a[i], b[j])
            print(i, j, sim[i, j])
    return sim
"""
        ),
        Valid(
            """
import torch

def running_max(x: torch.Tensor, k: int):
    n = x.size(-1)
    out = torch.zeros(x.size(0), n - k + 1)
    best = x[:, 0]
    for b in range(x.size(0)):
        for i in range(n - k + 1):
            best = torch.maximum(best, x[b, i:i + k].amax())
            out[b, i] = best
    return out
"""
        ),
        Valid(
            """
import torch

def tiles(x: torch.Tensor, k: int):
    out = torch.zeros(x.size(0) // k, x.size(1) // k, k, k)
    for i in range(x.size(0) // k):
        for j in range(x.size(1) // k):
            out[i, j] = x[i * k:(i + 1) * k, j * k:(j + 1) * k]
    return out
"""
        ),
        Valid(
            """
import torch

def per_layer(layers, x: torch.Tensor):
    out = torch.zeros(len(layers), x.size(0))
    for i in range(len(layers)):
        for j in range(x.size(0)):
            out[i, j] = layers[i](x[j]).sum()
    return out
"""
        ),
        Valid(
            """
import torch

def pair_sums(a, b):
    sim = torch.zeros(len(a), len(b))
    for i in range(len(a)):
        for j in range(len(b)):
            sim[i, j] = (a[i] * b[j]).sum()
    return sim
"""
        ),
        Valid(
            """
import torch

def gram_in_place(a: torch.Tensor):
    for i, u in enumerate(a):
        for j, v in enumerate(a):
            a[i, j] = torch.dot(u, v)
    return a
"""
        ),
        Valid(
            """
import torch

def per_block(blocks, x: torch.Tensor):
    out = torch.zeros(len(blocks), x.size(0))
    for i, block in enumerate(blocks):
        for j, row in enumerate(x):
            out[i, j] = torch.dot(block, row)
    return out
"""
        ),
        Valid(
            """
import torch

def _palette() -> torch.Tensor:
    table = torch.zeros((16, 3))
    table[:, 0] = torch.linspace(0, 255, 16)
    return table

def colorize(labels: torch.Tensor) -> torch.Tensor:
    palette = _palette().to(labels.device)
    image = torch.zeros((labels.size(0), 3, labels.size(1), labels.size(2)))
    for c in range(palette.shape[1]):
        column = palette[:, c]
        image[:, c] = torch.clamp(column[labels] / 255.0, 0, 1)
    return image
"""
        ),
        Valid(
            """
import torch

def shade(depth: torch.Tensor) -> torch.Tensor:
    ramp = _ramp().to(depth.device)
    rgb = torch.zeros((depth.size(0), 3, depth.size(1), depth.size(2)))
    for c in range(ramp.shape[1]):
        rgb[:, c] = torch.lerp(ramp[0, c], ramp[1, c], depth)
    return rgb

def _ramp() -> torch.Tensor:
    ends = torch.zeros((2, 3))
    ends[1] = 1.0
    return ends
"""
        ),
        Valid(
            """
import torch

def tint(img: torch.Tensor):
    wheel = torch.rand(55, 3)
    out = torch.empty(img.size(0), 3, img.size(2))
    for c in range(wheel.shape[1]):
        out[:, c] = img[:, c] * torch.sum(wheel[:, c])
    return out
"""
        ),
        # the last index is read after the loop (before any new binding of the name): left alone
        Valid(
            """
import torch

def totals(x: torch.Tensor):
    out = torch.empty(x.size(0))
    for i, row in enumerate(x):
        out[i] = row.sum()
    i = i + 1
    return out, i
"""
        ),
        Valid(
            """
import torch

def totals(x: torch.Tensor, reset: bool):
    out = torch.empty(x.size(0))
    for i, row in enumerate(x):
        out[i] = row.sum()
    if reset:
        i = 0
    return out, i
"""
        ),
        Valid(
            """
import torch

def totals(x: torch.Tensor):
    out = torch.empty(x.size(0))
    for i, row in enumerate(x):
        out[i] = row.sum()
    for j in range(i):
        print(j)
    return out
"""
        ),
        # near misses of pairwise distances: the output read at another position (dynamic programming),
        # rows of Python lists (possibly ragged), a difference kept without a reduction
        Valid(
            """
import torch

def alignment(x: torch.Tensor, y: torch.Tensor):
    d = torch.zeros(len(x), len(y))
    for i in range(1, len(x)):
        for j in range(len(y)):
            d[i, j] = torch.norm(x[i] - y[j]) + d[i - 1, j]
    return d
"""
        ),
        Valid(
            """
import torch

def distances(xs: list, ys: list):
    d = torch.zeros(len(xs), len(ys))
    for i in range(len(xs)):
        for j in range(len(ys)):
            d[i, j] = torch.norm(xs[i] - ys[j])
    return d
"""
        ),
        # near misses of the kernel nest: an accumulator never reset per position, a kernel that changes
        # with the position, Python lists, an input written inside the nest
        Valid(
            """
import torch

def carried(x: torch.Tensor, w: torch.Tensor):
    k = w.size(0)
    out = torch.zeros(x.size(0) - k + 1, x.size(1) - k + 1)
    acc = 0.0
    for i in range(out.size(0)):
        for j in range(out.size(1)):
            for di in range(k):
                for dj in range(k):
                    acc += x[i + di, j + dj] * w[di, dj]
            out[i, j] = acc
    return out
"""
        ),
        Valid(
            """
import torch

def varying(x: torch.Tensor, w: torch.Tensor):
    k = w.size(1)
    out = torch.zeros(x.size(0) - k + 1, x.size(1) - k + 1)
    for i in range(out.size(0)):
        for j in range(out.size(1)):
            for di in range(k):
                for dj in range(k):
                    out[i, j] += x[i + di, j + dj] * w[i, di + dj]
    return out
"""
        ),
        Valid(
            """
import torch

def lists(img, kern, h, w):
    out = [[0.0] * w for _ in range(h)]
    for i in range(h):
        for j in range(w):
            for di in range(len(kern)):
                for dj in range(len(kern)):
                    out[i][j] += img[i + di][j + dj] * kern[di][dj]
    return out
"""
        ),
        Valid(
            """
import torch

def flipped(x: torch.Tensor, w: torch.Tensor):
    k = w.size(0)
    out = torch.zeros(x.size(0) - k + 1, x.size(1) - k + 1)
    for i in range(out.size(0)):
        for j in range(out.size(1)):
            for di in range(k):
                for dj in range(k):
                    out[i, j] += x[i + di, j + dj] * w[di, dj]
                    x[i, j] = 0
    return out
"""
        ),
        # a random partner per row: the rows are read at an index drawn in the iteration, not at the
        # loop's position, and the list being filled is read back; not independent per-row work by the
        # definition above (a batched draw, `torch.randint(n, (n,))`, is still the better code)
        Valid(
            """
import torch

def partners(images: torch.Tensor, labels: torch.Tensor):
    others, other_labels, same = [], [], []
    for i in range(images.shape[0]):
        k = torch.randint(0, images.shape[0], (1,)).item()
        others.append(images[k])
        other_labels.append(labels[k])
        if labels[i] == other_labels[i]:
            same.append(1)
        else:
            same.append(0)
    return torch.stack(others), torch.tensor(other_labels), torch.tensor(same)
"""
        ),
        Valid(
            """
import torch

def partners(images: torch.Tensor, labels: torch.Tensor):
    others, same = [], []
    for i in range(images.shape[0]):
        k = torch.randint(images.shape[0], ())
        others.append(images[k])
        same.append(labels[i] == labels[k])
    return torch.stack(others), torch.stack(same)
"""
        ),
        # a confusion matrix that reads its own cells, or shifts a class: not a tally of the pairs
        Valid(
            """
import torch


def symmetrised(preds: torch.Tensor, labels: torch.Tensor, n: int):
    cm = torch.zeros(n, n)
    for t, p in zip(labels, preds):
        cm[t, p] += cm[p, t]
    return cm


def shifted(preds: torch.Tensor, labels: torch.Tensor, n: int):
    cm = torch.zeros(n, n)
    for t, p in zip(labels, preds):
        cm[t, p + 1] += 1
    return cm
"""
        ),
        # file names zipped with labels into a dictionary; a function never called with tensors
        Valid(
            """
def by_file(files, labels):
    seen = {}
    for f, t in zip(files, labels):
        seen[f, t] += 1
    return seen


def pairs(a, b, table):
    for t, p in zip(a, b):
        table[t, p] += 1
    return table


pairs([0, 1], [1, 1], {})
"""
        ),
        # a loop to a loader's batch size that reads a table of its own, not the batch
        Valid(
            """
import torch
from torch.utils.data import DataLoader


class Scorer:
    def __init__(self, data, k, batch_size=32):
        self.batch_size = batch_size
        self.k = k
        self.table = torch.zeros(batch_size, dtype=torch.long)
        self.batches = DataLoader(data, batch_size=self.batch_size, drop_last=True)

    def per_class(self, model):
        right = [0] * self.k
        for x, y in self.batches:
            guess = model(x).argmax(1)
            for j in range(self.batch_size):
                c = self.table[j].item()
                if guess[j].item() == c:
                    right[c] += 1
        return right
"""
        ),
        # counts of matches over a list of tensors of different lengths (not a tensor's rows), and a
        # comparison of decoded strings (per-sample Python work): no batched count
        Valid(
            """
import torch

def matches(preds, labels):
    correct = 0
    for i in range(len(preds)):
        correct += (preds[i] == labels[i]).sum().item()
    return correct
"""
        ),
        Valid(
            """
import torch

def exact(model, x, texts, decode):
    out = model(x)
    correct = 0
    for i in range(out.size(0)):
        correct += int(decode(out[i].argmax(dim=-1).cpu()) == texts[i])
    return correct
"""
        ),
        Valid(
            """
import torch

def running(pred: torch.Tensor, y: torch.Tensor, log):
    correct = 0
    for i in range(pred.size(0)):
        correct += pred[i].eq(y[i]).cpu().sum()
        log.append(correct)
    return correct
"""
        ),
        # bounded by the output's own sizes, but each position reads its neighbours (dynamic programming),
        # or the whole output: the positions depend on each other
        Valid(
            """
import torch

def alignment(cost: torch.Tensor):
    D = torch.zeros(cost.size(0) + 1, cost.size(1) + 1)
    for i in range(1, D.size(0)):
        for j in range(1, D.size(1)):
            D[i, j] = cost[i - 1, j - 1] + torch.minimum(D[i - 1, j], D[i, j - 1])
    return D
"""
        ),
        Valid(
            """
import torch

def pooled(x: torch.Tensor, k: int):
    out = torch.zeros(x.size(0) // k, x.size(1) // k)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = x[i * k:i * k + k, j * k:j * k + k].amax() + out.sum()
    return out
"""
        ),
        # a threshold per iteration against the whole tensor: a sweep, batched it multiplies the memory
        Valid(
            """
import torch

def curve(preds: torch.Tensor, thresholds: torch.Tensor):
    out = []
    for i in range(thresholds.size(0)):
        out.append(preds.masked_fill(preds >= thresholds[i], 0.0).sum())
    return torch.stack(out)
"""
        ),
        # near miss: the loop rolls the tensor whose view it indexes: each row comes from another tensor
        Valid(
            """
import torch


def shifted(scores, steps):
    out = []
    for i in range(scores[:, -1].size(0)):
        scores = scores.roll(1, dims=0)
        out.append(scores[:, -1][i].argmax(dim=-1))
    return torch.stack(out)
"""
        ),
        # a branch on a flag, not on the rows: every position gets the same value
        """
import torch


def labels(p: torch.Tensor, strict: bool):
    out = torch.zeros(p.shape[0])
    for i in range(p.shape[0]):
        if strict:
            out[i] = 1
        else:
            out[i] = 0
    return out
""",
        Valid(
            """
import torch


def accuracy(picked: list, labels: list):
    hits = [1 if picked[j] == labels[j] else 0 for j in range(len(labels))]
    return sum(hits) / len(hits)
"""
        ),
        Valid(
            """
import torch


def wrong_positions(scores: torch.Tensor, labels: torch.Tensor):
    _, picked = torch.max(scores, 1)
    return [j for j in range(len(labels)) if picked[j] != labels[j]]
"""
        ),
        Valid(
            """
import torch

scores = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
_, picked = torch.max(scores, 1)
# what each row should be, looked up by position in a dict (rows 0..2)
expected = {0: 1, 1: 0, 2: 0}
hits = sum(1 if picked[j] == expected[j] else 0 for j in range(len(expected)))
print("per element:", hits)
print("advice (picked == expected):", picked == expected)
"""
        ),
        Valid(
            """
import torch
from torch import nn


class MultiHead(nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.heads = nn.ModuleList([nn.Linear(8, 2) for _ in range(heads)])

    def forward(self, x):
        # one module per element: a loop over layers, not over a tensor's rows
        return torch.stack([self.heads[i](x) for i in range(len(self.heads))])
"""
        ),
        Valid(
            """
import torch


def augment_batch(images: torch.Tensor, augment):
    # each row goes through a function whose behaviour is not known (a random transform)
    return torch.stack([augment(img) for img in images])
"""
        ),
        Valid(
            """
import torch


def per_row_counts(labels: torch.Tensor):
    # bincount has no batched form; its length depends on each row's values
    return [torch.bincount(row) for row in labels]


def crops(batch: torch.Tensor):
    # the rows kept as a list of tensors (never stacked): possibly ragged afterwards
    pieces = [row * 2 for row in batch]
    return pieces


def stacked_copies(batch: torch.Tensor):
    # the rows themselves, unchanged
    return torch.stack([row for row in batch])
"""
        ),
        Valid(
            """
import torch


def summarize(features):
    # a list of tensors of different lengths: nothing says `features` is one tensor
    return torch.stack([f.mean(0) for f in features])
"""
        ),
        Valid(
            """
from typing import List, Union

import torch


def area_under(precision: Union[torch.Tensor, List[torch.Tensor]], recall):
    if isinstance(precision, torch.Tensor):
        precision = torch.nan_to_num(precision)
        return -torch.sum((recall[:, 1:] - recall[:, :-1]) * precision[:, :-1], 1)
    # a list of curves of different lengths: one at a time
    return torch.stack([-torch.sum((r[1:] - r[:-1]) * p[:-1]) for p, r in zip(precision, recall)])


def small_boxes(classes: torch.Tensor, areas):
    # Python numbers per element: no tensor work on the rows
    return torch.as_tensor([areas[i] <= 4 for i, c in enumerate(classes)], dtype=torch.bool)
"""
        ),
        Valid(
            """
import torch


def pool(features: torch.Tensor, lengths):
    # one mean per sequence of its own length: pieces, not the rows of one tensor
    features = features.split(lengths)
    return torch.stack([f.mean(0) for f in features])


def expand(counts: torch.Tensor):
    # each element sets the length of its own range: no batched form of the same shape
    return torch.cat([torch.arange(int(n)) for n in counts])


def shifted(x: torch.Tensor, shifts: torch.Tensor):
    return torch.stack([torch.roll(r, int(s)) for r, s in zip(x, shifts)])


def sizes(x: torch.Tensor):
    # metadata, the same for every row
    return torch.tensor([r.numel() + 1 for r in x])


def channel_means(img: torch.Tensor):
    img = img.reshape(3, 32, 32)
    return [c.mean().item() for c in img]
"""
        ),
    ]

    INVALID = [
        # the rows both tensors have: one row of each at a time (no fix: the loop covers a prefix of each)
        Invalid(
            """
import torch

def interleave(a: torch.Tensor, b: torch.Tensor):
    n = min(a.shape[0], b.shape[0])
    rows = []
    for i in range(n):
        rows.append(a[i].unsqueeze(0))
        rows.append(b[i].unsqueeze(0))
    return torch.cat(rows, 0)
""",
            line=7,
            col=5,
        ),
        Invalid(
            """
import torch

def norms(x: torch.Tensor):
    out = []
    for i in range(x.size(0)):
        out.append(torch.linalg.norm(x[i]))
    return torch.stack(out)
""",
            fixed="""
import torch

def norms(x: torch.Tensor):
    out = []
    for x_i in torch.unbind(x):
        out.append(torch.linalg.norm(x_i))
    return torch.stack(out)
""",
            line=6,
            col=5,
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def per_sample_loss(pred, target):
    loss = 0.0
    for b in range(pred.size(0)):
        loss += F.mse_loss(pred[b], target[b])
    return loss / pred.size(0)
""",
            message="`pred`, `target`",
        ),
        Invalid(
            """
import torch
import torch.nn as nn

class Tails(nn.Module):
    def __init__(self):
        super().__init__()
        self.project = nn.Linear(7, 4)

    def forward(self, feats):
        batch, length = feats.size()
        kept = []
        for b in range(batch):
            kept.append(self.project(feats[b, 1:]))
        return torch.cat(kept)
""",
            fixed="""
import torch
import torch.nn as nn

class Tails(nn.Module):
    def __init__(self):
        super().__init__()
        self.project = nn.Linear(7, 4)

    def forward(self, feats):
        batch, length = feats.size()
        kept = []
        for feats_b in torch.unbind(feats):
            kept.append(self.project(feats_b[1:]))
        return torch.cat(kept)
""",
            line=13,
        ),
        Invalid(
            """
import torch

def histograms(coords: torch.Tensor, edges):
    out = torch.empty(coords.shape[0], edges.numel())
    for i in range(coords.shape[0]):
        out[i] = torch.sigmoid(coords[i, :, None] - edges).mean(dim=0)
    return out
""",
            message="`out`, `coords`",
        ),
        Invalid(
            """
import torch

def row_scores(x: torch.Tensor):
    scores = []
    for i in range(len(x)):
        scores.append(x[i].mean() / x[i].std())
    print("rows:", i + 1)
    return torch.stack(scores)
""",
            fixed="""
import torch

def row_scores(x: torch.Tensor):
    scores = []
    for x_i in torch.unbind(x):
        scores.append(x_i.mean() / x_i.std())
    print("rows:", i + 1)
    return torch.stack(scores)
""",
            unsafe=True,
        ),
        # the wider data-flow analysis: reported without a fix, naming the batched idiom
        Invalid(
            """
import torch

def relu_rows(x: torch.Tensor, mask: torch.Tensor):
    out = torch.zeros_like(x)
    for i in range(x.size(0)):
        if mask[i]:
            out[i] = x[i] * 2
        else:
            out[i] = x[i]
    return out
""",
            message="torch.where",
        ),
        Invalid(
            """
import torch

def maxima(x: torch.Tensor):
    vals = []
    for i in range(x.size(0)):
        vals.append(x[i].max().item())
    return vals
""",
            message=".tolist()",
        ),
        Invalid(
            """
import torch

def class_sums(x: torch.Tensor, labels: torch.Tensor, n: int):
    acc = torch.zeros(n, x.size(1))
    for i in range(x.size(0)):
        acc[labels[i]] += x[i]
    return acc
""",
            message="index_add_",
        ),
        Invalid(
            """
import torch

def counts(labels: torch.Tensor, n: int):
    c = torch.zeros(n)
    for i in range(len(labels)):
        c[labels[i]] += 1
    return c
""",
            message="bincount",
        ),
        Invalid(
            """
import torch

def moving_average(x: torch.Tensor, k: int):
    outs = []
    for i in range(x.size(1) - k + 1):
        outs.append(x[:, i:i + k].mean(dim=1))
    return torch.stack(outs, dim=1)
""",
            message="unfold",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def per_sample(batch: torch.Tensor, labels: torch.Tensor):
    B = batch.shape[0]
    losses = []
    for b in range(B):
        losses.append(F.cross_entropy(batch[b], labels[b], reduction="sum"))
    return torch.stack(losses)
""",
            message="one row at a time",
        ),
        Invalid(
            """
import torch

def normalize_rows(x: torch.Tensor):
    for i, row in enumerate(x):
        x[i] = row / row.sum()
    return x
""",
        ),
        Invalid(
            """
import torch

def row_norms(x: torch.Tensor):
    res = []
    for row in x:
        res.append(torch.linalg.norm(row))
    return torch.stack(res)
""",
        ),
        Invalid(
            """
import torch

def column_std(x: torch.Tensor):
    n, d = x.shape
    cols = []
    for j in range(d):
        cols.append(x[:, j].std())
    return torch.stack(cols)
""",
            message="dim=",
        ),
        Invalid(
            """
import torch

def ordinal_cost(probas: torch.Tensor, targets: torch.Tensor, power: int):
    loss = torch.zeros(probas.shape[0])
    for example in range(probas.shape[0]):
        for i in range(probas.shape[1]):
            loss[example] += -torch.log1p(-probas[example, i]) * torch.abs(i - targets[example]) ** power
    return loss
""",
            line=7,
            message="dim=",
        ),
        # tallies over the elements, read one by one with `.item()` / `int(...)`
        Invalid(
            """
import torch

def label_histogram(y: torch.Tensor, n_classes: int):
    hist = [0] * n_classes
    for i in range(len(y)):
        hist[int(y[i].item())] += 1
    return hist
""",
            message="bincount",
        ),
        Invalid(
            """
import torch

def accuracy(scores: torch.Tensor, y: torch.Tensor):
    guesses = scores.argmax(dim=1)
    right = 0
    for i in range(y.shape[0]):
        if guesses[i].item() == y[i].item():
            right += 1
    return right / y.shape[0]
""",
            message="`.sum()`",
        ),
        Invalid(
            """
import torch

def agreement(a: torch.Tensor, b: torch.Tensor):
    same = 0
    for u, v in zip(a, b):
        if u.item() == v.item():
            same += 1
    return same
""",
            message="one element at a time",
        ),
        Invalid(
            """
import torch

def recall_per_class(scores, target, k):
    guess = scores.argmax(dim=-1)
    seen = [0 for _ in range(k)]
    right = [0 for _ in range(k)]
    for j in range(target.size(0)):
        t = int(target[j])
        seen[t] += 1
        if int(guess[j]) == t:
            right[t] += 1
    return [r / max(s, 1) for r, s in zip(right, seen)]
""",
            message="bincount",
        ),
        Invalid(
            """
import torch

def hit_rate(guess: torch.Tensor, truth: torch.Tensor):
    seen = hits = 0
    for k in range(truth.size(0)):
        seen += 1
        if int(guess[k]) == int(truth[k]):
            hits += 1
    return hits / seen
""",
            message="`.sum()`",
        ),
        # per-row selections collected in a list, the bound reached through a variable
        Invalid(
            """
import torch

def kth_smallest(x: torch.Tensor, k: int):
    picked = []
    for i in range(x.size(0)):
        picked.append(x[i].kthvalue(k).values)
    return torch.stack(picked)
""",
            message="kthvalue",
        ),
        Invalid(
            """
import torch

def top_ids(x: torch.Tensor, k: int):
    rows = x.size(0)
    ids = []
    for r in range(rows):
        ids.append(torch.topk(x[r], k).indices)
    return torch.stack(ids)
""",
            message="topk",
        ),
        Invalid(
            """
import torch

def winners(feats: torch.Tensor):
    count = feats.shape[0]
    best = []
    for r in range(count):
        best.append(torch.argmax(feats[r]))
    return best
""",
            message="argmax",
        ),
        # nested loops over output positions: windows (convolution, pooling), masked reductions, pairs
        Invalid(
            """
import torch

def correlate(image: torch.Tensor, kernel: torch.Tensor):
    kh, kw = kernel.shape
    h, w = image.shape
    out = torch.zeros(h - kh + 1, w - kw + 1)
    for y in range(h - kh + 1):
        for x in range(w - kw + 1):
            out[y, x] = torch.sum(image[y:y + kh, x:x + kw] * kernel)
    return out
""",
            line=8,
            message="F.conv2d",
        ),
        Invalid(
            """
import torch

def conv_channels(x: torch.Tensor, weight: torch.Tensor, k: int):
    n, c, h, w = x.shape
    out = torch.zeros(n, h - k + 1, w - k + 1)
    for i in range(h - k + 1):
        for j in range(w - k + 1):
            patch = x[:, :, i:i + k, j:j + k]
            out[:, i, j] = (patch * weight).sum(dim=(1, 2, 3))
    return out
""",
            message="F.conv2d",
        ),
        Invalid(
            """
import torch

def pool(x: torch.Tensor, s: int):
    n, c, h, w = x.shape
    out = x.new_zeros(n, c, h // s, w // s)
    for i in range(h // s):
        for j in range(w // s):
            out[:, :, i, j] = x[:, :, i * s:i * s + s, j * s:(j + 1) * s].amax(dim=(-2, -1))
    return out
""",
            message="F.max_pool2d",
        ),
        Invalid(
            """
import torch

def smooth(x: torch.Tensor, k: int):
    rows, cols = x.shape[-2], x.shape[-1]
    out = torch.empty(*x.shape[:-2], rows - k + 1, cols - k + 1)
    for r in range(rows - k + 1):
        for c in range(cols - k + 1):
            out[..., r, c] = x[..., r:r + k, c:c + k].mean(dim=(-2, -1))
    return out
""",
            message="F.avg_pool2d",
        ),
        Invalid(
            """
import torch

def region_means(feat: torch.Tensor, seg: torch.Tensor, regions: int):
    means = torch.zeros(feat.size(0), regions)
    for b in range(feat.size(0)):
        for r in range(regions):
            means[b, r] = feat[b][seg[b] == r].mean()
    return means
""",
            message="masked batched reduction",
        ),
        Invalid(
            """
import torch

def centers(feat: torch.Tensor, seg: torch.Tensor, k: int):
    B = feat.size(0)
    out = torch.zeros(B, k)
    for b in range(B):
        for c in range(k):
            mask = seg[b] == c
            out[b, c] = (feat[b] * mask).sum() / mask.sum().clamp(min=1)
    return out
""",
            message="masked batched reduction",
        ),
        Invalid(
            """
import torch

def gram(a: torch.Tensor, b: torch.Tensor):
    sim = torch.zeros(len(a), len(b))
    for i in range(len(a)):
        for j in range(len(b)):
            sim[i][j] = (a[i] * b[j]).sum()
    return sim
""",
            message="einsum",
        ),
        Invalid(
            """
import torch

def dots(a: torch.Tensor, b: torch.Tensor):
    out = torch.zeros(a.size(0), b.size(0))
    for i in range(a.size(0)):
        for j in range(b.size(0)):
            out[i, j] = torch.dot(a[i], b[j])
    return out
""",
            message="matmul",
        ),
        Invalid(
            """
import torch

def attention(q: torch.Tensor, k: torch.Tensor):
    n, m = q.size(0), k.size(0)
    scores = q.new_empty(n, m)
    for s in range(n):
        for t in range(m):
            scores[s, t] = q[s] @ k[t] / q.size(1) ** 0.5
    return scores
""",
            message="one pair of rows at a time",
        ),
        Invalid(
            """
import torch

def similarities(tokens: torch.Tensor):
    sims = torch.empty(tokens.size(0), tokens.size(0))
    for a, u in enumerate(tokens):
        for b, v in enumerate(tokens):
            sims[a, b] = torch.dot(u, v)
    return sims
""",
            line=6,
            message="einsum",
        ),
        # per-row scores stacked afterwards: one matmul
        Invalid(
            """
import torch

def scores(queries: torch.Tensor, keys: torch.Tensor):
    out = []
    for i in range(queries.size(0)):
        out.append(queries[i] @ keys.T)
    return torch.stack(out)
""",
            fixed="""
import torch

def scores(queries: torch.Tensor, keys: torch.Tensor):
    out = []
    for queries_i in torch.unbind(queries):
        out.append(queries_i @ keys.T)
    return torch.stack(out)
""",
            message="one `matmul`",
        ),
        Invalid(
            """
import torch

def project(x: torch.Tensor, w: torch.Tensor):
    out = []
    for row in x:
        out.append(torch.matmul(w, row))
    return torch.stack(out)
""",
            message="matmul",
        ),
        Invalid(
            """
import torch

def tint(img: torch.Tensor, n: int):
    wheel = torch.rand(55, n)
    out = torch.empty(img.size(0), n, img.size(2))
    for c in range(wheel.shape[1]):
        out[:, c] = img[:, c] * torch.sum(wheel[:, c])
    return out
""",
        ),
        # the index name is bound again after the loop before it is read: the loop's last value is dead
        Invalid(
            """
import torch

def scores(tokens: torch.Tensor, query: torch.Tensor):
    s = torch.empty(tokens.size(0))
    for i, t in enumerate(tokens):
        s[i] = torch.dot(t, query)
    for i in range(3):
        print(s[i])
    return s
""",
            line=6,
            message="matmul",
        ),
        Invalid(
            """
import torch

def lengths(x: torch.Tensor):
    out = torch.empty(x.size(0))
    for k, row in enumerate(x):
        out[k] = row.norm()
    k = x.size(1)
    return out[:k]
""",
            line=6,
        ),
        # pairwise distances in a nest: one torch.cdist
        Invalid(
            """
import torch

def distances(x: torch.Tensor, y: torch.Tensor):
    out = torch.zeros(x.size(0), y.size(0))
    for i in range(x.size(0)):
        for j in range(y.size(0)):
            out[i, j] = torch.norm(x[i] - y[j])
    return out
""",
            line=6,
            message="torch.cdist",
        ),
        Invalid(
            """
import torch

def distances(x: torch.Tensor, y: torch.Tensor):
    n, m = x.shape[0], y.shape[0]
    d = x.new_zeros(n, m)
    for a in range(n):
        for b in range(m):
            d[a, b] = ((x[a] - y[b]) ** 2).sum().sqrt()
    return d
""",
            line=7,
            message="torch.cdist",
        ),
        Invalid(
            """
import torch
import torch.nn.functional as F

def distances(x: torch.Tensor, y: torch.Tensor):
    d = torch.empty(len(x), len(y))
    for a, u in enumerate(x):
        for b, v in enumerate(y):
            d[a, b] = F.pairwise_distance(u, v)
    return d
""",
            line=7,
            message="torch.cdist",
        ),
        Invalid(
            """
import torch
from torch.nn import functional as F

def distances(x: torch.Tensor, y: torch.Tensor):
    d = torch.empty(len(x), len(y))
    for i in range(len(x)):
        for j in range(len(y)):
            d[i, j] = F.pairwise_distance(x[i], y[j])
    return d
""",
            line=7,
            message="pairwise distance",
        ),
        Invalid(
            """
import torch

def manhattan(x: torch.Tensor):
    d = torch.empty(len(x), len(x))
    for i in range(len(x)):
        for j in range(len(x)):
            d[i, j] = (x[i] - x[j]).abs().sum()
    return d
""",
            line=6,
            message="torch.cdist",
        ),
        # a convolution written with its kernel loops inside: reported once, at the outermost loop
        Invalid(
            """
import torch

def conv(x: torch.Tensor, w: torch.Tensor):
    kh, kw = w.shape
    out = torch.zeros(x.size(0) - kh + 1, x.size(1) - kw + 1)
    for i in range(out.size(0)):
        for j in range(out.size(1)):
            for di in range(kh):
                for dj in range(kw):
                    out[i, j] += x[i + di, j + dj] * w[di, dj]
    return out
""",
            line=7,
            message="F.conv2d",
        ),
        Invalid(
            """
import torch

def conv_batched(x: torch.Tensor, w: torch.Tensor):
    oh, ow = x.shape[2] - 2, x.shape[3] - 2
    out = x.new_zeros(x.shape[0], x.shape[1], oh, ow)
    for i in range(oh):
        for j in range(ow):
            for di in range(3):
                for dj in range(3):
                    out[:, :, i, j] += w[di, dj] * x[:, :, i + di, j + dj]
    return out
""",
            line=7,
            message="F.conv2d",
        ),
        Invalid(
            """
import torch

def conv_strided(x: torch.Tensor, w: torch.Tensor, s: int):
    k = w.size(0)
    oh = (x.size(0) - k) // s + 1
    ow = (x.size(1) - k) // s + 1
    out = torch.zeros(oh, ow)
    for i in range(oh):
        for j in range(ow):
            for di in range(k):
                for dj in range(k):
                    out[i, j] += x[i * s + di, j * s + dj] * w[di, dj]
    return out
""",
            line=9,
            message="F.conv2d",
        ),
        Invalid(
            """
import torch

def conv_acc(x: torch.Tensor, w: torch.Tensor):
    k = w.size(0)
    out = torch.zeros(x.size(0) - k + 1, x.size(1) - k + 1)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            acc = 0.0
            for di in range(k):
                for dj in range(k):
                    acc += x[i + di, j + dj] * w[di, dj]
            out[i, j] = acc
    return out
""",
            line=7,
            message="F.conv2d",
        ),
        # two loops over two dimensions of the same tensors, each [i, c] slice the work of one iteration:
        # one report, at the outer loop; where the outer index is used as a number or the outer loop walks
        # another tensor, only the inner loop is reported, as before
        Invalid(
            """
import torch

def match_stats(x: torch.Tensor, ref: torch.Tensor):
    out = x.clone()
    for b in range(x.size(0)):
        for ch in range(x.size(1)):
            mu, sd = ref[b, ch].mean(), ref[b, ch].std()
            out[b, ch] = (x[b, ch] - x[b, ch].mean()) / x[b, ch].std() * sd + mu
    return out
""",
            line=6,
            message="Nested loops process `x` one `[b, ch]` slice",
        ),
        Invalid(
            """
import torch

def channel_means(x: torch.Tensor):
    means = []
    for b in range(x.shape[0]):
        for ch in range(x.shape[1]):
            means.append(x[b, ch].mean().item())
    return means
""",
            line=6,
            message="Nested loops process `x` one `[b, ch]` slice",
        ),
        Invalid(
            """
import torch

def weighted(x: torch.Tensor):
    out = x.clone()
    for b in range(x.size(0)):
        for ch in range(x.size(1)):
            out[b, ch] = x[b, ch] * b
    return out
""",
            line=7,
            message="Loop processes `x` one slice along dim 1",
        ),
        Invalid(
            """
import torch

def other(x: torch.Tensor, y: torch.Tensor):
    out = x.clone()
    for b in range(y.size(0)):
        for ch in range(x.size(1)):
            out[b, ch] = x[b, ch].mean()
    return out
""",
            line=7,
            message="Loop processes `x` one slice along dim 1",
        ),
        # a confusion matrix filled pair by pair: zipped rows, `.item()` keys, `int()` keys
        Invalid(
            """
import torch


def confusion(guesses, truth, k):
    table = torch.zeros(k, k, dtype=torch.long)
    for t, g in zip(truth, guesses):
        table[t, g] += 1
    return table


confusion(torch.randint(0, 4, (32,)), torch.randint(0, 4, (32,)), 4)
""",
            line=7,
            message="`torch.bincount(t * n + p, minlength=n * n).view(n, n)`",
        ),
        Invalid(
            """
import torch


def confusion(out: torch.Tensor, y: torch.Tensor, k: int):
    table = torch.zeros(k, k)
    for j in range(y.size(0)):
        table[y[j].item(), out[j].item()] += 1
    return table
""",
            line=7,
            message="count all pairs in one call",
        ),
        Invalid(
            """
import torch


def confusion(out: torch.Tensor, y: torch.Tensor, k: int):
    table = torch.zeros(k, k)
    for a, b in zip(y, out):
        table[int(a), int(b)] += 1
    return table


def histogram(y: torch.Tensor, k: int):
    counts = torch.zeros(k)
    for a in y:
        counts[a] += 1
    return counts
""",
            count=2,
            message="one element at a time",
        ),
        # a per-class tally over `range(self.batch_size)`, the size the class's DataLoader is given
        Invalid(
            """
import torch
from torch.utils.data import DataLoader


class Scorer:
    def __init__(self, data, k, batch_size=32):
        self.batch_size = batch_size
        self.k = k
        self.batches = DataLoader(data, batch_size=self.batch_size, drop_last=True)

    def per_class(self, model):
        right = [0] * self.k
        for x, y in self.batches:
            guess = model(x).argmax(1)
            for j in range(self.batch_size):
                c = y[j].item()
                if guess[j].item() == c:
                    right[c] += 1
        return right
""",
            line=16,
            message="Loop processes `y` one element at a time",
        ),
        # a count of matches per row: `.cpu()` copies the row to the host, the count is the same
        Invalid(
            """
import torch

def evaluate(model, loader):
    correct = 0
    for data, target in loader:
        pred = model(data).argmax(dim=1, keepdim=True)
        labels = target.view_as(pred)
        for i in range(pred.size(0)):
            correct += pred[i].eq(labels[i]).cpu().sum()
    return correct
""",
            message="a boolean mask over all elements and one `.sum()`",
        ),
        Invalid(
            """
import torch

def accuracy(logits: torch.Tensor, y: torch.Tensor):
    predicted = logits.argmax(dim=-1)
    hits = 0
    for b in range(y.size(0)):
        hits += (predicted[b] == y[b]).sum().item()
    return hits / y.size(0)
""",
            message="Loop processes `y` one element at a time",
        ),
        Invalid(
            """
import torch

def accuracy(predicted, y):
    n = y.size(0)
    wrong = 0
    for b in range(n):
        wrong += predicted[b].ne(y[b]).float().sum()
    return wrong
""",
        ),
        # nested loops over the output's positions, bounded by the output's own sizes
        Invalid(
            """
import torch

def correlate(img: torch.Tensor, kernel: torch.Tensor, kh: int, kw: int):
    out = torch.zeros(img.size(0) - kh + 1, img.size(1) - kw + 1)
    for r in range(out.size(0)):
        for c in range(out.size(1)):
            out[r, c] = (img[r:r + kh, c:c + kw] * kernel).sum()
    return out
""",
            line=6,
            message="`F.conv2d`",
        ),
        Invalid(
            """
import torch

def pool(x: torch.Tensor, k: int):
    out = torch.empty(x.size(0) // k, x.size(1) // k)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = x[i * k:i * k + k, j * k:j * k + k].amax()
    return out
""",
            message="`F.max_pool2d`",
        ),
        # each row's k-th value without its own label: the label's mask fills the row itself (as large
        # as the rows when batched, not a sweep); a string literal (`float("-inf")`) is a constant
        Invalid(
            """
import torch

def hardest_negative(scores: torch.Tensor, labels: torch.Tensor, k: int):
    cols = torch.arange(scores.size(1))
    out = []
    for i in range(scores.size(0)):
        row = scores[i].masked_fill(cols == labels[i], -1e9)
        out.append(row.kthvalue(k).values)
    return torch.stack(out)
""",
            message="one `kthvalue` over all rows",
        ),
        Invalid(
            """
import torch

def top_without_nan(scores: torch.Tensor, k: int):
    picked = []
    for b in range(scores.size(0)):
        picked.append(scores[b].masked_fill(scores[b].isnan(), float("-inf")).topk(k).values)
    return torch.stack(picked)
""",
            message="one `topk` over all rows",
        ),
        # the rows of a constant view (`logits[:, -1]`, the last position of each sequence), one at a time
        Invalid(
            """
import torch


def greedy(model, ids, steps):
    for _ in range(steps):
        logits = model(ids)
        picked = []
        for i in range(logits[:, -1].size(0)):
            picked.append(logits[:, -1][i].argmax(dim=-1))
        ids = torch.cat([ids, torch.stack(picked)[:, None]], dim=1)
    return ids
""",
            line=9,
        ),
        # counters made with `list(...)`, indexed by the element itself (only a 0-d integer tensor can index a list)
        Invalid(
            """
import torch


def per_class(pred: torch.Tensor, target: torch.Tensor):
    class_correct = list(0. for i in range(10))
    class_total = list(0. for i in range(10))
    correct = pred.eq(target)
    for i in range(len(target)):
        label = target[i]
        class_correct[label] += correct[i].item()
        class_total[label] += 1
    return class_correct, class_total
""",
            line=9,
            message="`torch.bincount(labels, minlength=n)`",
        ),
        # a threshold written row by row as constants under an `if` on the row: one `torch.where`
        Invalid(
            """
import torch


def to_labels(probs: torch.Tensor):
    labels = torch.zeros(probs.shape[0])
    for i in range(probs.shape[0]):
        if probs[i, 0] <= 0.5:
            labels[i] = 0
        else:
            labels[i] = 1
    return labels
""",
            line=7,
            message="`torch.where`",
        ),
        Invalid(
            """
import torch


def accuracy(scores: torch.Tensor, labels: torch.Tensor):
    _, picked = torch.max(scores, 1)
    hits = [1 if picked[j] == labels[j] else 0 for j in range(len(labels))]
    return sum(hits) / len(hits)
""",
            line=7,
            message="Comprehension tests `picked` and `labels` one element at a time",
        ),
        Invalid(
            """
import torch


def scale(x: torch.Tensor, w):
    return torch.stack([torch.relu(r) * w for r in x])
""",
            line=6,
            message="Comprehension processes `x` one row at a time",
        ),
        Invalid(
            """
import torch


def predicted_classes(logits: torch.Tensor):
    return [int(logits[i].argmax()) for i in range(logits.size(0))]
""",
            line=6,
            message="one `argmax` over all rows",
        ),
        Invalid(
            """
import torch

a = torch.randn(16, 4)
b = torch.randn(16, 4)
products = torch.cat([(p * q).sum().view(1) for p, q in zip(a, b)])
""",
            line=6,
            message="Comprehension processes `a` one row",
        ),
        Invalid(
            """
import torch

scores = torch.rand(32, 10)
best = torch.tensor([row.max().item() for row in scores])
""",
            line=5,
            message="one `max` over all rows",
        ),
        Invalid(
            """
import torch

grid = torch.rand(64, 3)
shifted = torch.stack([row * 2 - 1 for row in grid])
""",
            line=5,
            message="Comprehension processes `grid` one row at a time",
        ),
    ]

    def leave_For(self, node: cst.For) -> None:
        ctx = self.ctx
        nest = nested_slice_work(ctx, node) or kernel_nest(ctx, node)
        if nest is not None:
            self._nested(nest)
            return
        if inside_kernel_nest(ctx, node):
            return  # a convolution's kernel loops: reported once, at the outermost loop
        outer = inner_of_nest(ctx, node)
        if outer is not None and nested_slice_work(ctx, outer) is not None:
            return  # the nest is reported once, at its outer loop
        ri = row_indexing(ctx, node)
        if ri is None:
            self._independent_work(node)
            return
        fix = self._fix(ri) if ri.reads_only_rows and ri.full else None
        x = ctx.code(ri.tensor)
        var = ri.var.value
        if per_row_product(ctx, node, ri.tensor):
            message = (
                f"Loop computes the scores of `{x}[{var}]` one row at a time; they are the rows of one "
                f"product: one `matmul` over all of `{x}` (`{x} @ w`, or `torch.einsum`) replaces the loop"
                + (f" (at least, iterate over `torch.unbind({x})`)" if fix is not None else "")
            )
        elif fix is not None:
            message = (
                f"Loop indexes the rows of `{x}` one at a time (by `{var}`); iterate over `torch.unbind({x})`, "
                f"or better, apply the body to all of `{x}` at once along dim 0"
            )
        else:
            names = ", ".join(f"`{ctx.code(t)}`" for t in ri.indexed)
            message = (
                f"Loop over the rows of `{x}` indexes {names} one row at a time; vectorize the body: "
                f"apply its operations to whole tensors along dim 0 (batched ops, `torch.vmap`)"
            )
        self.report(node, message, fix=fix)

    def __init__(self, ctx, options=None) -> None:
        super().__init__(ctx, options)
        self._comprehensions: List[cst.CSTNode] = []

    def leave_ListComp(self, node: cst.ListComp) -> None:
        self._comprehension(node)

    def leave_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._comprehension(node)

    def leave_Module(self, node: cst.Module) -> None:
        for comp in self._comprehensions:  # asked again after the walk, when every binding is known
            self._comprehension(comp, last=True)

    def _comprehension(self, node: cst.CSTNode, last: bool = False) -> None:
        """``[1 if pred[j] == y[j] else 0 for j in range(n)]``: one test per element, one comparison in all.
        Asked where the walk is (a parameter's annotation and uses are in view) and, failing that, after it
        (``_, pred = torch.max(s, 1)`` unpacked)."""
        tally = comprehension_tally(self.ctx, node)
        if tally is None:
            if self._row_comprehension(node) or last:
                return
            self._comprehensions.append(node)
            return
        ctx = self.ctx
        test = tally.test
        # each element is one value (the test is turned into one number), so the tensors hold one value per
        # index: flattened, they compare element for element, whatever their shapes ([6, 1] against [6])
        left, right = (ctx.code(side).strip() + (".flatten()" if isinstance(side, (cst.Name, cst.Attribute)) else "")
                       for side in tally.operands)
        whole = f"({left} {ctx.code(test.comparisons[0].operator).strip()} {right})"
        names = " and ".join(f"`{ctx.code(t).strip()}`" for t in tally.tensors)
        self.report(
            node,
            f"Comprehension tests {names} one element at a time (by `{tally.var}`), a tensor index and a "
            f"host sync per element; one element-wise comparison `{whole}` tests them all (then `.sum()`, "
            f"or `.long().tolist()` for the list; slice the tensors to `[:n]` if the range is shorter)",
        )

    def _row_comprehension(self, node: cst.CSTNode) -> bool:
        """``torch.stack([f(r) for r in x])``: a comprehension over a tensor's slices doing the same independent
        work per slice, reported (without a fix) at the collector, or at a list of numbers."""
        found = comprehension_row_work(self.ctx, node)
        if found is None:
            return False
        work, where = found
        x = self.ctx.code(work.tensor).strip()
        what = "row" if work.dim == 0 else f"slice along dim {work.dim}"
        self.report(
            where,
            f"Comprehension processes `{x}` one {what} at a time and no element needs another's result; "
            f"vectorize it: {work.idiom()}",
        )
        return True

    def _nested(self, nest: NestedWork) -> None:
        ctx = self.ctx
        where = f"`{ctx.code(nest.target).strip()}`"
        what = {"conv": "one window at a time", "max_pool": "one window at a time",
                "avg_pool": "one window at a time", "window": "one window at a time",
                "masked": "one masked reduction per pair", "pairs": "one pair of rows at a time",
                "distance": "one pairwise distance at a time"}[nest.kind]
        self.report(
            nest.outer,
            f"Nested loops compute {where} {what} and no position needs another's result; "
            f"vectorize the nest: {nest.idiom()}",
        )

    def _independent_work(self, node: cst.For) -> None:
        """Per-row, per-column or per-window work that no iteration shares with another (decided from
        what each iteration reads and writes), reported without a fix, naming the batched idiom."""
        ctx = self.ctx
        pair = nested_row_work(ctx, node)
        if pair is not None:
            work, inner = pair
            x = ctx.code(work.tensor).strip()
            self.report(
                node,
                f"Nested loops process `{x}` one `[{ctx.code(node.target).strip()}, "
                f"{ctx.code(inner.target).strip()}]` slice at a time and no position needs another's result; "
                f"vectorize the nest: {work.idiom()}",
            )
            return
        outer = inner_of_nest(ctx, node)
        if outer is not None and row_indexing(ctx, outer) is None and nested_row_work(ctx, outer) is not None:
            return  # the nest is reported once, at its outer loop
        work = independent_row_work(ctx, node)
        if work is None:
            return
        x = ctx.code(work.tensor).strip()
        what = "window" if work.window else ("row" if work.dim == 0 else f"slice along dim {work.dim}")
        if work.tally:
            what = "element"
        self.report(
            node,
            f"Loop processes `{x}` one {what} at a time and no iteration needs another's result; "
            f"vectorize it: {work.idiom()}",
        )

    def _fix(self, ri: RowIndexing) -> Optional[Fix]:
        ctx = self.ctx
        loop = ri.loop
        var = ri.var.value
        row = self._row_name(ri)
        if row is None:
            return None
        x = ctx.code(ri.tensor)
        torch_bound = ctx.names.qualified_names(cst.Name("torch")) == frozenset({"torch"})
        iterable = f"torch.unbind({x})" if torch_bound else f"{x}.unbind()"
        fix = self.make_fix(unsafe=used_outside(ctx, loop, var) or None)
        fix.replace(loop.target, cst.Name(row))
        fix.replace(loop.iter, ctx.parse_expression(iterable))
        for use in ri.uses:
            sub = use.subscript
            if sub is None:
                return None
            if len(sub.slice) == 1:
                new: cst.BaseExpression = cst.Name(row, lpar=sub.lpar, rpar=sub.rpar)
            else:
                rest = ", ".join(ctx.code(el).strip().rstrip(",").strip() for el in sub.slice[1:])
                new = ctx.parse_expression(f"{row}[{rest}]").with_changes(lpar=sub.lpar, rpar=sub.rpar)
            fix.replace(sub, new)
        return fix

    def _row_name(self, ri: RowIndexing) -> Optional[str]:
        ctx = self.ctx
        base = ri.tensor
        while isinstance(base, cst.Attribute):
            base = base.attr  # type: ignore[assignment]
        if not isinstance(base, cst.Name):
            return None
        scope = ctx.names.function_scope_node() or ctx.module
        candidate = f"{base.value}_{ri.var.value}"
        for suffix in ("", "_row", "_row2", "_row3"):
            name = candidate + suffix
            if not ctx.names_in(scope, name) and ctx.names.lookup(name) is None:
                return name
        return None
