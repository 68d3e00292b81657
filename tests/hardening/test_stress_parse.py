"""Generated parser and recursion stress (tests/stress_parse.py): one command-line run over a folder of
such programs ends normally and reports every file (each holds a training-loop bug, so each file shows
either that finding or a TL000 saying why it could not be analyzed)."""
import random

import pytest

from stress_parse import program

SEEDS = range(12)


@pytest.mark.slow
def test_every_stress_program_is_reported(run, tmp_path):
    for seed in SEEDS:
        (tmp_path / f"p{seed:02d}.py").write_text(program(random.Random(seed)))
    r = run("--no-cache", "--jobs", "1", ".")
    assert r.returncode == 1, r.stderr[-2000:]
    assert "error:" not in r.stderr, r.stderr[-2000:]
    reported = {line.split(":")[0] for line in r.stdout.splitlines() if ": TL101 " in line or ": TL000 " in line}
    assert reported == {f"p{seed:02d}.py" for seed in SEEDS}
