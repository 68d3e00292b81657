"""Jupyter notebooks: one program per notebook, IPython syntax masked, cell positions, fixes written
back into the cells with the rest of the file unchanged."""
import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell

from torchlint.engine import PARSE_ERROR, Settings
from torchlint.notebook import lint_notebook, mask_cell, read_notebook
from torchlint.rules import all_rules

IMPORTS = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F"
MODEL = "model = nn.Linear(10, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)"
LOOP = (
    "for x, y in loader:\n"
    "    out = model(x)\n"
    "    loss = F.cross_entropy(F.softmax(out, dim=1), y)\n"
    "    loss.backward()\n"
    "    optimizer.step()"
)


def settings(fix=False, unsafe=False, noqa=True, want_edits=False):
    return Settings(all_rules(), {}, noqa, fix, unsafe, want_edits)


def make(*cells, minor=5, outputs=False, **write_kw):
    nb = new_notebook()
    nb.nbformat_minor = minor
    built = []
    for c in cells:
        if isinstance(c, str):
            built.append(new_code_cell(c))
        else:
            built.append(c)
    if outputs:
        for c in built:
            if c.cell_type == "code":
                c.outputs = [new_output("stream", text="ok\n")]
                c.execution_count = 7
    nb.cells = built
    if minor < 5:
        for c in nb.cells:
            c.pop("id", None)
    return nbformat.writes(nb, **write_kw) + "\n"


def lint(text, path="nb.ipynb", **kw):
    return lint_notebook(path, text, settings(**kw))


def found(res):
    return [(d.cell, d.line, d.code) for d in res.diagnostics]


def test_cells_form_one_program_positions_are_per_cell():
    text = make(new_markdown_cell("# Training"), IMPORTS, MODEL, LOOP)
    res = lint(text)
    assert found(res) == [(4, 3, "TL103"), (4, 4, "TL101")]
    d = res.diagnostics[0]
    assert d.col == 28 and d.path == "nb.ipynb"


def test_facts_flow_across_cells():
    # the loss object is built in one cell and called in another; the import alias in a third
    cells = [
        "import torch.nn as nn\nimport torch.nn.functional as fn",
        "criterion = nn.CrossEntropyLoss()",
        new_markdown_cell("text"),
        "def step(logits, y):\n    return criterion(fn.softmax(logits, dim=1), y)",
    ]
    assert found(lint(make(*cells))) == [(4, 2, "TL103")]
    # without the cell that makes `criterion` a cross-entropy loss, nothing is known about it
    assert found(lint(make(cells[0], cells[3]))) == []


@pytest.mark.parametrize("minor", [0, 1, 2, 4, 5])
@pytest.mark.parametrize("outputs", [False, True])
def test_fix_round_trip_keeps_the_rest_of_the_file(minor, outputs):
    text = make(new_markdown_cell("intro"), IMPORTS, MODEL, LOOP, new_raw_cell("raw"), minor=minor, outputs=outputs)
    res = lint(text, fix=True)
    assert res.fixed_source is not None and res.fixed_count == 2
    new = res.fixed_source
    nbformat.validate(nbformat.reads(new, as_version=4))
    before, after = json.loads(text), json.loads(new)
    fixed_src = "".join(after["cells"][3]["source"])
    assert "F.cross_entropy(out, y)" in fixed_src and "optimizer.zero_grad()" in fixed_src
    # everything but the one cell's source is unchanged, key order included
    for i, (a, b) in enumerate(zip(before["cells"], after["cells"])):
        assert list(a) == list(b)
        if i != 3:
            assert a == b
        else:
            assert {k: v for k, v in a.items() if k != "source"} == {k: v for k, v in b.items() if k != "source"}
    assert before["metadata"] == after["metadata"] and after["nbformat_minor"] == minor
    # outside the edited source the bytes are the same
    start = text.index('"for x, y in loader')
    assert new[:start] == text[:start]
    assert new.endswith("}\n")
    again = lint(new, fix=True)
    assert again.fixed_source is None and found(again) == []


def test_string_source_and_list_source_keep_their_form():
    nb = json.loads(make(IMPORTS, MODEL, LOOP))
    nb["cells"][2]["source"] = "".join(nb["cells"][2]["source"])  # one string
    text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    res = lint(text, fix=True)
    after = json.loads(res.fixed_source)
    assert isinstance(after["cells"][2]["source"], str)
    assert isinstance(after["cells"][1]["source"], list)
    assert "optimizer.zero_grad()" in after["cells"][2]["source"]

    nb["cells"][2]["source"] = nbformat.v4.new_code_cell(LOOP)["source"].splitlines(keepends=True)
    text = json.dumps(nb, indent=2) + "\n"
    res = lint(text, fix=True)
    after_text = res.fixed_source
    after = json.loads(after_text)
    assert isinstance(after["cells"][2]["source"], list)
    assert all(s.endswith("\n") for s in after["cells"][2]["source"][:-1])
    assert '\n        "    optimizer.zero_grad()\\n",\n' in after_text  # indent=2 kept for the new item
    assert lint(after_text, fix=True).fixed_source is None


def test_crlf_inside_sources_is_kept():
    nb = json.loads(make(IMPORTS, MODEL, LOOP))
    nb["cells"][2]["source"] = [s.replace("\n", "\r\n") for s in nb["cells"][2]["source"]]
    text = json.dumps(nb, indent=1) + "\n"
    res = lint(text, fix=True)
    assert [c for c, _, _ in found(lint(text))] == [3, 3]
    src = json.loads(res.fixed_source)["cells"][2]["source"]
    joined = "".join(src)
    assert "\n" not in joined.replace("\r\n", "")
    assert "    optimizer.zero_grad()\r\n" in joined


def test_empty_cells_and_no_code_cells():
    assert found(lint(make("", "   ", IMPORTS, "", MODEL, LOOP))) == [(6, 3, "TL103"), (6, 4, "TL101")]
    res = lint(make(new_markdown_cell("only text")))
    assert res.diagnostics == [] and not res.errors
    res = lint(make())
    assert res.diagnostics == [] and not res.errors


def test_invalid_json_is_tl000():
    res = lint('{"cells": [')
    assert [d.code for d in res.diagnostics] == [PARSE_ERROR]
    assert "invalid notebook JSON" in res.diagnostics[0].message


@pytest.mark.parametrize("text", ['{"a": 1}', "[1, 2]", '"x"', '{"cells": 3}', '{"worksheets": [], "nbformat": 3}'])
def test_json_that_is_not_a_notebook_is_tl000(text):
    res = lint(text)
    assert [d.code for d in res.diagnostics] == [PARSE_ERROR]
    assert res.diagnostics[0].cell == 0


def test_absurdly_nested_json_is_tl000():
    res = lint('{"cells": [], "metadata": ' + "[" * 100000 + "]" * 100000 + "}")
    assert [d.code for d in res.diagnostics] == [PARSE_ERROR] and not res.errors


def test_lone_carriage_returns_inside_a_cell():
    nb = json.loads(make(IMPORTS, MODEL, LOOP))
    nb["cells"][2]["source"] = LOOP.replace("\n", "\r")
    res = lint(json.dumps(nb), fix=True)
    assert found(lint(json.dumps(nb))) == [(3, 3, "TL103"), (3, 4, "TL101")]
    src = json.loads(res.fixed_source)["cells"][2]["source"]
    assert "\n" not in src and "    optimizer.zero_grad()\r" in src


def test_other_kernel_language_is_skipped():
    nb = json.loads(make("x <- c(1, 2)\nfor (i in x) print(i)"))
    nb["metadata"]["language_info"] = {"name": "R"}
    res = lint(json.dumps(nb))
    assert res.diagnostics == [] and res.skipped


def test_a_bad_cell_loses_only_that_cell():
    res = lint(make(IMPORTS, "criterion = # TODO", MODEL, LOOP))
    assert found(res) == [(2, 1, PARSE_ERROR), (4, 3, "TL103"), (4, 4, "TL101")]
    assert res.diagnostics[0].col == 13


def test_bad_cell_then_fix_keeps_the_bad_cell():
    text = make(IMPORTS, "def broken(:\n    pass", MODEL, LOOP)
    res = lint(text, fix=True)
    after = json.loads(res.fixed_source)
    assert "".join(after["cells"][1]["source"]) == "def broken(:\n    pass"
    assert found(res) == [(2, 1, PARSE_ERROR)]


MAGICS = [
    ("%matplotlib inline", {0}),
    ("!pip install torch", {0}),
    ("files = !ls -la", {0}),
    ("a, b = %sx echo hi", {0}),
    ("model?", {0}),
    ("torch.nn.Linear??", {0}),
    ("?torch.zeros", {0}),
    ("torch.*Tensor?", {0}),
    ("nn.*Loss??", {0}),
    ("%time y = model(x)", {0}),
    ("if True:\n    !echo hi\n    x = 1", {1}),
    ("!echo one \\\n   two", {0, 1}),
    ('s = """\n!not a shell\n%not a magic\n"""', set()),
    ("x = (1,\n  2)\ny = 5 % 3", set()),
    ("d = {'a': 1}  # why?", set()),
    ("a = 1 if b != 2 else 3", set()),
]


@pytest.mark.parametrize("source,masked", MAGICS)
def test_line_masking(source, masked):
    cell = read_notebook(make(source)).cells[0]
    mask_cell(cell)
    assert set(cell.masked) == masked
    assert cell.python.count("\n") == source.count("\n")
    compile(cell.python, "<cell>", "exec")


@pytest.mark.parametrize("magic", ["%%time", "%%timeit", "%%capture out"])
def test_python_cell_magics_keep_their_body(magic):
    res = lint(make(IMPORTS, MODEL, magic + "\n" + LOOP))
    assert found(res) == [(3, 4, "TL103"), (3, 5, "TL101")]
    fixed = lint(make(IMPORTS, MODEL, magic + "\n" + LOOP), fix=True).fixed_source
    assert json.loads(fixed)["cells"][2]["source"][0] == magic + "\n"


@pytest.mark.parametrize("magic", ["%%bash", "%%writefile train.py", "%%html", "%%javascript", "%%script sh"])
def test_other_cell_magics_are_not_python(magic):
    res = lint(make(IMPORTS, MODEL, magic + "\n" + LOOP + "\n<b>not python</b> (("))
    assert found(res) == []


def test_fix_next_to_magics_keeps_them():
    cell = "%%time\n!nvidia-smi\nfiles = !ls\n" + LOOP + "\nmodel?"
    text = make("%matplotlib inline\n" + IMPORTS, MODEL, cell)
    res = lint(text, fix=True)
    src = "".join(json.loads(res.fixed_source)["cells"][2]["source"])
    assert src.startswith("%%time\n!nvidia-smi\nfiles = !ls\n")
    assert src.endswith("    optimizer.step()\nmodel?")
    assert "optimizer.zero_grad()" in src


def _indented(text, prefix="  "):
    return "\n".join(prefix + line if line else line for line in text.split("\n"))


@pytest.mark.parametrize("prefix", ["  ", "\t", "    "])
def test_a_cell_indented_as_a_whole_runs_dedented(prefix):
    # IPython takes the first line's indentation off every line of the cell: such a cell runs, so it
    # is linted, and its findings sit where they are in the cell's own text
    res = lint(make(IMPORTS, MODEL, _indented(LOOP, prefix)))
    assert found(res) == [(3, 3, "TL103"), (3, 4, "TL101")]
    assert res.diagnostics[0].col == 28 + len(prefix)
    edits = lint(make(IMPORTS, MODEL, _indented(LOOP, prefix)), want_edits=True).diagnostics[0].fix.edits
    line = _indented(LOOP, prefix).split("\n")[edits[0].line - 1]
    assert line[edits[0].col - 1:].startswith("F.softmax(out, dim=1)")


def test_fix_in_an_indented_cell_keeps_its_indentation_and_its_strings():
    # a line of a string that IPython does not dedent (it lacks the indentation) is kept as it is
    cell = _indented(LOOP) + "\n  note = \"\"\"\nleft as is\n  \"\"\""
    res = lint(make(IMPORTS, MODEL, cell), fix=True)
    src = "".join(json.loads(res.fixed_source)["cells"][2]["source"])
    assert "\n      optimizer.zero_grad()\n" in src
    assert "F.cross_entropy(out, y)" in src
    assert src.endswith("  note = \"\"\"\nleft as is\n  \"\"\"")
    assert all(line.startswith("  ") for line in src.split("\n") if line and line != "left as is")
    assert found(lint(json.dumps(json.loads(res.fixed_source)))) == []


def test_a_cell_indented_unevenly_is_still_reported():
    res = lint(make(IMPORTS, MODEL, "  x = 1\n y = 2"))
    assert [d.code for d in res.diagnostics] == [PARSE_ERROR]


def test_noqa_in_a_cell_and_file_level_noqa():
    loop = LOOP.replace("loss.backward()", "loss.backward()  # noqa: TL101")
    assert found(lint(make(IMPORTS, MODEL, loop))) == [(3, 3, "TL103")]
    assert found(lint(make("# torchlint: noqa\n" + IMPORTS, MODEL, LOOP))) == []


def test_file_lines_for_the_web_view():
    text = make(IMPORTS, MODEL, LOOP)
    d = lint(text).diagnostics[0]
    raw = text.splitlines()[d.file_line - 1]
    assert "F.softmax(out, dim=1)" in raw


def test_json_edits_are_cell_relative():
    d = lint(make(IMPORTS, MODEL, LOOP), want_edits=True).diagnostics[0]
    assert d.code == "TL103" and d.fix is not None
    (edit,) = d.fix.edits
    assert edit.line == 3


# -- the command line ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_cli_folder_includes_notebooks_and_extend_exclude(run, tmp_path):
    (tmp_path / "nbs").mkdir()
    (tmp_path / "nbs" / "a.ipynb").write_text(make(IMPORTS, MODEL, LOOP))
    (tmp_path / "nbs" / "skip").mkdir()
    (tmp_path / "nbs" / "skip" / "b.ipynb").write_text(make(IMPORTS, MODEL, LOOP))
    (tmp_path / "nbs" / "bad.ipynb").write_text("{ not json")
    r = run("--no-cache", "nbs", "--extend-exclude", "skip")
    assert r.returncode == 1, r.stderr
    lines = [line for line in r.stdout.splitlines() if ": TL" in line]
    assert lines[0].startswith("nbs/a.ipynb:cell 3:3:28: TL103 [*] ")
    assert lines[1].startswith("nbs/a.ipynb:cell 3:4:5: TL101 [*] ")
    assert lines[2].startswith("nbs/bad.ipynb:1:3: TL000 ")
    assert len(lines) == 3


@pytest.mark.slow
def test_cli_formats(run, tmp_path):
    (tmp_path / "a.ipynb").write_text(make(IMPORTS, MODEL, LOOP))
    out = json.loads(run("--no-cache", "--output-format", "json", "a.ipynb").stdout)
    assert [(d["cell"], d["location"]["row"], d["code"]) for d in out] == [(3, 3, "TL103"), (3, 4, "TL101")]
    sarif = json.loads(run("--no-cache", "--output-format", "sarif", "a.ipynb").stdout)
    region = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["properties"]["cell"] == 3 and region["properties"]["cellLine"] == 3
    assert "F.softmax" in (tmp_path / "a.ipynb").read_text().splitlines()[region["startLine"] - 1]
    gh = run("--no-cache", "--output-format", "github", "a.ipynb").stdout.splitlines()
    assert gh[0].startswith(f"::error file=a.ipynb,line={region['startLine']},")
    assert "a.ipynb%3Acell 3" not in gh[0] and "a.ipynb:cell 3:3:28: TL103" in gh[0]


@pytest.mark.slow
def test_cli_fix_diff_and_cache(run, tmp_path):
    nb = tmp_path / "a.ipynb"
    nb.write_text(make(IMPORTS, MODEL, LOOP, outputs=True))
    before = nb.read_text()
    r = run("--diff", "a.ipynb")
    assert r.returncode == 1
    assert "--- a.ipynb:cell 3\n+++ a.ipynb:cell 3\n" in r.stdout
    assert "+    optimizer.zero_grad()\n" in r.stdout
    assert nb.read_text() == before
    first = run("a.ipynb").stdout
    assert run("a.ipynb").stdout == first  # from the cache, with cells
    assert "a.ipynb:cell 3:3:28" in first
    r = run("--fix", "a.ipynb")
    assert r.returncode == 0, r.stdout + r.stderr
    nbformat.validate(nbformat.read(str(nb), as_version=4))
    after = nb.read_text()
    assert run("--fix", "a.ipynb").returncode == 0 and nb.read_text() == after
    r = run("a.ipynb")  # the cache is keyed by content: the fixed notebook is clean
    assert r.returncode == 0 and "All checks passed!" in r.stdout


@pytest.mark.slow
def test_cli_stdin_notebook(run):
    text = make(IMPORTS, MODEL, LOOP)
    r = run("-", "--no-cache", "--stdin-filename", "x.ipynb", stdin=text)
    assert r.returncode == 1
    assert "x.ipynb:cell 3:4:5: TL101" in r.stdout
    r = run("-", "--no-cache", "--fix", "--stdin-filename", "x.ipynb", stdin=text)
    nbformat.validate(nbformat.reads(r.stdout, as_version=4))
    assert "optimizer.zero_grad()" in r.stdout


@pytest.mark.slow
def test_cli_nothing_checked(run, tmp_path):
    (tmp_path / "empty").mkdir()
    r = run("--no-cache", "empty")
    assert r.returncode == 0
    assert "No Python files found under empty" in r.stderr
    assert "All checks passed!" not in r.stdout
    r = run("--no-cache", "missing.py")
    assert r.returncode == 2
    assert "All checks passed!" not in r.stdout


@pytest.mark.slow
def test_cli_codes_case_insensitive_and_statistics_json(run, tmp_path):
    (tmp_path / "a.ipynb").write_text(make(IMPORTS, MODEL, LOOP))
    r = run("--no-cache", "--select", "tl103", "a.ipynb")
    assert r.returncode == 1, r.stderr
    assert [line.split(": ")[1].split()[0] for line in r.stdout.splitlines() if ": TL" in line] == ["TL103"]
    r = run("--no-cache", "--ignore", "tl1", "--statistics", "--output-format", "json", "a.ipynb")
    assert json.loads(r.stdout) == []
    r = run("--no-cache", "--statistics", "--output-format", "json", "a.ipynb")
    assert json.loads(r.stdout) == [
        {"code": "TL101", "name": "missing-zero-grad", "count": 1, "fixable": True},
        {"code": "TL103", "name": "softmax-before-cross-entropy", "count": 1, "fixable": True},
    ]


def test_cli_help_shows_commands_and_check_options(run):
    out = run("--help").stdout
    for word in ("check", "rule", "rules", "--fix", "--select", "--output-format", "--diff"):
        assert word in out


# -- the bundled tutorial notebook ---------------------------------------------------------------------------------
TUTORIAL = Path(__file__).resolve().parents[2] / "examples" / "tutorial.ipynb"


def _run_cells(text):
    nb = read_notebook(text)
    namespace: dict = {"__name__": "tutorial"}
    for cell in nb.cells:
        mask_cell(cell)
        if not cell.skip:
            exec(compile(cell.python, f"cell {cell.index + 1}", "exec"), namespace)
    return namespace


@pytest.mark.slow
def test_tutorial_notebook_findings_and_fixed_program_runs():
    torch = pytest.importorskip("torch")
    if not TUTORIAL.exists():
        pytest.skip("examples/ is not shipped with this installation")
    text = TUTORIAL.read_text(encoding="utf-8")
    assert sorted({d.code for d in lint(text).diagnostics}) == [
        "TL101", "TL103", "TL104", "TL105", "TL106", "TL201", "TL202",
    ]
    res = lint(text, fix=True, unsafe=True)
    assert not res.errors and res.diagnostics == []
    nbformat.validate(nbformat.reads(res.fixed_source, as_version=4))
    assert lint(res.fixed_source, fix=True, unsafe=True).fixed_source is None
    namespace = _run_cells(res.fixed_source)
    assert all(isinstance(v, float) for v in namespace["losses"])
    probs = namespace["predict_proba"](namespace["batches"][0][0])
    assert torch.allclose(probs.sum(dim=1), torch.ones(32))


def _bug_notebook(compact=False, image_bytes=0):
    nb = json.loads(make(IMPORTS, MODEL, LOOP))
    if image_bytes:
        nb["cells"][1]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                      "data": {"image/png": "iVBORw0KGgo" * (image_bytes // 11)}}]
    return json.dumps(nb, separators=(",", ":")) if compact else json.dumps(nb, indent=1) + "\n"


def test_compact_notebook_is_fixed_and_stays_compact(run, tmp_path):
    nb = json.loads(_bug_notebook(compact=True))
    path = tmp_path / "c.ipynb"
    path.write_text(json.dumps(nb, separators=(",", ":")))
    r = run("--no-cache", "--fix", "c.ipynb")
    assert "fixes not written" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stdout + r.stderr
    after = path.read_text()
    assert "\n" not in after  # still one line
    fixed = json.loads(after)
    assert "optimizer.zero_grad()" in "".join(fixed["cells"][2]["source"])
    nb["cells"][2]["source"] = fixed["cells"][2]["source"]
    assert after == json.dumps(nb, separators=(",", ":"))  # only that source changed
    nbformat.validate(nbformat.reads(after, as_version=4))


def test_size_limit_counts_a_notebooks_code_not_its_outputs(run, tmp_path):
    (tmp_path / "big.ipynb").write_text(_bug_notebook(image_bytes=29 * 1024 * 1024))
    r = run("--no-cache", "big.ipynb")
    assert "big.ipynb:cell 3:4:5: TL101" in r.stdout, r.stderr
    assert "too large" not in r.stderr and r.returncode == 1
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nmax-file-size = 100\n")
    (tmp_path / "small.ipynb").write_text(_bug_notebook())
    r = run("--no-cache", "small.ipynb")
    assert "small.ipynb: notebook code too large (" in r.stderr and "; skipped" in r.stderr
    assert "All checks passed!" not in r.stdout and r.returncode == 1


def test_findings_that_need_the_cells_before_them():
    # a loss helper defined in one cell, called with softmax probabilities made in the cell before it
    probs = make(IMPORTS, "scores = torch.randn(4, 3)\nprobs = F.softmax(scores, dim=1)",
                 "def spread(p, w):\n    return (-torch.log(1 - p[:, 0]) * w).sum()",
                 "print(spread(probs, torch.ones(4)))")
    assert [f for f in found(lint(probs)) if f[2] == "TL208"] == [(3, 2, "TL208")]
    # the last cells rebuild the trained model, load its checkpoint and predict with autograd on
    net = "net = nn.Sequential(nn.Linear(10, 2), nn.Dropout(0.1))"
    train = ("opt = torch.optim.SGD(net.parameters(), lr=0.1)\nfor x, y in loader:\n"
             "    opt.zero_grad()\n    F.cross_entropy(net(x), y).backward()\n    opt.step()\n"
             "torch.save(net.state_dict(), 'net.pt')")
    reload = "net = nn.Sequential(nn.Linear(10, 2), nn.Dropout(0.1))\nnet.load_state_dict(torch.load('net.pt'))"
    predict = "net.eval()\nguess = net(torch.ones(1, 10)).argmax(1)"
    assert [f for f in found(lint(make(IMPORTS, net, train, reload, predict))) if f[2] == "TL105"] == [
        (5, 2, "TL105")
    ]


def test_sampler_helper_given_a_model_of_an_earlier_cell():
    # the model class, the model, the sampling helper and its call each in a cell of their own: the
    # helper's `model` is the logits model every call passes, its output unpacked and read through
    # `.data`, `.view` and `.div` before the `exp` that feeds `torch.multinomial`
    model_class = (
        "class Char(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.emb = nn.Embedding(20, 8)\n        self.rnn = nn.GRU(8, 8)\n        self.head = nn.Linear(8, 20)\n"
        "    def forward(self, t, h):\n        o, h = self.rnn(self.emb(t).view(1, 1, -1), h)\n"
        "        return self.head(o.view(1, -1)), h"
    )
    helper = (
        "def pick(model, t, h, temperature=0.5):\n    out, h = model(t, h)\n"
        "    weights = out.data.view(-1).div(temperature).exp()\n    return torch.multinomial(weights, 1)[0]"
    )
    cells = [IMPORTS, model_class, "char = Char()\nchar = char.to('cpu')", helper,
             "with torch.no_grad():\n    print(pick(char, torch.tensor([1]), torch.zeros(1, 1, 8)))"]
    assert [f for f in found(lint(make(*cells))) if f[2] == "TL201"] == [(4, 3, "TL201")]
    # the same helper given a model whose `forward` ends in softmax samples probabilities: silent
    probs = model_class.replace("return self.head(o.view(1, -1)), h", "return self.head(o.view(1, -1)).softmax(-1), h")
    assert [f for f in found(lint(make(IMPORTS, probs, *cells[2:]))) if f[2] == "TL201"] == []


def test_log_of_softmax_elements_picked_in_earlier_cells():
    # the softmax in one cell, its elements picked per target in the next, joined and logged in a third
    cells = [
        IMPORTS,
        "scores = torch.randn(2, 3, 7)\nwanted = torch.tensor([[1, 6, 0], [2, 5, 3]])",
        "probs = torch.softmax(scores, dim=-1)",
        "i = 0\nfirst = probs[i, [0, 1, 2], wanted[i]]\ni = 1\nsecond = probs[i, [0, 1, 2], wanted[i]]",
        "logp = torch.log(torch.cat((first, second)))\nprint(-logp.mean())",
    ]
    assert [f for f in found(lint(make(*cells))) if f[2] == "TL202"] == [(5, 1, "TL202")]
    # picked from the logits instead: nothing to report
    logits = cells[3].replace("probs[", "scores[")
    assert [f for f in found(lint(make(*cells[:3], logits, cells[4]))) if f[2] == "TL202"] == []
