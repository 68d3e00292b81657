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
    escaped = 'line "quoted" \\ back\n' * 100_000
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
