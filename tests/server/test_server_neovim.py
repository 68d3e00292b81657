"""A real editor: headless Neovim starts `torchlint server`, shows its diagnostics and applies a quick fix."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import TRAIN_BUG

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each

pytest.importorskip("pygls")

NVIM = shutil.which("nvim")
SCRIPT = Path(__file__).parent / "editors" / "neovim_quickfix.lua"


def _version():
    out = subprocess.run([NVIM, "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


@pytest.mark.skipif(NVIM is None, reason="neovim is not installed")
def test_neovim_gets_diagnostics_and_applies_a_quick_fix(tmp_path):
    if _version() < (0, 7):
        pytest.skip("vim.lsp.start_client needs neovim 0.7 or newer")
    target = tmp_path / "train.py"
    target.write_text(TRAIN_BUG)
    env = dict(os.environ, TL_FILE=str(target), TL_PYTHON=sys.executable)
    res = subprocess.run(
        [NVIM, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "DIAG 8:9 TL101 [*] Training loop" in out
    assert "ACTION Suppress TL101 on this line" in out
    assert "DONE ok" in out
    assert "AFTER" not in out
    fixed = target.read_text()
    assert fixed == TRAIN_BUG.replace("        loss.backward()", "        optimizer.zero_grad()\n        loss.backward()")
