"""Memory bounded by what is read, and costs linear in the input: the notebook reader, the per-worker
memory watchdog, the cache file, name lookups on one reassigned name, and ``--watch`` when idle."""
from __future__ import annotations

import json
import tracemalloc

from torchlint.notebook import locate_sources, read_notebook

CODE = [
    "import torch\n",
    "import torch.nn.functional as F\n",
    "loss = F.cross_entropy(torch.softmax(torch.randn(4, 3), dim=-1), torch.tensor([0, 1, 2, 0]))\n",
]


def _notebook(output: str, note: str = "") -> str:
    cell = {"cell_type": "code", "execution_count": 1, "metadata": {"note": note}, "source": CODE,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": output}]}
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def _peak_while_locating(text: str) -> int:
    nb = read_notebook(text)
    tracemalloc.start()
    try:
        locate_sources(nb)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_notebook_strings_are_scanned_in_constant_memory():
    # one long output string without escapes, and one with an escape every few characters (quotes,
    # backslashes, newlines): the scan keeps no state per character or per escape
    plain = "a" * 2_000_000
    escaped = 'line "quoted" \\ back\n' * 20_000
    for output in (plain, escaped):
        text = _notebook(output)
        assert _peak_while_locating(text) < 200_000, len(text)


def test_notebook_string_ends_found_after_escaped_quotes_and_backslashes():
    # strings before the source that end in escaped quotes and runs of backslashes
    note = 'x"y\\"z\\\\"w\\' + '\\' * 3
    text = _notebook('"\\', note)
    assert '\\\\\\\\\\\\\\\\"' in text  # the note ends in eight backslashes in the JSON text
    nb = read_notebook(text)
    locate_sources(nb)
    start, end, items = nb.cells[0].span
    assert json.loads(text[start:end]) == CODE
    assert [json.loads(text[a:b]) for a, b in items] == CODE


# -- the per-worker memory watchdog --------------------------------------------------------------------------------------
def _grow(item):
    """Take memory 16 MB at a time, up to ``item`` MB, then say how much."""
    import time

    blocks = []
    for _ in range(item // 16):
        blocks.append(b"x" * (16 << 20))
        time.sleep(0.005)
    return len(blocks) * 16


def test_a_worker_over_its_memory_limit_is_stopped_and_the_run_goes_on():
    from torchlint.workers import Pool, current_rss

    limit = current_rss() + (200 << 20)
    with Pool(_grow, 1, memory=limit) as pool:
        outcomes = list(pool.run([4000, 32], lambda _item: 60.0))
    assert [(item, out.kind) for item, out in outcomes] == [(4000, "memory"), (32, "ok")]
    assert outcomes[0][1].detail == str(limit)
    assert outcomes[1][1].value == 32


def test_without_a_limit_a_worker_may_grow():
    from torchlint.workers import Pool, current_rss

    with Pool(_grow, 1, memory=None) as pool:
        outcomes = list(pool.run([256], lambda _item: 60.0))
    assert [(item, out.kind, out.value) for item, out in outcomes] == [(256, "ok", 256)]
    assert current_rss() < 256 << 20  # it grew in the worker


def _table(rows: int) -> str:
    body = "".join(f"    ({i}, {i * 0.5!r}, \"name_{i}\", ({i % 7}, {i % 11})),\n" for i in range(rows))
    return "import torch\n\nTABLE = [\n" + body + "]\nWEIGHTS = torch.tensor([row[1] for row in TABLE])\n"


def test_a_file_whose_analysis_goes_over_the_memory_limit_is_tl000_too_large(tmp_path):
    from torchlint.engine import FileTask, Settings
    from torchlint.rules import all_rules
    from torchlint.workers import current_rss, lint_files

    table = tmp_path / "table.py"
    table.write_text(_table(3000))  # about 130 KB: libcst takes over 100 MB for it
    small = tmp_path / "small.py"
    small.write_text("".join(CODE))
    settings = Settings(rules=all_rules(), options={})
    limit = current_rss() + (60 << 20)
    results = {r.path: r for r in lint_files([FileTask(str(table)), FileTask(str(small))], settings, 1, 8 << 20,
                                             memory=limit)}
    (diag,) = results[str(table)].diagnostics
    assert diag.code == "TL000" and diag.message.startswith("too large to analyse"), diag
    assert f"{limit >> 20} MiB" in diag.message
    assert not results[str(table)].cacheable
    assert [d.code for d in results[str(small)].diagnostics] == ["TL103"]
