"""The language server's document logic, without a client: configuration, edits, noqa."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pygls")

from torchlint.lsp.documents import (  # noqa: E402
    ConfigStore,
    UserSettings,
    analyse,
    apply_edits,
    fix_all,
    minimal_edit,
    noqa_edit,
    split_lines,
)
from torchlint.rules import all_rules  # noqa: E402

from conftest import CE_BUG, TRAIN_BUG  # noqa: E402


def _noqa(text, line, code="TL103"):
    edit = noqa_edit(text, line, code)
    return None if edit is None else apply_edits(text, [edit])


def test_noqa_added_extended_or_refused():
    assert _noqa("x = f(a)\n", 0) == "x = f(a)  # noqa: TL103\n"
    assert _noqa("x = f(a)   \n", 0) == "x = f(a)  # noqa: TL103\n"
    assert _noqa("x = f(a)  # keep\n", 0) == "x = f(a)  # keep  # noqa: TL103\n"
    assert _noqa("x = f(a)  # noqa: E501\n", 0) == "x = f(a)  # noqa: E501, TL103\n"
    assert _noqa("x = f(a)  # noqa:E501,W291 trailing words\n", 0) == "x = f(a)  # noqa:E501,W291, TL103 trailing words\n"
    assert _noqa("x = f(a)  # noqa\n", 0) is None  # already silences everything
    assert _noqa("x = f(a)\r\ny = 2\r\n", 0) == "x = f(a)  # noqa: TL103\r\ny = 2\r\n"


def test_noqa_never_goes_inside_a_string_or_after_a_backslash():
    text = 'x = f("""a\nb""")\n'
    assert _noqa(text, 0) is None
    assert _noqa(text, 1) == 'x = f("""a\nb""")  # noqa: TL103\n'
    assert _noqa("x = a + \\\n    b\n", 0) is None
    assert _noqa('x = f"{a}\n', 0) is None  # does not tokenize: refuse rather than guess
    assert _noqa("\n", 0) is None


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\r\n😋é", max_size=30), st.text(alphabet="ab\r\n😋é", max_size=30))
def test_minimal_edit_round_trips(before, after):
    edit = minimal_edit(before, after)
    if before == after:
        assert edit is None
    else:
        assert apply_edits(before, [edit]) == after


def test_split_lines_uses_the_lsp_line_breaks():
    assert split_lines("a\r\nb\rc\nd\x0ce") == ["a", "b", "c", "d\x0ce"]


def test_user_settings_ignore_junk():
    base = UserSettings()
    assert UserSettings.from_client(None) == base
    assert UserSettings.from_client({"torchlint": 3}) == base
    assert UserSettings.from_client({"torchlint": {"unsafeFixes": "yes"}}) == base
    assert UserSettings.from_client({"torchlint": {"unsafeFixes": True}}).unsafe_fixes is True
    assert UserSettings.from_client({"unsafeFixes": True}).unsafe_fixes is True


def test_configuration_as_the_cli_finds_it(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.torchlint]\nextend-exclude = ["generated"]\nper-file-ignores = {"legacy/*" = ["TL103"]}\n'
    )
    for folder in ("generated", "legacy", "src"):
        (tmp_path / folder).mkdir()
    store = ConfigStore(all_rules())
    src = store.resolve(str(tmp_path / "src" / "a.py"), str(tmp_path))
    assert src.config_path == str(tmp_path / "pyproject.toml") and src.settings is not None
    assert sorted(d.code for d in analyse("a.py", CE_BUG, 1, src).diagnostics) == ["TL103"]
    excluded = store.resolve(str(tmp_path / "generated" / "a.py"), str(tmp_path))
    assert excluded.excluded and analyse("a.py", CE_BUG, 1, excluded).diagnostics == []
    legacy = store.resolve(str(tmp_path / "legacy" / "a.py"), str(tmp_path))
    assert analyse("a.py", CE_BUG, 1, legacy).diagnostics == []
    # cached until cleared
    (tmp_path / "pyproject.toml").write_text("[tool.torchlint]\nselect = 3\n")
    assert store.resolve(str(tmp_path / "src" / "a.py"), str(tmp_path)).error is None
    store.clear()
    broken = store.resolve(str(tmp_path / "src" / "a.py"), str(tmp_path))
    assert broken.error and "select" in broken.error and broken.settings is None


def test_unfixable_codes_get_no_fix_in_the_editor(tmp_path):
    """``fixable``/``unfixable`` mean in the editor what they mean to ``torchlint --fix``: the finding is
    shown, its quick fix and fix-all edit are not offered."""
    (tmp_path / "torchlint.toml").write_text('unfixable = ["TL103"]\n')
    store = ConfigStore(all_rules())
    cfg = store.resolve(str(tmp_path / "a.py"), str(tmp_path))
    found = analyse("a.py", CE_BUG, 1, cfg, with_edits=True).diagnostics
    assert [d.code for d in found] == ["TL103"] and found[0].fix is None
    assert fix_all("a.py", CE_BUG, cfg, unsafe=True) is None
    (tmp_path / "torchlint.toml").write_text('fixable = ["TL1"]\n')
    store.clear()
    cfg = store.resolve(str(tmp_path / "a.py"), str(tmp_path))
    found = analyse("a.py", CE_BUG, 1, cfg, with_edits=True).diagnostics
    assert found[0].fix is not None and fix_all("a.py", CE_BUG, cfg, unsafe=True) is not None


def test_fix_all_matches_the_engine(tmp_path):
    store = ConfigStore(all_rules())
    cfg = store.resolve(None, str(tmp_path))
    fixed = fix_all("train.py", TRAIN_BUG, cfg, unsafe=False)
    assert fixed is not None and "optimizer.zero_grad()" in fixed
    assert analyse("train.py", fixed, 1, cfg).diagnostics == []
    assert fix_all("train.py", fixed, cfg, unsafe=False) is None
