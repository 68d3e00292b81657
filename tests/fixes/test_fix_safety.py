"""Fix safety, checked by running programs.

Every program in ``tests/fix_safety/`` runs with torch three times: as written, after ``--fix`` and
after ``--fix --unsafe-fixes``.  The fixed versions run where torchlint cannot be imported (as under the
``torchlint-fix`` pre-commit hook, where torchlint lives only in pre-commit's environment).  Each run is a
process of its own, forked from a Python that imported torch once (``tests/warm_python.py``).  The first
line of each program says what must hold::

    # fix-safety: codes=TL206,TL302 safe=changed unsafe=same keep="# comment" absent=TL401 xfail="why"

A program may be a notebook (``.ipynb``, the line at the top of its first code cell): it runs as its
code cells in order, and after each fix every code cell must still parse on its own.

- ``codes``: reported on the program as written (the trap is really there);
- ``absent``: not reported on it;
- ``safe`` / ``unsafe``: ``same`` -- the fixed program prints exactly what the original printed;
  ``changed`` -- the fix edited the file and the printed results differ (the bug is gone);
- ``keep``: text the fixed file must still contain (a comment above replaced code);
- ``xfail``: the trap needs a rule change that is not on this branch yet (strict: it must fail today).

After each fix: the fixed program re-lints without a finding code that was not there before, every
finding whose own fix was not applied is still reported, and a second fix round changes nothing.
"""
from __future__ import annotations

import os
import re
from collections import Counter
import shlex
from pathlib import Path

import pytest

pytest.importorskip("torch")

from torchlint.engine import Settings, lint_source  # noqa: E402
from torchlint.notebook import is_notebook, lint_notebook, mask_cell, read_notebook  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402
from warm_python import WarmPython  # noqa: E402

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each

HERE = Path(__file__).parent / "fix_safety"
PROGRAMS = sorted([*HERE.glob("*.py"), *HERE.glob("*.ipynb")])
RULES = [r for r in all_rules() if r.DEFAULT_ENABLED]
_HEADER = re.compile(r"^# fix-safety: (.*)$", re.MULTILINE)

def _meta(path: Path) -> dict:
    text = path.read_text()
    if is_notebook(str(path)):
        text = read_notebook(text).cells[0].text
    m = _HEADER.search(text)
    assert m, f"{path.name}: missing the `# fix-safety:` line"
    meta = {}
    for item in shlex.split(m.group(1)):
        key, _, value = item.partition("=")
        meta[key] = value
    return meta


def _params():
    out = []
    for p in PROGRAMS:
        meta = _meta(p)
        marks = [pytest.mark.xfail(reason=meta["xfail"], strict=True)] if "xfail" in meta else []
        out.append(pytest.param(p, id=p.stem, marks=marks))
    return out


def _script(path: Path, text: str) -> str:
    """The text to run: a notebook's code cells in order (each must parse on its own)."""
    if not is_notebook(str(path)):
        return text
    cells = []
    for cell in read_notebook(text).cells:
        mask_cell(cell)
        compile(cell.python, f"{path.name}:cell {cell.index + 1}", "exec")  # parses alone
        cells.append(cell.text)
    return "\n".join(cells) + "\n"


@pytest.fixture(scope="session")
def pythons():
    """A program runs as `python PROGRAM` (`plain`) or as `python -I` with every `torchlint` import refused
    (`isolated`), each in a process of its own forked from a Python that imported torch once."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(PYTHONHASHSEED="0", CUDA_VISIBLE_DEVICES="")
    started = {False: WarmPython(env), True: WarmPython(env, isolated=True)}
    yield started
    for python in started.values():
        python.close()


def _run(pythons, folder: Path, name: str, text: str, isolated: bool) -> str:
    prog = folder / name
    prog.write_text(text)
    proc = pythons[isolated].run(prog, cwd=folder, timeout=300)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _lint(path: Path, text: str, fix: bool = False, unsafe: bool = False):
    lint = lint_notebook if is_notebook(str(path)) else lint_source
    result = lint(str(path), text, Settings(rules=RULES, fix=fix, unsafe_fixes=unsafe))
    assert not result.errors, result.errors
    return result


def _codes(path: Path, text: str) -> set:
    return {d.code for d in _lint(path, text).diagnostics}


def test_there_are_enough_programs():
    assert len(PROGRAMS) >= 15


@pytest.mark.parametrize("program", _params())
def test_fixed_program_still_runs(program: Path, tmp_path: Path, pythons):
    meta = _meta(program)
    # a project of its own that does not declare torchlint[runtime]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "prog"\ndependencies = ["torch"]\n')
    source = program.read_text()
    target = tmp_path / program.name
    first = _lint(target, source).diagnostics
    before = {d.code for d in first}
    for code in filter(None, meta.get("codes", "").split(",")):
        assert code in before, f"{program.name}: {code} is not reported on the program as written"
    for code in filter(None, meta.get("absent", "").split(",")):
        assert code not in before, f"{program.name}: {code} is reported on the program as written"
    original = _run(pythons, tmp_path, "original.py", _script(program, source), isolated=False)
    outputs = {}  # fixed text -> its output: a text is run once
    for mode, unsafe in (("safe", False), ("unsafe", True)):
        result = _lint(target, source, fix=True, unsafe=unsafe)
        fixed = result.fixed_source if result.fixed_source is not None else source
        if fixed not in outputs:
            outputs[fixed] = _run(pythons, tmp_path, f"fixed_{mode}.py", _script(program, fixed), isolated=True)
        output = outputs[fixed]
        if meta[mode] == "same":
            assert output == original, f"{mode} fix changed the results:\n{fixed}"
        else:
            assert meta[mode] == "changed"
            assert fixed != source, f"no {mode} fix was applied"
            assert output != original, f"the {mode} fix did not change the results:\n{fixed}"
        if "keep" in meta:
            assert meta["keep"] in fixed, f"the {mode} fix dropped {meta['keep']!r}:\n{fixed}"
        assert not re.search(r"^\s*(import|from) torchlint", fixed, re.MULTILINE)
        new = _codes(target, fixed) - before
        assert not new, f"the {mode} fix created {sorted(new)}:\n{fixed}"
        # a finding whose own fix was not applied is still there: no fix hides another true finding
        unfixed = Counter(d.code for d in first if d.fix is None or (d.fix.applicability == "unsafe" and not unsafe))
        hidden = unfixed - Counter(d.code for d in result.diagnostics)
        assert not hidden, f"the {mode} fix hid {dict(hidden)}:\n{fixed}"
        again = _lint(target, fixed, fix=True, unsafe=unsafe)
        assert again.fixed_source is None, f"a second {mode} fix round changed:\n{again.fixed_source}"
