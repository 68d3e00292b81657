"""Memory bounded by what is read, and costs linear in the input: the notebook reader, the per-worker
memory watchdog, the cache file, name lookups on one reassigned name, and ``--watch`` when idle."""
from __future__ import annotations

import json
import tracemalloc

import pytest

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


def _growth_limit(extra: int) -> int:
    """The ``memory`` limit under which a worker forked from this process is stopped once it has grown
    ``extra`` bytes: a pool adds to its limit what a worker inherits past ``FORK_ALLOWANCE`` (a test run
    in a large pytest process inherits a lot)."""
    from torchlint.workers import FORK_ALLOWANCE, current_rss

    rss = current_rss()
    return rss + extra - max(0, rss - FORK_ALLOWANCE)


@pytest.mark.slow
def test_a_worker_over_its_memory_limit_is_stopped_and_the_run_goes_on():
    from torchlint.workers import Pool

    limit = _growth_limit(200 << 20)
    with Pool(_grow, 1, memory=limit) as pool:
        outcomes = list(pool.run([4000, 32], lambda _item: 60.0))
    assert [(item, out.kind) for item, out in outcomes] == [(4000, "memory"), (32, "ok")]
    assert outcomes[0][1].detail == str(limit)
    assert outcomes[1][1].value == 32


@pytest.mark.slow
def test_without_a_limit_a_worker_may_grow():
    from torchlint.workers import Pool, current_rss

    before = current_rss()
    with Pool(_grow, 1, memory=None) as pool:
        outcomes = list(pool.run([256], lambda _item: 60.0))
    assert [(item, out.kind, out.value) for item, out in outcomes] == [(256, "ok", 256)]
    assert current_rss() - before < 128 << 20  # it grew in the worker, not here


def _table(rows: int) -> str:
    body = "".join(f"    ({i}, {i * 0.5!r}, \"name_{i}\", ({i % 7}, {i % 11})),\n" for i in range(rows))
    return "import torch\n\nTABLE = [\n" + body + "]\nWEIGHTS = torch.tensor([row[1] for row in TABLE])\n"


_TOO_LARGE = """
import json, sys
from torchlint.engine import FileTask, Settings
from torchlint.rules import all_rules
from torchlint.workers import FORK_ALLOWANCE, current_rss, lint_files
table, small = sys.argv[1], sys.argv[2]
rss = current_rss()
limit = rss + (60 << 20) - max(0, rss - FORK_ALLOWANCE)
results = {r.path: r for r in lint_files([FileTask(table), FileTask(small)], Settings(rules=all_rules(), options={}),
                                         1, 8 << 20, memory=limit)}
print(json.dumps({"limit": limit, "cacheable": results[table].cacheable,
                  "table": [(d.code, d.message) for d in results[table].diagnostics],
                  "small": [d.code for d in results[small].diagnostics]}))
"""


@pytest.mark.slow
def test_a_file_whose_analysis_goes_over_the_memory_limit_is_tl000_too_large(tmp_path):
    # in a fresh interpreter: the worker must be forked from a small process, as from the command line
    import subprocess
    import sys

    table = tmp_path / "table.py"
    table.write_text(_table(3000))  # about 130 KB: libcst takes over 100 MB for it
    small = tmp_path / "small.py"
    small.write_text("".join(CODE))
    run = subprocess.run([sys.executable, "-c", _TOO_LARGE, str(table), str(small)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.splitlines()[-1])
    ((code, message),) = got["table"]
    assert code == "TL000" and message.startswith("too large to analyse"), message
    assert f"{got['limit'] >> 20} MiB" in message
    assert not got["cacheable"]
    assert got["small"] == ["TL103"]


# -- name lookups on a name bound many times ---------------------------------------------------------------------------
def _lookup_seconds(bindings: int, queries: int = 300) -> float:
    import time

    import libcst as cst

    from torchlint.analysis.context import FileContext
    from torchlint.engine import analyze

    code = "import torch\nx = torch.randn(4, 3)\n" + "x = torch.softmax(x, dim=1)\n" * bindings
    ctx = FileContext("case.py", code, cst.parse_module(code))
    analyze(ctx)
    last = ctx.module.body[-1].body[0].value.args[0].value  # the ``x`` read by the last line
    # the bindings before the last line: the read runs before its own line binds `x` again
    assert isinstance(last, cst.Name) and len(ctx.names.bound_values(last)) == bindings
    assert ctx.code(ctx.names.value_of(last)) == "torch.softmax(x, dim=1)"
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(queries):
            vals = ctx.names.bound_values(last)
            vals[-1], len(vals)
            ctx.names.value_of(last)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.slow
def test_looking_up_a_name_costs_the_same_however_often_it_was_bound():
    # before: each query copied every earlier binding (x = f(x) 20,000 times was quadratic)
    few, many = _lookup_seconds(100), _lookup_seconds(2000)
    assert many < 5 * few + 0.01, (few, many)


def test_bound_values_is_a_sequence_of_the_earlier_bindings():
    from torchlint.analysis.names import Prefix

    values = ["a", None, "c", "d"]
    view = Prefix(values, 3)  # type: ignore[arg-type]
    assert len(view) == 3 and list(view) == ["a", None, "c"] and view == ["a", None, "c"]
    assert view[-1] == "c" and view[0] == "a" and view[:-1] == ["a", None] and list(reversed(view)) == ["c", None, "a"]
    values.append("e")  # the binding grows at its end: the view stays what it was
    assert list(view) == ["a", None, "c"] and view != ["a", None, "c", "d"]
    for bad in (3, -4):
        try:
            view[bad]
        except IndexError:
            continue
        raise AssertionError(bad)


# -- the cache file --------------------------------------------------------------------------------------------------------
def _cache(tmp_path, monkeypatch):
    from torchlint import cache as cache_mod

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    return cache_mod, cache_mod.Cache(str(tmp_path / ".torchlint_cache"), "k", ["TL101"])


def _put(cache, path):
    import os

    from torchlint.cache import identity

    cache.put(str(path), "d", identity(os.stat(path)), [])


def test_a_forged_cache_file_is_rejected_in_constant_memory(tmp_path, monkeypatch):
    cache_mod, cache = _cache(tmp_path, monkeypatch)
    (tmp_path / "a.py").write_text("x = 1\n")
    _put(cache, tmp_path / "a.py")
    cache.save()
    assert cache_mod.Cache(cache.root, "k", ["TL101"]).entries  # read back: this machine wrote it
    # a committed file of many small entries (JSON that expands many times in memory), in the new
    # format and the old, with a header whose HMAC is wrong
    row = ["d", [1, 2, 3, 4], [], "0" * 64]
    body = "{" + ",".join(f'"/p/{i}.py":{json.dumps(row)}' for i in range(60_000)) + "}"
    for text in (body, "torchlint-cache 1 " + "0" * 64 + "\n" + body):
        with open(cache.file, "w") as fh:
            fh.write(text)
        tracemalloc.start()
        try:
            again = cache_mod.Cache(cache.root, "k", ["TL101"])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert again.entries == {}
        assert peak < 3 * (1 << 20), (peak, len(text))  # a few chunks, never the file or its JSON


def test_a_cache_file_edited_by_one_byte_is_ignored(tmp_path, monkeypatch):
    cache_mod, cache = _cache(tmp_path, monkeypatch)
    (tmp_path / "a.py").write_text("x = 1\n")
    _put(cache, tmp_path / "a.py")
    cache.save()
    data = open(cache.file, "rb").read()
    assert data.startswith(b"torchlint-cache 1 ")
    with open(cache.file, "wb") as fh:
        fh.write(data.replace(b'"d"', b'"e"'))
    assert cache_mod.Cache(cache.root, "k", ["TL101"]).entries == {}


def test_entries_of_deleted_files_are_pruned_and_their_number_capped(tmp_path, monkeypatch):
    cache_mod, cache = _cache(tmp_path, monkeypatch)
    for name in "abcde":
        (tmp_path / f"{name}.py").write_text("x = 1\n")
        _put(cache, tmp_path / f"{name}.py")
    cache.save()
    (tmp_path / "b.py").unlink()
    again = cache_mod.Cache(cache.root, "k", ["TL101"])
    assert len(again.entries) == 5
    _put(again, tmp_path / "a.py")  # a run that writes the cache
    again.save()
    kept = cache_mod.Cache(cache.root, "k", ["TL101"])
    assert sorted(p.rsplit("/", 1)[1] for p in kept.entries) == ["a.py", "c.py", "d.py", "e.py"]
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 2)
    _put(kept, tmp_path / "e.py")
    kept.save()
    final = cache_mod.Cache(cache.root, "k", ["TL101"]).entries
    assert len(final) == 2 and any(p.endswith("/e.py") for p in final)  # this run's entry kept first
    monkeypatch.setattr(cache_mod, "MAX_ENTRIES", 1)
    assert cache_mod.Cache(cache.root, "k", ["TL101"]).entries == {}  # over the cap when read: not used


# -- --watch when idle -----------------------------------------------------------------------------------------------------
class _Stop(Exception):
    pass


def _quiet_watch(monkeypatch, snapshots, sleeps_allowed):
    """watch_loop with the linting run counted, snapshots from a list (the last one repeated) and
    sleeps recorded; stops with _Stop after ``sleeps_allowed`` sleeps."""
    import torchlint.watch as watch

    runs, sleeps = [], []
    monkeypatch.setattr(watch, "run_check", lambda opts: runs.append(1) or 0)
    monkeypatch.setattr(watch, "snapshot", lambda opts: snapshots.pop(0) if len(snapshots) > 1 else snapshots[0])

    def sleep(seconds):
        sleeps.append(seconds)
        if len(sleeps) >= sleeps_allowed:
            raise _Stop

    monkeypatch.setattr(watch, "_sleep", sleep)
    return watch, runs, sleeps


def test_polling_backs_off_while_nothing_changes(monkeypatch, tmp_path):
    from torchlint.checker import CheckOptions

    monkeypatch.chdir(tmp_path)
    snaps = [{"a.py": (1, 1)}] * 6 + [{"a.py": (2, 1)}, {"a.py": (2, 1)}]
    watch, runs, sleeps = _quiet_watch(monkeypatch, snaps, 8)
    try:
        watch.watch_loop(CheckOptions(paths=["."]), events=lambda opts: None)
    except _Stop:
        pass
    assert sleeps == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0, 1.0, 2.0]  # back to once a second after a change
    assert len(runs) == 2


def test_file_events_replace_polling(monkeypatch, tmp_path):
    from torchlint.checker import CheckOptions

    monkeypatch.chdir(tmp_path)
    snaps = [{"a.py": (1, 1)}, {"a.py": (1, 1)}, {"a.py": (2, 1)}, {"a.py": (2, 1)}]
    watch, runs, sleeps = _quiet_watch(monkeypatch, snaps, 1)
    ticks = iter([False, False, True, True, False, True])  # quiet ticks never list the files
    try:
        watch.watch_loop(CheckOptions(paths=["."]), events=lambda opts: ticks)
    except _Stop:
        pass
    assert len(runs) == 2  # the first run and the one after the change; the other events changed nothing
    assert sleeps == [1.0]  # the events ran out: polling took over


def test_watchfiles_sees_a_change(monkeypatch, tmp_path):
    import threading

    import pytest

    pytest.importorskip("watchfiles")
    import torchlint.watch as watch
    from torchlint.checker import CheckOptions

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    runs = []
    monkeypatch.setattr(watch, "run_check", lambda opts: runs.append(1) or 0)
    monkeypatch.setattr(watch, "_sleep", lambda s: (_ for _ in ()).throw(AssertionError("polled")))
    done = threading.Thread(target=watch.watch_loop, args=(CheckOptions(paths=["."]),), kwargs={"runs": 2}, daemon=True)
    done.start()
    import time

    deadline = time.monotonic() + 30
    while not runs and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the watcher has started
    (tmp_path / ".torchlint_cache").mkdir()
    (tmp_path / ".torchlint_cache" / "x.json").write_text("{}")  # the cache's own writes are not a change
    (tmp_path / "a.py").write_text("x = 22\n")
    done.join(30)
    assert not done.is_alive() and len(runs) == 2


@pytest.mark.slow
def test_what_a_worker_inherits_from_a_large_parent_does_not_count_against_its_file():
    from torchlint.workers import FORK_ALLOWANCE, Pool, current_rss

    held = b"x" * (FORK_ALLOWANCE + (200 << 20))  # the parent holds a long run's findings
    limit = FORK_ALLOWANCE + (100 << 20)
    assert current_rss() > limit
    with Pool(_grow, 1, memory=limit) as pool:
        outcomes = list(pool.run([16], lambda _item: 60.0))
    assert [(item, out.kind) for item, out in outcomes] == [(16, "ok")]
    del held
