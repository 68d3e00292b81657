"""The wheel ships the rule catalog as `torchlint.rules` and declares no torch dependency."""
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contents(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("torchlint-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    rule_files = sorted(p.name for p in (ROOT / "rules").glob("tl*.py"))
    assert rule_files and all(f"torchlint/rules/{name}" in names for name in rule_files)
    assert "torchlint/rules/__init__.py" in names
    assert "torchlint/runtime/__init__.py" in names
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    plain = [r for r in requires if "extra ==" not in r]
    assert plain and not any(r.split()[1].lower().startswith("torch") for r in plain)
    assert any(r.startswith("Requires-Dist: torch") and 'extra == "runtime"' in r for r in requires)
    assert "torchlint = torchlint.cli:main" in entry_points
    assert "TL = torchlint.flake8_plugin:TorchLintPlugin" in entry_points
