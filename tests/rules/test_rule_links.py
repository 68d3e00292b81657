"""Rule pages and links in json, SARIF and the configuration: each rule's page travels with the SARIF
rules, json carries no machine-local path, and `docs-url` (a URL template with `{code}`) feeds the links."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from torchlint import cli, report
from torchlint.config import ConfigError, parse_table, with_overrides
from torchlint.engine import Diagnostic
from torchlint.rules import all_rules

RULES = all_rules()
RULE_MAP = {r.CODE: r for r in RULES}
DIAGS = [Diagnostic("pkg/a.py", 3, 5, "TL103", "msg"), Diagnostic("pkg/a.py", 1, 1, "TL000", "does not parse")]
TEMPLATE = "https://docs.example.org/torchlint/{code}-{name}.html"


def test_json_carries_no_machine_local_path():
    data = json.loads(report.format_json(DIAGS, RULE_MAP))
    assert [d["url"] for d in data] == [None, None]
    assert "file://" not in json.dumps(data) and "site-packages" not in json.dumps(data)
    data = json.loads(report.format_json(DIAGS, RULE_MAP, docs_url=TEMPLATE))
    assert data[0]["url"] == "https://docs.example.org/torchlint/TL103-softmax-before-cross-entropy.html"


def test_sarif_embeds_every_rule_page():
    sarif = json.loads(report.format_sarif(DIAGS, RULE_MAP))
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    for rule in RULES:
        entry = rules[rule.CODE]
        assert entry["help"]["markdown"] == rule.documentation()
        assert entry["fullDescription"]["text"] == rule.documentation()
        assert "helpUri" not in entry
    assert "file://" not in json.dumps(sarif) and "site-packages" not in json.dumps(sarif)
    sarif = json.loads(report.format_sarif(DIAGS, RULE_MAP, docs_url=TEMPLATE))
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TL518"]["helpUri"] == "https://docs.example.org/torchlint/TL518-parameter-moved-after-creation.html"
    assert rules["TL000"]["helpUri"].startswith("https://docs.example.org/torchlint/TL000-")


def test_docs_url_setting():
    assert parse_table({"docs-url": TEMPLATE}, "pyproject.toml", RULES).docs_url == TEMPLATE
    for bad in ("https://docs.example.org/rules", 3):
        with pytest.raises(ConfigError, match="docs-url"):
            parse_table({"docs-url": bad}, "pyproject.toml", RULES)
    base = parse_table({}, "pyproject.toml", RULES)
    assert with_overrides(base, {"docs-url": "https://x.org/{code}"}, RULES).docs_url == "https://x.org/{code}"


def test_docs_url_reaches_the_json_output(tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.torchlint]\ndocs-url = "https://docs.example.org/{code}"\n')
    (tmp_path / "loss.py").write_text(
        "import torch\nimport torch.nn.functional as F\n\n\ndef f(x, y):\n"
        "    return F.cross_entropy(torch.softmax(x, dim=-1), y)\n"
    )
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli.main, ["check", "--no-cache", "--output-format", "json", "loss.py"]).output
    assert [d["url"] for d in json.loads(out)] == ["https://docs.example.org/TL103"]


def test_the_editor_configuration_carries_docs_url(tmp_path):
    from torchlint.lsp.documents import ConfigStore

    (tmp_path / "pyproject.toml").write_text(f'[tool.torchlint]\ndocs-url = "{TEMPLATE}"\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    assert ConfigStore(RULES).resolve(str(tmp_path / "a.py"), str(tmp_path)).docs_url == TEMPLATE
