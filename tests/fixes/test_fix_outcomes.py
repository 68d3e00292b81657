"""What a fix run reports and leaves behind: findings a fix does not fix stay reported, the summary
counts findings (not edits), a shared edit is made once, `--diff` with nothing to fix says so, and
advice that cannot work on the project's declared torch is not given as an edit."""
from torchlint.engine import Settings, lint_source
from torchlint.rules import all_rules

RULES = [r for r in all_rules() if r.DEFAULT_ENABLED]

PREDICTION_AFTER_TRAINING = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Sequential(nn.Linear(4, 16), nn.Dropout(0.5), nn.Linear(16, 3))
optimizer = torch.optim.Adam(model.parameters())
for features, targets in train_loader:
    optimizer.zero_grad()
    F.cross_entropy(model(features), targets).backward()
    optimizer.step()

logits = model(features[0, None])
print(logits.softmax(dim=1))
"""

TWO_LOOPS = """\
import torch
import torch.nn as nn

vgg = nn.Sequential(nn.Linear(4, 2))
clf = nn.Sequential(nn.Linear(4, 2))


def report(loader):
    vgg.eval()
    clf.eval()
    acc = []
    for x, y in loader:
        acc.append((vgg(x).argmax(1) == y).float().mean().item())
    for x, y in loader:
        acc.append((clf(x).argmax(1) == y).float().mean().item())
    return acc
"""


def _fix(source, unsafe=False):
    return lint_source("train.py", source, Settings(rules=RULES, fix=True, unsafe_fixes=unsafe))


def test_no_grad_fix_keeps_the_training_mode_finding_on_the_same_line():
    before = lint_source("train.py", PREDICTION_AFTER_TRAINING, Settings(rules=RULES))
    assert sorted(d.code for d in before.diagnostics) == ["TL105", "TL106"]
    result = _fix(PREDICTION_AFTER_TRAINING)
    assert "with torch.no_grad():\n    logits = model(features[0, None])" in result.fixed_source
    # the model still runs in training mode (dropout on): TL106 is still a true finding
    assert [d.code for d in result.diagnostics] == ["TL106"]
    assert result.fixed_count == 1


def test_summary_counts_findings_fixed_and_remaining(run, tmp_path):
    (tmp_path / "train.py").write_text(PREDICTION_AFTER_TRAINING)
    r = run("check", "--isolated", "--no-cache", "--fix", "train.py")
    assert "Found 2 errors (1 fixed, 1 remaining)." in r.stdout, r.stdout
    assert "TL106" in r.stdout


def test_neighbouring_loops_share_one_no_grad_block_and_count_as_two_findings(run, tmp_path):
    result = _fix(TWO_LOOPS)
    assert result.fixed_source.count("with torch.no_grad():") == 1
    assert "    with torch.no_grad():\n        for x, y in loader:\n" in result.fixed_source
    assert result.diagnostics == [] and result.fixed_count == 2
    (tmp_path / "report.py").write_text(TWO_LOOPS)
    r = run("check", "--isolated", "--no-cache", "--fix", "report.py")
    assert "Found 2 errors (2 fixed, 0 remaining)." in r.stdout, r.stdout


def test_diff_with_nothing_to_fix_says_so(run, tmp_path):
    (tmp_path / "clean.py").write_text("import torch\n\nx = torch.zeros(3)\n")
    r = run("check", "--isolated", "--no-cache", "--diff", "clean.py")
    assert (r.returncode, r.stdout) == (0, "")
    assert "No fixes available: no findings." in r.stderr
    # a finding whose only fix is unsafe: nothing to show without --unsafe-fixes
    (tmp_path / "load.py").write_text("import torch\n\nstate = torch.load('ckpt.pt', weights_only=False)\n")
    r = run("check", "--isolated", "--no-cache", "--diff", "load.py")
    assert (r.returncode, r.stdout) == (1, "")
    assert "No fixes available (1 finding without an applicable fix; 1 hidden fix can be enabled" in r.stderr
    r = run("check", "--isolated", "--no-cache", "--diff", "-", stdin=(tmp_path / "load.py").read_text())
    assert r.returncode == 1 and "No fixes available" in r.stderr
    # with something to fix: the diff, and no such line
    r = run("check", "--isolated", "--no-cache", "--diff", "--unsafe-fixes", "load.py")
    assert r.returncode == 1 and "weights_only=True" in r.stdout and "No fixes available" not in r.stderr


def test_weights_only_advice_for_a_project_on_torch_before_1_13(run, tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=1.5\n")
    source = "import torch\n\nstate = torch.load('ckpt.pt')\n"
    (tmp_path / "load.py").write_text(source)
    r = run("check", "--no-cache", "--fix", "--unsafe-fixes", "load.py")
    assert (tmp_path / "load.py").read_text() == source  # `weights_only` would be a TypeError on torch 1.5
    assert "TL501" in r.stdout and "has no `weights_only`" in r.stdout and "torch 1.5" in r.stdout
    (tmp_path / "requirements.txt").write_text("torch>=1.13\n")
    run("check", "--no-cache", "--fix", "--unsafe-fixes", "load.py")
    assert "weights_only=True" in (tmp_path / "load.py").read_text()


def test_evaluation_generator_gets_the_decorator():
    source = (
        "import torch\n\n\n"
        "def evaluate_batches(model, loader):\n"
        "    model.eval()\n"
        "    for x, y in loader:\n"
        "        yield (model(x).argmax(1) == y).float().mean().item()\n"
    )
    result = _fix(source)
    assert result.fixed_source == source.replace("def evaluate_batches", "@torch.no_grad()\ndef evaluate_batches")
    # yielding a model output: a consumer could differentiate it, so the decorator is unsafe there
    tensors = source.replace("(model(x).argmax(1) == y).float().mean().item()", "model(x)")
    assert _fix(tensors).fixed_source is None
    assert "@torch.no_grad()" in _fix(tensors, unsafe=True).fixed_source


def test_softplus_fix_keeps_the_line_breaks_of_the_call():
    source = (
        "import torch\n\n\n"
        "def pair_loss(margin_between_positive_and_negative_scores, scale_of_margin_for_each_pair):\n"
        "    loss = torch.log(\n"
        "        1 + torch.exp(-margin_between_positive_and_negative_scores * scale_of_margin_for_each_pair)\n"
        "    ).mean()\n"
        "    return loss\n"
    )
    fixed = _fix(source).fixed_source
    assert fixed == source.replace("torch.log(\n", "torch.nn.functional.softplus(\n").replace(
        "1 + torch.exp(-margin_between_positive_and_negative_scores * scale_of_margin_for_each_pair)",
        "-margin_between_positive_and_negative_scores * scale_of_margin_for_each_pair",
    )
    assert max(len(line) for line in fixed.splitlines()) <= 100


def test_model_output_handed_to_a_given_callable_makes_the_no_grad_fix_unsafe():
    source = (
        "import torch\n\n\n"
        "def validate(model, loader, on_batch):\n"
        "    model.eval()\n"
        "    correct = 0\n"
        "    for x, y in loader:\n"
        "        out = model(x)\n"
        "        on_batch(out, y)  # may differentiate `out`\n"
        "        correct += (out.argmax(1) == y).sum().item()\n"
        "    return correct\n"
    )
    safe = _fix(source)
    assert safe.fixed_source is None
    tl105 = [d for d in safe.diagnostics if d.code == "TL105"]
    assert len(tl105) == 1 and tl105[0].fix.applicability == "unsafe"
    assert "@torch.no_grad()\ndef validate" in _fix(source, unsafe=True).fixed_source
