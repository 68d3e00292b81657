"""The documentation: ``docs/rules`` is generated from the rules and kept current, the README stays short,
and every relative link of the Markdown files points at a file of the repository."""
from __future__ import annotations

import pathlib
import re

import pytest

from torchlint import docs
from torchlint.rule_table import render_tables
from torchlint.rules import all_rules

ROOT = pathlib.Path(__file__).resolve().parents[2]
RULES_DOCS = ROOT / "docs" / "rules"


@pytest.mark.slow  # lints the cases every rule page shows
def test_docs_rules_are_current():
    changed, extra = docs.stale(str(ROOT), all_rules())
    assert not changed and not extra, f"stale {changed}, extra {extra}: run `python -m torchlint.docs`"


def test_index_tables_match_the_rules():
    text = (RULES_DOCS / "index.md").read_text(encoding="utf-8")
    assert render_tables(text, all_rules()) == text
    for rule in all_rules():
        assert f"| [{rule.CODE}]({rule.CODE}.md) | {rule.NAME} |" in text


def test_a_changed_page_or_a_page_without_a_rule_is_stale(tmp_path):
    (tmp_path / "rules").mkdir()
    assert docs.main([str(tmp_path)]) == 0
    assert docs.main(["--check", str(tmp_path)]) == 0
    page = tmp_path / "docs" / "rules" / "TL101.md"
    page.write_text(page.read_text(encoding="utf-8").replace("missing-zero-grad", "missing-zero-grads"), encoding="utf-8")
    (tmp_path / "docs" / "rules" / "TL999.md").write_text("# TL999\n", encoding="utf-8")
    changed, extra = docs.stale(str(tmp_path), all_rules())
    assert changed == ["docs/rules/TL101.md"] and extra == ["docs/rules/TL999.md"]
    assert docs.main(["--check", str(tmp_path)]) == 1
    assert docs.main([str(tmp_path)]) == 0
    assert docs.stale(str(tmp_path), all_rules()) == ([], [])
    assert not (tmp_path / "docs" / "rules" / "TL999.md").exists()


def test_generator_refuses_a_folder_that_is_not_the_repository(tmp_path):
    assert docs.main([str(tmp_path)]) == 2
    assert not (tmp_path / "docs").exists()


def test_each_page_has_the_rule_its_message_its_page_and_its_cases():
    for rule in all_rules():
        page = docs.rule_page(rule)
        assert page.splitlines()[1] == f"# {rule.CODE} {rule.NAME}"
        assert rule.MESSAGE.replace("|", "\\|") in page
        for section in ("## What it does", "## Why is this bad?", "## Fix safety"):
            assert section in page, (rule.CODE, section)
        reported, _, valid = page.partition("### Reported")[2].partition("### Not reported")
        assert reported.count("\n```python\n") + reported.count("\n```diff\n") == min(len(rule.INVALID), docs.CASES)
        assert valid.count("\n```python\n") == min(len(rule.VALID), docs.CASES), rule.CODE
        shown = docs._shortest(rule.INVALID, lambda c: c.code)
        # the flag a case's fix needs is the case's own (an unsafe rule may have a safe fix for one case)
        assert reported.count("`--fix --unsafe-fixes` edits it") == sum(1 for c in shown if c.fixed and c.unsafe)
        assert reported.count("`--fix` edits it") == sum(1 for c in shown if c.fixed and not c.unsafe), rule.CODE
        printed = re.findall(r"\n```text\n(.*?)\n```", reported, re.S)
        assert len(printed) == len(shown), rule.CODE
        for lines, case in zip(printed, shown):
            assert len(lines.splitlines()) == case.count, (rule.CODE, lines)
            assert all(re.match(rf"example\.py:\d+:\d+: {rule.CODE} ", line) for line in lines.splitlines()), lines
        shortest = min(rule.INVALID, key=lambda c: len(c.code))
        first = next(line for line in shortest.code.splitlines() if line.strip())
        assert first.strip() in page, rule.CODE


def test_a_fixed_case_is_shown_as_the_edit_the_fix_makes():
    rule = next(r for r in all_rules() if r.CODE == "TL101")
    page = docs.rule_page(rule)
    assert "\n+    optimizer.zero_grad()\n" in page or "+        opt.zero_grad()" in page
    assert "`--fix` edits it (`-` removed, `+` added):" in page


def test_readme_is_short_and_links_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 300
    for target in ("docs/rules/index.md", "docs/architecture.md", "docs/benchmarks.md", "CONTRIBUTING.md"):
        assert f"]({target})" in readme, target


def _markdown_files():
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [f for f in files if f.exists()]


def _broken_links(path: pathlib.Path, root: pathlib.Path):
    """The relative links of a Markdown file (outside code blocks and code spans) that name no file under ``root``."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    text = re.sub(r"`[^`\n]*`", "", text)  # `model_dict[opt.model](num_classes=n)` is code, not a link
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file = (path.parent / target.split("#", 1)[0]).resolve()
        if not file.exists() or root.resolve() not in (file, *file.parents):
            broken.append(target)
    return broken


def test_relative_links_point_at_files_of_the_repository():
    for path in _markdown_files():
        assert not _broken_links(path, ROOT), (path.relative_to(ROOT), _broken_links(path, ROOT))


def test_link_check_sees_a_broken_link(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# a\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text("[a](docs/a.md), [b](docs/b.md), [up](../x.md), [web](https://example.org/b.md)\n"
                    "```\n[in code](nowhere.md)\n```\n`table[key](n)` and [`code`](docs/c.md)\n", encoding="utf-8")
    assert _broken_links(page, tmp_path) == ["docs/b.md", "../x.md", "docs/c.md"]


def _drawn_layers(text: str):
    """layer number -> the text of its rows in the layer drawing of docs/architecture.md."""
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    rows, current = {}, None
    for line in block.splitlines():
        match = re.match(r"\s*(\d+) ", line)
        if match:
            current = int(match.group(1))
        if current is not None:
            rows[current] = rows.get(current, "") + line + "\n"
    return rows


def test_architecture_draws_the_layer_table():
    """Every module prefix of tests/layers/test_layers.py is drawn in its layer's row of docs/architecture.md
    (by its last name: `analysis.names` as `names`), so the drawing follows the table."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("layer_table", ROOT / "tests" / "layers" / "test_layers.py")
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    EXACT, LAYERS = table.EXACT, table.LAYERS

    rows = _drawn_layers((ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    assert sorted(rows) == sorted(set(LAYERS.values())), "one row per layer, numbered as in test_layers"
    for prefix, layer in LAYERS.items():
        if prefix in EXACT:
            continue
        name = prefix.rsplit(".", 1)[-1]
        assert re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", rows[layer]), (
            f"{prefix} (layer {layer}) is not drawn in layer {layer} of docs/architecture.md")


def test_layer_drawing_check_sees_a_misplaced_module():
    text = "## Layers\n\n```\n 1 low     walk, names\n 0 base    reading,\n           folders\n```\n"
    rows = _drawn_layers(text)
    assert set(rows) == {0, 1} and "folders" in rows[0] and "folders" not in rows[1]
