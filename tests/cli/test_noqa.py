import pytest

from conftest import TRAIN_BUG


@pytest.mark.slow
def test_noqa_forms(run, tmp_path):
    (tmp_path / "a.py").write_text(TRAIN_BUG.replace("loss.backward()", "loss.backward()  # noqa"))
    (tmp_path / "b.py").write_text(TRAIN_BUG.replace("loss.backward()", "loss.backward()  # noqa: TL101"))
    (tmp_path / "c.py").write_text(TRAIN_BUG.replace("loss.backward()", "loss.backward()  # noqa: TL103, E501"))
    (tmp_path / "d.py").write_text("# torchlint: noqa\n" + TRAIN_BUG)
    (tmp_path / "e.py").write_text("# torchlint: noqa: TL103\n" + TRAIN_BUG)
    r = run(".")
    files = sorted({line.split(":")[0] for line in r.stdout.splitlines() if ": TL" in line})
    assert files == ["c.py", "e.py"]


@pytest.mark.slow
def test_fix_leaves_suppressed_findings(run, tmp_path):
    src = TRAIN_BUG.replace("loss.backward()", "loss.backward()  # noqa: TL101")
    (tmp_path / "a.py").write_text(src)
    r = run("--fix", "a.py")
    assert r.returncode == 0
    assert (tmp_path / "a.py").read_text() == src


@pytest.mark.slow
def test_no_noqa_flag(run, tmp_path):
    (tmp_path / "a.py").write_text(TRAIN_BUG.replace("loss.backward()", "loss.backward()  # noqa"))
    assert "TL101" in run("--no-noqa", "a.py").stdout
