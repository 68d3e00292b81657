"""Editor latency: the language server, the flake8 plugin on and off, and the CLI on one file.

    python benchmarks/bench_editor.py [FILE] [--repeat N] [--edits N] [--server-only]

Rows (wall-clock, this machine; FILE should be a ~300-line module that imports torch; without FILE,
a generated ~300-line training script with about fifty findings, :func:`training_file`):

- libcst's parse of FILE, in process: the floor under any of the numbers below;
- the server's analysis of one edit, in process: CPU time of the thread and wall-clock time, for each
  kind of edit of :data:`EDITS` (a constant added, a blank line added in a function: findings carried
  over from the text before, :mod:`torchlint.carry`; a comment typed or a statement added in a
  function: the file analysed again);
- ``torchlint server``: time to the first diagnostics after ``didOpen`` (includes starting to analyse
  in a fresh process whose rules are already imported), then, for each kind of edit, the median and
  90th percentile of ``didChange`` + ``didSave`` -> ``publishDiagnostics`` over ``--edits`` edits (saves
  are not debounced; typing is, by the server's debounce delay on top of these numbers);
- typing -> diagnostics: one ``didChange`` (no save, a statement added in a function) after a pause,
  then a burst of ``didChange`` 60 ms apart (timed from the last one): the median over ``--edits`` of
  each, the debounce included;
- flake8 ``--select E,W,F`` without the plugin (a Python that does not have torchlint installed) and
  with it, then flake8 ``--select TL`` (the plugin at work), best of ``--repeat``;
- ``torchlint --no-cache FILE`` (CLI cold: process start, imports, one lint), best of ``--repeat``.

The "without the plugin" row needs a Python with flake8 but without torchlint: ``--bare-python``
(default: the interpreter the virtual environment was made from, else ``python3`` on PATH, if it has
flake8 and cannot import torchlint).  ``--old-plugin SRC`` adds a row for the plugin of another
checkout (its ``src`` folder put first on ``PYTHONPATH``), to compare before and after.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence


def training_file() -> str:
    """A ~300-line training script written to be wrong in the ways the rules look for (a softmax fed to
    the loss, no ``zero_grad``, a loss summed with its graph, evaluation without ``no_grad``, ...): the
    editor's worst case is a file with many findings, each one located and sent to the client."""
    head = (
        '"""A classifier trained with the habits a linter catches (a benchmark input)."""\n'
        "import os\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.utils.data import DataLoader, Dataset\n\n\n"
        "class PairSet(Dataset):\n    def __init__(self, rows, labels):\n        self.rows = rows\n"
        "        self.labels = labels\n\n    def __len__(self):\n        return len(self.rows)\n\n"
        "    def __getitem__(self, i):\n        return torch.tensor(self.rows[i]), self.labels[i]\n"
    )
    block = """

class Block{k}(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.norm = nn.BatchNorm1d(width)
        self.drop = nn.Dropout(0.1)
        self.extra = [nn.Linear(width, width)]

    def forward(self, x):
        h = self.fc(x)
        h = F.dropout(h, 0.2)
        h = self.norm(h).squeeze()
        return self.drop(F.softmax(h))


def train_epoch_{k}(model, loader, optimizer, scheduler, device):
    criterion = nn.CrossEntropyLoss()
    total = 0
    model.train()
    for x, y in loader:
        x = x.to("cuda")
        y = y.cuda()
        logits = model(x)
        probs = F.softmax(logits, dim=1)
        loss = criterion(probs, y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss
        w = model.fc.weight.data
        log_p = torch.log(torch.softmax(logits, dim=-1))
        manual = torch.log(torch.exp(logits).sum(dim=1))
    return total / len(loader), log_p, manual, w


def evaluate_{k}(model, loader):
    device = next(model.parameters()).device
    correct = 0
    for x, y in loader:
        out = model(x.to(device))
        correct += (out.argmax(1) == y).sum().item()
    scores = torch.tensor([torch.tensor(1.0), torch.tensor(2.0)])
    return correct, scores


def restore_{k}(model, path):
    state = torch.load(path)
    model.load_state_dict(state)
    noise = torch.randn(4, 4).cuda()
    return model, noise
"""
    tail = """

def main():
    torch.set_default_tensor_type(torch.cuda.FloatTensor)
    model = Block0(16)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
    loader = DataLoader(PairSet([[0.0] * 16] * 8, [0] * 8), batch_size=4)
    for epoch in range(3):
        train_epoch_0(model, loader, optimizer, scheduler, "cuda")
        evaluate_0(model, loader)
    restore_0(model, os.path.join("runs", "last.pt"))


if __name__ == "__main__":
    main()
"""
    return head + "".join(block.format(k=k) for k in range(5)) + tail


def best_of(cmd: Sequence[str], repeat: int, cwd: str) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(list(cmd), cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return min(times)


def bare_python(explicit: Optional[str]) -> Optional[str]:
    # the interpreter this virtual environment was made from: same Python, same flake8, no torchlint
    base = os.path.join(sys.base_prefix, "bin", "python3")
    candidates = [explicit] if explicit else [base, shutil.which("python3"), "/usr/bin/python3"]
    for py in candidates:
        if not py or not os.path.exists(py):
            continue
        has_flake8 = subprocess.run([py, "-c", "import flake8"], capture_output=True).returncode == 0
        has_tl = subprocess.run([py, "-c", "import torchlint"], capture_output=True).returncode == 0
        if has_flake8 and not has_tl:
            return py
    return None


def _first_body_line(text: str) -> int:
    """Offset of the first line of the first function body of ``text`` (its first ``def`` written on
    one line), where a line can be put in with that line's indentation."""
    at = 0
    lines = text.splitlines(keepends=True)
    for line in lines[:-1]:
        if line.lstrip().startswith("def ") and line.rstrip().endswith(":"):
            return at + len(line)
        at += len(line)
    return len(text)


def _body_indent(text: str) -> str:
    rest = text[_first_body_line(text):]
    line = rest.splitlines()[0] if rest else ""
    return line[: len(line) - len(line.lstrip())] or "    "


def _insert(text: str, line: str) -> str:
    at = _first_body_line(text)
    return text[:at] + _body_indent(text) + line + "\n" + text[at:]


#: the edits timed, each made to the file as given (one edit at a time: the previous one undone)
EDITS = {
    "a constant added at the end": lambda text, i: text + f"\n_bench_value = {i}\n",
    "a blank line added in a function": lambda text, i: _insert(text, "\n" * (i % 2)),  # one or two
    "a comment typed in a function": lambda text, i: _insert(text, f"# note {i}"),
    "a statement added in a function": lambda text, i: _insert(text, f"_bench_local = {i}"),
}
#: the edit that changes the program (what typing code is; the typing rows make this one)
CODE_EDIT = "a statement added in a function"


async def server_latency(path: str, edits: int) -> dict:
    from lsprotocol import types as T
    from pygls.lsp.client import LanguageClient

    text = open(path, encoding="utf-8").read()
    uri = "file://" + os.path.abspath(path)
    client = LanguageClient("bench", "0")
    arrived: dict = {}
    events: dict = {}

    @client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: T.PublishDiagnosticsParams) -> None:
        arrived[params.version] = (time.perf_counter(), len(params.diagnostics))
        ev = events.get(params.version)
        if ev is not None:
            ev.set()

    async def wait(version: int) -> float:
        ev = events.setdefault(version, asyncio.Event())
        if version not in arrived:
            await asyncio.wait_for(ev.wait(), 120)
        return arrived[version][0]

    t_start = time.perf_counter()
    await client.start_io(sys.executable, "-m", "torchlint", "server", cwd=os.path.dirname(os.path.abspath(path)))
    await client.initialize_async(T.InitializeParams(capabilities=T.ClientCapabilities(), process_id=os.getpid()))
    client.initialized(T.InitializedParams())
    t_init = time.perf_counter()
    events[1] = asyncio.Event()
    t0 = time.perf_counter()
    client.text_document_did_open(
        T.DidOpenTextDocumentParams(text_document=T.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))
    )
    first = await wait(1) - t0
    found = arrived[1][1]
    def change(version: int, new_text: str) -> None:
        client.text_document_did_change(
            T.DidChangeTextDocumentParams(
                text_document=T.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[T.TextDocumentContentChangeWholeDocument(text=new_text)],
            )
        )

    samples: Dict[str, List[float]] = {}
    version = 1
    for kind, make in EDITS.items():
        for i in range(edits):
            version += 1
            new_text = make(text, i)
            events[version] = asyncio.Event()
            t0 = time.perf_counter()
            change(version, new_text)
            client.text_document_did_save(T.DidSaveTextDocumentParams(text_document=T.TextDocumentIdentifier(uri=uri)))
            samples.setdefault(kind, []).append(await wait(version) - t0)
    typing: List[float] = []
    burst: List[float] = []
    code = EDITS[CODE_EDIT]
    for i in range(edits):
        await asyncio.sleep(0.5)  # a pause: the next keystroke starts a new burst
        version += 1
        events[version] = asyncio.Event()
        t0 = time.perf_counter()
        change(version, code(text, 100 + i))
        typing.append(await wait(version) - t0)
        await asyncio.sleep(0.5)
        for j in range(5):  # five keystrokes 60 ms apart
            if j:
                await asyncio.sleep(0.06)
            version += 1
            t0 = time.perf_counter()
            change(version, code(text, 1000 + 10 * i + j))
        events[version] = asyncio.Event()
        burst.append(await wait(version) - t0)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return {
        "start+initialize": t_init - t_start,
        "first diagnostics": first,
        "edits": {kind: (statistics.median(v), sorted(v)[int(0.9 * (len(v) - 1))]) for kind, v in samples.items()},
        "findings": found,
        "typing": statistics.median(typing),
        "typing p90": sorted(typing)[int(0.9 * (len(typing) - 1))],
        "burst": statistics.median(burst),
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", help="default: a generated ~300-line training script with many findings")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--bare-python", default=None)
    ap.add_argument("--old-plugin", default=None, help="src folder of another torchlint checkout")
    ap.add_argument("--server-only", action="store_true", help="only the parse, analysis and server rows")
    args = ap.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="tl-bench-")  # no configuration files around
    if args.file:
        path = os.path.abspath(args.file)
        target = os.path.join(folder, os.path.basename(path))
        shutil.copyfile(path, target)
    else:
        target = os.path.join(folder, "train_many_findings.py")
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(training_file())
    with open(target, encoding="utf-8") as fh:
        lines = fh.read().count("\n")
    print(f"# {platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {os.path.basename(target)}: {lines} lines")

    import libcst

    text = open(target, encoding="utf-8").read()
    parse = []
    for _ in range(max(5, args.repeat)):
        t0 = time.perf_counter()
        libcst.parse_module(text)
        parse.append(time.perf_counter() - t0)
    print(f"libcst parse of the file (the floor of any analysis): median {statistics.median(parse)*1000:.1f} ms")
    # the server's own work per edit, in CPU time of the analysing thread (what a request costs when
    # the machine is not shared: wall-clock numbers below include waiting for a core)
    from torchlint.lsp.documents import ConfigStore, analyse
    from torchlint.rules import all_rules

    store = ConfigStore(all_rules())
    if hasattr(store.project, "parse_edits"):  # as the server's analysis process does (an older checkout: not)
        store.project.parse_edits()
    config = store.resolve(target, folder)
    analyse(target, text, 0, config)
    for kind, make in EDITS.items():
        cpu, wall = [], []
        for i in range(max(10, args.repeat)):
            edited = make(text, i)
            t0, c0 = time.perf_counter(), time.thread_time()
            analyse(target, edited, i, config)
            cpu.append(time.thread_time() - c0)
            wall.append(time.perf_counter() - t0)
        print(f"server analysis per edit, in process, {kind}: CPU median {statistics.median(cpu)*1000:.1f} ms, "
              f"wall median {statistics.median(wall)*1000:.1f} ms")
    res = asyncio.run(server_latency(target, args.edits))
    print(f"server: start+initialize {res['start+initialize']*1000:.0f} ms; first diagnostics "
          f"{res['first diagnostics']*1000:.0f} ms ({res['findings']} findings)")
    for kind, (median, p90) in res["edits"].items():
        print(f"server: warm change+save -> diagnostics, {kind}: median {median*1000:.1f} ms, "
              f"p90 {p90*1000:.1f} ms over {args.edits} edits")
    print(f"server: typing -> diagnostics ({CODE_EDIT}; didChange after a pause, debounce included): median "
          f"{res['typing']*1000:.1f} ms, p90 {res['typing p90']*1000:.1f} ms; after a burst of 5 keystrokes "
          f"60 ms apart, from the last one: median {res['burst']*1000:.1f} ms")
    if args.server_only:
        shutil.rmtree(folder, ignore_errors=True)
        return 0

    bare = bare_python(args.bare_python)
    rows = []
    if bare:
        rows.append(("flake8 --select E,W,F, plugin not installed", [bare, "-m", "flake8", "--select", "E,W,F", target]))
    else:
        print("(no Python with flake8 and without torchlint found: plugin-off row skipped)")
    rows.append(("flake8 --select E,W,F, plugin installed", [sys.executable, "-m", "flake8", "--select", "E,W,F", target]))
    if args.old_plugin:
        rows.append(("flake8 --select E,W,F, plugin of --old-plugin", ["env", f"PYTHONPATH={os.path.abspath(args.old_plugin)}",
                     sys.executable, "-m", "flake8", "--select", "E,W,F", target]))
    rows.append(("flake8 --select TL (plugin linting)", [sys.executable, "-m", "flake8", "--select", "TL", target]))
    rows.append(("torchlint --no-cache FILE (CLI cold)", [sys.executable, "-m", "torchlint", "--no-cache", target]))
    for label, cmd in rows:
        print(f"{label}: {best_of(cmd, args.repeat, folder)*1000:.0f} ms (best of {args.repeat})")
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
