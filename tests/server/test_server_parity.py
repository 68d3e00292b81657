"""The language server reports what the CLI reports, file for file (the rules' own VALID and INVALID
cases, with their options set through a configuration file)."""
import asyncio
import json
import subprocess
import sys

import pytest

pytest.importorskip("pygls")
pytest.importorskip("pytest_lsp")

from lsprotocol import types as T  # noqa: E402

from test_server import TIMEOUT, Session  # noqa: E402
from torchlint.rule import Valid  # noqa: E402
from torchlint.rules import all_rules  # noqa: E402

pytestmark = pytest.mark.slow  # programs, editors or server sessions: seconds each


def _toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(value)


def _cases():
    for rule in all_rules():
        for i, case in enumerate(rule.INVALID):
            yield f"{rule.CODE.lower()}_invalid_{i}", case.code, dict(case.options)
        for i, case in enumerate(rule.VALID):
            case = case if isinstance(case, Valid) else Valid(case)
            yield f"{rule.CODE.lower()}_valid_{i}", case.code, dict(case.options)


def _cli(folder):
    res = subprocess.run(
        [sys.executable, "-m", "torchlint", "--no-cache", "--output-format", "json", "."],
        cwd=folder, capture_output=True, text=True, timeout=600,
    )
    assert res.returncode in (0, 1), res.stderr
    out = set()
    for d in json.loads(res.stdout):
        fix = d["fix"]["applicability"] if d["fix"] else None
        name = d["filename"].replace("\\", "/").split("/")[-1]
        out.add((name, d["location"]["row"], d["location"]["column"], d["end_location"]["row"],
                 d["end_location"]["column"], d["code"], d["message"], fix))
    return out


def _utf16_to_col(line, units):
    count = 0
    for i, ch in enumerate(line):
        if count >= units:
            return i
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(line)


def test_server_and_cli_report_the_same_findings(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    folders = {plain: {}}
    docs = []
    for name, code, options in _cases():
        folder = plain
        if options:
            folder = tmp_path / name
            folder.mkdir()
            (folder / "torchlint.toml").write_text("".join(f"{k} = {_toml_value(v)}\n" for k, v in options.items()))
            folders[folder] = options
        (folder / f"{name}.py").write_text(code)
        docs.append((folder / f"{name}.py", code))

    expected = set()
    for folder in folders:
        expected |= _cli(folder)
    assert any(f[-1] == "safe" for f in expected) and len({f[5] for f in expected}) == len([r for r in all_rules() if r.DEFAULT_ENABLED])

    async def scenario():
        s = Session(tmp_path)
        await s.start()
        got = set()
        for path, code in docs:
            uri = path.as_uri()
            s.versions[uri] = 1
            s.client.text_document_did_open(
                T.DidOpenTextDocumentParams(
                    text_document=T.TextDocumentItem(uri=uri, language_id="python", version=1, text=code)
                )
            )
        for path, code in docs:
            lines = code.split("\n")
            for d in await s.diagnostics(path.as_uri(), 1):
                start, end = d.range.start, d.range.end
                fix = d.data["fix"]["applicability"] if d.data["fix"] else None
                message = d.message[4:] if d.message.startswith("[*] ") else d.message
                got.add((path.name, start.line + 1, _utf16_to_col(lines[start.line], start.character) + 1,
                         end.line + 1, _utf16_to_col(lines[end.line], end.character) + 1, d.code, message, fix))
        await s.stop()
        return got

    got = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT * 4))
    assert got == expected
