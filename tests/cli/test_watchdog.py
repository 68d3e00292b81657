"""The watchdog: a file whose analysis hangs or kills its process is reported as TL000, with no partial
findings and no fixes, and the run goes on -- in the engine, the CLI (one and two workers, --fix) and
the flake8 plugin (one and two processes).  Workers exit when the process that started them dies."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CE_BUG, CLEAN, TRAIN_BUG
from torchlint import workers
from torchlint.config import ConfigError, parse_table
from torchlint.engine import FileTask, Settings
from torchlint.rules import all_rules
from watchdog_rules import TEST_RULES

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not workers.CAN_ISOLATE, reason="worker processes need os.fork")]

HERE = Path(__file__).parent
LAUNCHER = str(HERE.parent / "watchdog_rules.py")
# a training-loop bug (fixable, TL101) in a file that also makes the test rule sleep or kill
SLEEPY = TRAIN_BUG + "# SLEEP_FOREVER\n"
KILLER = TRAIN_BUG + "# KILL_WORKER\n"
# generous enough for a healthy file on a loaded machine; the sleeping file waits this long
LIMIT = 3
TIMEOUT_MSG = f"analysis of this file took longer than {LIMIT} s; please report it"


def _launch(tool, cwd, *args, timeout=120, env=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]), **(env or {}))
    return subprocess.run(
        [sys.executable, LAUNCHER, tool, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f"[tool.torchlint]\nfile-timeout = {LIMIT}\n")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a_sleepy.py").write_text(SLEEPY)
    (pkg / "b_train.py").write_text(TRAIN_BUG)
    (pkg / "c_killer.py").write_text(KILLER)
    (pkg / "d_losses.py").write_text(CE_BUG)
    (pkg / "e_clean.py").write_text(CLEAN)
    (pkg / "f_train.py").write_text(TRAIN_BUG)
    return tmp_path


def _codes_by_file(text):
    out = {}
    for line in text.splitlines():
        parts = line.split(":", 3)
        if len(parts) == 4 and parts[3].strip()[:2] == "TL":
            out.setdefault(os.path.basename(parts[0]), []).append(parts[3].strip().split(" ", 1)[0])
    return {k: sorted(v) for k, v in out.items()}


# -- the engine ------------------------------------------------------------------------------------
@pytest.mark.parametrize("jobs", [1, 2])
def test_engine_reports_timeouts_and_crashes_and_goes_on(tree, jobs):
    settings = Settings(all_rules() + TEST_RULES)
    tasks = [FileTask(str(p)) for p in sorted((tree / "pkg").iterdir())]
    start = time.monotonic()
    results = {os.path.basename(r.path): r for r in workers.lint_files(tasks, settings, jobs, 1 << 20, LIMIT)}
    assert time.monotonic() - start < 60
    assert sorted(results) == sorted(os.path.basename(t.path) for t in tasks)
    sleepy, killer = results["a_sleepy.py"], results["c_killer.py"]
    assert [(d.code, d.line, d.message) for d in sleepy.diagnostics] == [("TL000", 1, TIMEOUT_MSG)]
    assert [d.code for d in killer.diagnostics] == ["TL000"]
    assert "stopped the worker process (killed by SIGKILL)" in killer.diagnostics[0].message
    assert not sleepy.cacheable and not killer.cacheable
    assert not sleepy.errors and not killer.errors
    # the files after the bad ones were linted by fresh workers
    for name in ("b_train.py", "f_train.py"):
        assert [d.code for d in results[name].diagnostics] == ["TL101"], name
    assert [d.code for d in results["d_losses.py"].diagnostics] == ["TL103"]
    assert results["e_clean.py"].diagnostics == []


def test_a_busy_loop_is_stopped_too():
    """A hang that keeps a CPU busy is stopped once it has used its budget of CPU time."""
    sup = workers.text_supervisor()
    try:
        start = time.monotonic()
        settings = Settings(all_rules() + TEST_RULES)
        out = workers.lint_text(FileTask("spin.py"), TRAIN_BUG + "# SPIN_FOREVER\n", settings, 1, sup)
        took = time.monotonic() - start
    finally:
        sup.close()
    assert [(d.code, d.message) for d in out.diagnostics] == [
        ("TL000", "analysis of this file took longer than 1 s; please report it")
    ]
    assert took < workers.WALL_FACTOR * 1 + 30


def test_budget_grows_with_the_file():
    assert workers.budget(2.0, 100) == 2.0
    assert workers.budget(2.0, workers.SCALE_BYTES) == 2.0
    assert workers.budget(2.0, 10 * workers.SCALE_BYTES) == 20.0


def test_supervisor_survives_a_timeout_and_keeps_its_worker():
    sup = workers.text_supervisor()
    settings = Settings(all_rules() + TEST_RULES)
    try:
        ok = workers.lint_text(FileTask("t.py"), TRAIN_BUG, settings, 30, sup)
        pid = sup._pool.workers[0].pid
        again = workers.lint_text(FileTask("t.py"), TRAIN_BUG, settings, 30, sup)
        assert sup._pool.workers[0].pid == pid  # one worker serves file after file
        hung = workers.lint_text(FileTask("s.py"), SLEEPY, settings, LIMIT, sup)
        after = workers.lint_text(FileTask("t.py"), TRAIN_BUG, settings, 30, sup)
    finally:
        sup.close()
    assert [d.code for d in ok.diagnostics] == [d.code for d in again.diagnostics] == ["TL101"]
    assert [(d.code, d.message) for d in hung.diagnostics] == [("TL000", TIMEOUT_MSG)]
    assert [d.code for d in after.diagnostics] == ["TL101"]


def test_file_timeout_setting_is_validated(tmp_path):
    path = str(tmp_path / "pyproject.toml")
    assert parse_table({"file-timeout": 2}, path, all_rules()).file_timeout == 2.0
    for bad in (0, -1, True, "5", float("inf")):
        with pytest.raises(ConfigError, match="file-timeout"):
            parse_table({"file-timeout": bad}, path, all_rules())


# -- the command line ------------------------------------------------------------------------------
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_cli_reports_timeout_and_crash_and_finishes(tree, jobs):
    res = _launch("cli", tree, "--no-cache", "--jobs", jobs, "pkg")
    assert res.returncode == 1, res.stderr
    found = _codes_by_file(res.stdout)
    assert found == {
        "a_sleepy.py": ["TL000"],
        "b_train.py": ["TL101"],
        "c_killer.py": ["TL000"],
        "d_losses.py": ["TL103"],
        "f_train.py": ["TL101"],
    }
    assert f"a_sleepy.py:1:1: TL000 {TIMEOUT_MSG}" in res.stdout
    assert "Traceback" not in res.stderr


def test_cli_fix_leaves_the_timed_out_file_untouched(tree):
    res = _launch("cli", tree, "--no-cache", "--fix", "pkg")
    assert res.returncode == 1, res.stderr
    assert (tree / "pkg" / "a_sleepy.py").read_text() == SLEEPY
    assert (tree / "pkg" / "c_killer.py").read_text() == KILLER
    assert (tree / "pkg" / "b_train.py").read_text() != TRAIN_BUG  # the others were fixed
    assert "zero_grad()" in (tree / "pkg" / "b_train.py").read_text()
    assert _codes_by_file(res.stdout) == {"a_sleepy.py": ["TL000"], "c_killer.py": ["TL000"]}


def test_cli_timeout_is_not_cached(tree):
    first = _launch("cli", tree, "pkg")
    assert f"a_sleepy.py:1:1: TL000 {TIMEOUT_MSG}" in first.stdout
    # the same file, the same settings, but the analysis finishes this time: the timeout was not cached
    second = _launch("cli", tree, "pkg", env={"TORCHLINT_TEST_AWAKE": "1"})
    assert _codes_by_file(second.stdout)["a_sleepy.py"] == ["TL101"]


def test_cli_stdin_is_watched(tmp_path):
    (tmp_path / "pyproject.toml").write_text(f"[tool.torchlint]\nfile-timeout = {LIMIT}\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, LAUNCHER, "cli", "-", "--stdin-filename", "s.py"], cwd=tmp_path,
                         input=SLEEPY, capture_output=True, text=True, timeout=120, env=env)
    assert f"s.py:1:1: TL000 {TIMEOUT_MSG}" in res.stdout
    assert res.returncode == 1


# -- flake8 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_flake8_reports_timeout_and_crash_and_finishes(tree, jobs):
    res = _launch("flake8", tree, "--select", "TL", "-j", jobs, "pkg")
    found = _codes_by_file(res.stdout)
    assert found == {
        "a_sleepy.py": ["TL000"],
        "b_train.py": ["TL101"],
        "c_killer.py": ["TL000"],
        "d_losses.py": ["TL103"],
        "f_train.py": ["TL101"],
    }, res.stdout + res.stderr
    assert f"a_sleepy.py:1:1: TL000 {TIMEOUT_MSG}" in res.stdout
    assert res.returncode == 1


# -- parent death ------------------------------------------------------------------------------------
def _children(pid):
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid):
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_workers_exit_when_the_parent_dies(tree, sig):
    (tree / "pyproject.toml").write_text("[tool.torchlint]\nfile-timeout = 600\n")
    for path in (tree / "pkg").iterdir():
        path.write_text(SLEEPY)  # every worker gets stuck
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, LAUNCHER, "cli", "--no-cache", "--jobs", "2", "pkg"], cwd=tree,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        deadline = time.monotonic() + 60
        kids = []
        while time.monotonic() < deadline and len(kids) < 2:
            time.sleep(0.2)
            kids = _children(proc.pid)
        assert len(kids) == 2, "the workers did not start"
        time.sleep(1.0)  # both sleepy files are being analysed now
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.2)
        assert not any(_alive(k) for k in kids), "orphaned workers kept running"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


_KEPT = []


def _full_collections_after(item):
    """Keep ``item`` MiB alive for good (memory a collection cannot give back), then report how many
    full collections this worker has made so far."""
    if item:
        _KEPT.append(bytearray(item * 1024 * 1024))
    import gc

    return gc.get_stats()[2]["collections"]


@pytest.mark.skipif(not workers.CAN_ISOLATE, reason="workers are forked processes")
def test_a_worker_collects_once_per_growth_not_after_every_file(monkeypatch):
    # one file leaves the worker 40 MiB above where it started, for good; the files after it allocate
    # nothing. A full collection then frees nothing, so the worker makes one and not one per file.
    monkeypatch.setattr(workers, "COLLECT_BYTES", 16 * 1024 * 1024)
    items = [40] + [0] * 6
    with workers.Pool(_full_collections_after, 1) as pool:
        counts = [out.value for _, out in pool.run(items, lambda _: 30.0)]
    # the worker collected after the first file (its count shows in the second file's answer) ...
    assert counts[1] > counts[0]
    # ... and not after each of the files that allocated nothing
    assert counts[-1] - counts[1] <= 1
