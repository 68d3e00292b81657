"""What kind of training object a name holds (optimizer, scheduler, scaler): decided by what builds it; a
name's spelling is read only when nothing shows what built the value."""
from __future__ import annotations

import libcst as cst

from torchlint.analysis.context import FileContext
from torchlint.analysis.project import Project
from torchlint.analysis.training import object_kind
from torchlint.analysis.traversal import analyze


def _kinds(path, source):
    ctx = FileContext(str(path), source, cst.parse_module(source), Project())
    analyze(ctx)
    out = {}
    for name in ("opts", "sched", "opt", "scheduler"):
        reads = [n for n in ctx.names_in(ctx.module, name) if not isinstance(ctx.parent(n), cst.AssignTarget)]
        if reads:
            out[name] = object_kind(ctx, reads[-1])
    return out


def test_a_value_a_library_other_than_torch_builds_is_no_optimizer_whatever_its_name(tmp_path):
    source = ("import argparse\nimport torch\n\nparser = argparse.ArgumentParser()\nopts = parser.parse_args()\n"
              "sched = {'step': 10}\nopt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)\n"
              "print(opts, sched, opt)\n")
    assert _kinds(tmp_path / "a.py", source) == {"opts": None, "sched": None, "opt": "optimizer"}


def test_what_a_project_function_returns_keeps_the_guess_of_its_name(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "schedulers.py").write_text("def get_scheduler(opt, cfg):\n    return cfg\n")
    source = "from schedulers import get_scheduler\n\nscheduler = get_scheduler(None, {})\nscheduler.step()\n"
    path = tmp_path / "train.py"
    path.write_text(source)
    assert _kinds(path, source) == {"scheduler": "scheduler"}
