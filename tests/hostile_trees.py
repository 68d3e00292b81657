"""Project trees with hostile files in every place torchlint reads, and a check that a run over one
stays truthful (used by ``test_hardening_trees.py`` and ``benchmarks/fuzz_robustness.py --trees``).

Places: a linted source, a notebook, a project module another file imports, ``.gitignore``, ``.git``
(as a file), ``.git/info/exclude``, ``pyproject.toml`` and ``requirements.txt``.  Kinds: a FIFO, a
symlink to ``/dev/zero``, a dangling symlink, a file over every size limit, and a compact one (a single
line, no final newline).  Each hostile file sits in its own folder beside a file with a known finding
(``ok.py``), so a run shows whether everything else was still checked.
"""
import json
import os
import random
import resource
import subprocess
import sys

PLACES = ("source", "notebook", "module", "gitignore", "git", "exclude", "pyproject", "requirements")
KINDS = ("fifo", "devzero", "dangling", "huge", "compact")
HUGE = 9 * 1024 * 1024  # over max-file-size (8 MiB) and the 1 MiB limit of configuration and ignore files
MEMORY_LIMIT = 2 << 30  # address space of each process of a run

TRAIN_BUG = """\
import torch


def train(model, loader, criterion):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
"""
USES_MODULE = "import torch\nfrom model import Net\n\n\ndef run(x):\n    return torch.softmax(Net()(x), dim=1).log()\n"
MODULE = "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return torch.softmax(x, dim=1)\n"


def _notebook(code: str, outputs: int = 0, compact: bool = False) -> str:
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": code.splitlines(True), "outputs": []}
    if outputs:
        cell["outputs"] = [{"output_type": "display_data", "metadata": {},
                            "data": {"image/png": "iVBORw0KGgo" * (outputs // 11)}}]
    nb = {"cells": [cell], "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
          "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, separators=(",", ":")) if compact else json.dumps(nb, indent=1) + "\n"


def _name(place: str) -> str:
    return {"source": "bad.py", "notebook": "bad.ipynb", "module": "model.py", "gitignore": ".gitignore",
            "git": ".git", "exclude": os.path.join(".git", "info", "exclude"), "pyproject": "pyproject.toml",
            "requirements": "requirements.txt"}[place]


def _content(place: str, kind: str) -> bytes:
    """The bytes of a regular hostile file of ``kind`` (huge or compact) at ``place``."""
    if kind == "huge":
        if place == "notebook":  # megabytes of image outputs, a few lines of code: linted
            return _notebook(TRAIN_BUG, outputs=HUGE).encode()
        if place in ("source", "module"):
            line = b"x = 1  # padding to make the file large ........................................\n"
            return TRAIN_BUG.encode() + line * (HUGE // len(line) + 1)
        line = b"# " + b"." * 78 + b"\n"
        return line * (HUGE // len(line) + 1)
    # compact: one line, no final newline
    return {
        "source": b"import torch; x = torch.randn(3); y = torch.softmax(x, dim=0).log()",
        "notebook": _notebook(TRAIN_BUG, compact=True).encode(),
        "module": b"import torch; Net = torch.nn.Softmax",
        "gitignore": b"*.tmp " * 20000,
        "git": b"gitdir: " + b"x" * 60000,
        "exclude": b"build/" + b"*" * 60000,
        "pyproject": b'[tool.torchlint]\nselect = ["TL1", "TL2", "TL3", "TL4", "TL5"]',
        "requirements": b"torch>=1.13 " + b"\\" * 60000,
    }[place]


def build(root: str, hostile: dict) -> list:
    """One folder per entry of ``hostile`` (folder name -> (place, kind)), each with ``ok.py`` (a TL101
    finding) and the hostile file; returns the folders."""
    folders = []
    for folder, (place, kind) in sorted(hostile.items()):
        d = os.path.join(root, folder)
        os.makedirs(d)
        folders.append(d)
        with open(os.path.join(d, "ok.py"), "w") as fh:
            fh.write(TRAIN_BUG)
        if place == "module":
            with open(os.path.join(d, "uses.py"), "w") as fh:
                fh.write(USES_MODULE)
        if place == "exclude":
            os.makedirs(os.path.join(d, ".git", "info"))
        path = os.path.join(d, _name(place))
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "devzero":
            os.symlink("/dev/zero", path)
        elif kind == "dangling":
            os.symlink(os.path.join(d, "nowhere"), path)
        else:
            with open(path, "wb") as fh:
                fh.write(_content(place, kind))
    return folders


def random_hostile(rng: random.Random, n: int) -> dict:
    """``n`` folders, each with a random place and kind."""
    return {f"r{i}_{p}_{k}": (p, k) for i, (p, k) in enumerate((rng.choice(PLACES), rng.choice(KINDS)) for _ in range(n))}


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_tree(root: str, folders: list, budget: float, extra=()) -> subprocess.CompletedProcess:
    """``torchlint`` over ``folders`` with every process's memory capped; TimeoutExpired past ``budget``."""
    env = dict(os.environ, HOME=root, XDG_CONFIG_HOME=os.path.join(root, ".xdg"), XDG_CACHE_HOME=os.path.join(root, ".xdgc"))
    return subprocess.run(
        [sys.executable, "-m", "torchlint", "--no-cache", "--jobs", "1", *extra, *[os.path.relpath(f, root) for f in folders]],
        cwd=root, capture_output=True, text=True, timeout=budget, preexec_fn=_limit_memory, env=env,
    )


def problems(r: subprocess.CompletedProcess, hostile: dict) -> list:
    """What is untrue or broken about a finished run over a tree built from ``hostile``."""
    out, err = r.stdout, r.stderr
    found = []
    if r.returncode not in (0, 1, 2):
        found.append(f"exit {r.returncode}")
    if "Traceback" in err or "internal error" in err or "MemoryError" in err:
        found.append("internal error: " + err.strip()[-400:])
    passed = "All checks passed!" in out
    skipped = "skipped" in err
    if passed and (r.returncode != 0 or skipped or "TL000" in out):
        found.append("'All checks passed!' in a run that did not check everything")
    if skipped and (r.returncode == 0 or passed):
        found.append("a skipped file, yet a clean exit or 'All checks passed!'")
    if r.returncode == 2 and not err.strip():
        found.append("exit 2 without a message")
    config_refused = r.returncode == 2 and "cannot read" in err and "pyproject.toml" in err
    if not config_refused:
        for folder in hostile:
            if f"{folder}/ok.py:8:9: TL101" not in out and "--fix" not in r.args:
                found.append(f"{folder}/ok.py was not checked")
        for folder, (place, kind) in hostile.items():
            linted = f"{folder}/bad.ipynb:cell 1:8:9: TL101" in out
            if place == "notebook" and kind in ("huge", "compact") and "--fix" not in r.args and not linted:
                found.append(f"{folder}/bad.ipynb was not linted")
    return found
