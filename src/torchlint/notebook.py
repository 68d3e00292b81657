"""Jupyter notebooks: read one as a program, map findings back to cells, write fixed cells back.

A notebook's code cells, in order, form one module for the analysis (a model built in cell 2 and
trained in cell 9 is one model).  IPython syntax is masked line by line, keeping the line count, so
positions map straight back: line magics, shell escapes (``!cmd``, ``x = !cmd``), help (``obj?``) become
``pass`` at their indentation; cells whose magic makes them another language (``%%bash``,
``%%writefile``, ...) are left out; ``%%time``-like cell magics keep their Python body.  A cell that does
not parse alone is reported (TL000, with its cell and line) and left out; the others are still linted.

Fixes are made on the module text and split back into the cells by a line diff; the notebook file is
then edited in place: only the changed cells' ``source`` values are rewritten, in the style they had
(a string or a list of lines, the file's indentation and escaping), so outputs, metadata, ids, key
order and the final newline stay byte for byte.
"""
from __future__ import annotations

import bisect
import difflib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from torchlint.engine import PARSE_ERROR, Diagnostic, FileResult, Settings, file_noqa, lint_source, parse_failure

NOTEBOOK_SUFFIX = ".ipynb"

# Cell magics whose body is Python run in the kernel (the magic line alone is masked).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "memit", "debug"})
_MASK = "pass"
_CELL_MAGIC = re.compile(r"%%([A-Za-z_][\w.-]*)")
# ``x = !ls``, ``x = %who_ls``, ``a, b = !cmd`` (an assignment whose value is IPython syntax)
_ASSIGN_ESCAPE = re.compile(r"^[\w.\[\]\s,()*]+=\s*[!%]")
# ``obj?``, ``obj.attr??``, ``torch.*Tensor?`` (a wildcard search of names)
_HELP_END = re.compile(r"^[\w.\[\]()'\"*]*[\w)\]*]\?{1,2}\s*$")


def is_notebook(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


class NotebookError(Exception):
    """The file is not a notebook torchlint can read (reported as TL000 at ``line``:``col``)."""

    def __init__(self, message: str, line: int = 1, col: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.col = col


# -- a JSON scanner that remembers where each cell's source is ------------------------------------------------------
_WS = " \t\n\r"
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")


class _Scanner:
    """Finds the spans of the values at ``cells[i].source`` (and of each item when a list)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.sources: Dict[int, Tuple[int, int, List[Tuple[int, int]]]] = {}

    def skip_ws(self, i: int) -> int:
        t = self.text
        while i < len(t) and t[i] in _WS:
            i += 1
        return i

    def value(self, i: int, path: Tuple[Any, ...]) -> int:
        t = self.text
        i = self.skip_ws(i)
        if i >= len(t):
            raise ValueError("unexpected end")
        c = t[i]
        if c == "{":
            i = self.skip_ws(i + 1)
            if t[i] == "}":
                return i + 1
            while True:
                i = self.skip_ws(i)
                key_start = i
                i = self.string(i)
                key = json.loads(t[key_start:i])
                i = self.skip_ws(i)
                if t[i] != ":":
                    raise ValueError("expected ':'")
                start = self.skip_ws(i + 1)
                sub = path + (key,)
                i = self.value(start, sub)
                if len(sub) == 3 and sub[0] == "cells" and sub[2] == "source":
                    items = self._items(start, i) if t[start] == "[" else []
                    self.sources[sub[1]] = (start, i, items)
                i = self.skip_ws(i)
                if t[i] == ",":
                    i += 1
                    continue
                if t[i] == "}":
                    return i + 1
                raise ValueError("expected ',' or '}'")
        if c == "[":
            i = self.skip_ws(i + 1)
            if t[i] == "]":
                return i + 1
            n = 0
            while True:
                i = self.value(i, path + (n,))
                n += 1
                i = self.skip_ws(i)
                if t[i] == ",":
                    i += 1
                    continue
                if t[i] == "]":
                    return i + 1
                raise ValueError("expected ',' or ']'")
        if c == '"':
            return self.string(i)
        for lit in ("true", "false", "null"):
            if t.startswith(lit, i):
                return i + len(lit)
        m = _NUMBER.match(t, i)
        if m is None or m.end() == i:
            raise ValueError("unexpected character")
        return m.end()

    def string(self, i: int) -> int:
        """The end of the string that starts at ``i``: the first quote after it with an even run of
        backslashes before it.  Found with ``str.find``, in time linear in the string and constant
        memory (a regular expression repeats a group per character or per escape and keeps state for
        each: a notebook's megabytes of output took a hundred times their size)."""
        t = self.text
        if t[i] != '"':
            raise ValueError("expected a string")
        start = j = i + 1
        while True:
            k = t.find('"', j)
            if k < 0:
                raise ValueError("unterminated string")
            b = k
            while b > start and t[b - 1] == "\\":
                b -= 1
            if (k - b) % 2 == 0:
                return k + 1
            j = k + 1

    def _items(self, start: int, end: int) -> List[Tuple[int, int]]:
        out = []
        i = self.skip_ws(start + 1)
        while i < end - 1:
            j = self.string(i)
            out.append((i, j))
            i = self.skip_ws(j)
            if self.text[i] == ",":
                i = self.skip_ws(i + 1)
        return out


# -- the notebook as read ---------------------------------------------------------------------------------------------
@dataclass
class Cell:
    index: int  # 0-based among all cells
    text: str  # the source joined, newlines normalised to "\n"
    newline: str  # "\n", "\r\n" or "\r": how the cell's own lines end
    as_list: bool  # source stored as a list of strings
    span: Optional[Tuple[int, int, List[Tuple[int, int]]]]  # where the source value sits in the file
    masked: Dict[int, str] = field(default_factory=dict)  # 0-based line -> original line text
    python: str = ""  # the text fed to the parser (magics masked)
    skip: bool = False  # not Python (a %%bash cell, ...)
    #: the indentation IPython removes from a cell whose first line is indented (from every line that
    #: starts with it), and the 0-based lines it was removed from: positions there are shifted back
    dedent: str = ""
    dedented: FrozenSet[int] = frozenset()
    raw: str = ""  # the source as stored, when its line breaks are not all "\n" (else empty)


@dataclass
class Notebook:
    text: str  # the file as read
    cells: List[Cell]  # code cells only
    ncells: int
    ensure_ascii: bool
    indent_unit: str
    list_sep: str
    language: Optional[str] = None  # the kernel's language, lower case, when the metadata says
    located: bool = False  # cell spans filled in (locate_sources)


def _split_keep(text: str) -> List[str]:
    return text.splitlines(keepends=True)


def read_notebook(text: str) -> Notebook:
    """Parse and check the notebook JSON; raises NotebookError for what is not a readable notebook."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise NotebookError("invalid notebook JSON: nested too deeply") from None
    except ValueError as exc:
        line = getattr(exc, "lineno", 1) or 1
        col = getattr(exc, "colno", 1) or 1
        msg = getattr(exc, "msg", str(exc))
        raise NotebookError(f"invalid notebook JSON: {msg}", line, col) from None
    if not isinstance(data, dict):
        raise NotebookError("not a Jupyter notebook (the JSON is not an object)")
    if "worksheets" in data and "cells" not in data:
        raise NotebookError("nbformat 3 notebooks are not supported; convert with `jupyter nbconvert --to notebook`")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not a Jupyter notebook (no `cells` list)")
    fmt = data.get("nbformat")
    if fmt is not None and (not isinstance(fmt, int) or fmt < 4):
        raise NotebookError(f"unsupported nbformat {fmt!r} (torchlint reads nbformat 4)")
    out: List[Cell] = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise NotebookError(f"cell {i + 1} is not an object")
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            if not all(isinstance(s, str) for s in source):
                raise NotebookError(f"cell {i + 1}: `source` holds a non-string")
            joined, as_list = "".join(source), True
        elif isinstance(source, str):
            joined, as_list = source, False
        else:
            raise NotebookError(f"cell {i + 1}: `source` is neither a string nor a list of strings")
        newline = "\r\n" if "\r\n" in joined else ("\r" if "\r" in joined else "\n")
        norm = joined.replace("\r\n", "\n").replace("\r", "\n")
        out.append(Cell(i, norm, newline, as_list, None, raw=joined if "\r" in joined else ""))
    return Notebook(text, out, len(cells), _ensure_ascii(text), _indent_unit(text), _list_sep(text),
                    _language(data.get("metadata")))


def locate_sources(nb: Notebook) -> None:
    """Find where each code cell's source sits in the file (needed to write fixes and for file lines)."""
    if nb.located:
        return
    scanner = _Scanner(nb.text)
    try:
        scanner.value(0, ())
    except (ValueError, IndexError, RecursionError) as exc:  # json.loads accepted it: should not happen
        raise NotebookError(f"could not locate the cells in the notebook: {exc}") from None
    for cell in nb.cells:
        cell.span = scanner.sources.get(cell.index)
    nb.located = True


def _ensure_ascii(text: str) -> bool:
    if not text.isascii():
        return False
    return re.search(r"\\u(?:00[89a-fA-F]|0[1-9a-fA-F]|[1-9a-fA-F])[0-9a-fA-F]{2}", text) is not None


def _indent_unit(text: str) -> str:
    m = re.match(r"\{\r?\n([ \t]+)", text)
    return m.group(1) if m else " "


def _list_sep(text: str) -> str:
    return ", " if re.search(r'",\s"', text) and not re.search(r'",\r?\n', text) else ","


def _language(meta: Any) -> Optional[str]:
    if not isinstance(meta, dict):
        return None
    for key, sub in (("language_info", "name"), ("kernelspec", "language")):
        block = meta.get(key)
        if isinstance(block, dict) and isinstance(block.get(sub), str):
            return block[sub].lower()
    return None


# -- masking IPython syntax -------------------------------------------------------------------------------------------
def _line_states(lines: Sequence[str]) -> List[bool]:
    """For each line: does it start a new logical line (not inside brackets, strings or a ``\\``)?"""
    starts = []
    depth = 0
    quote: Optional[str] = None
    cont = False
    for line in lines:
        starts.append(depth == 0 and quote is None and not cont)
        i = 0
        n = len(line)
        cont = False
        while i < n:
            c = line[i]
            if quote is not None:
                if c == "\\":
                    cont = i == n - 1
                    i += 2
                    continue
                if line.startswith(quote, i):
                    i += len(quote)
                    quote = None
                    continue
                i += 1
                continue
            if c == "#":
                break
            if c in "\"'":
                q3 = line[i:i + 3]
                if q3 in ('"""', "'''"):
                    quote = q3
                    i += 3
                else:
                    quote = c
                    i += 1
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth = max(0, depth - 1)
            elif c == "\\" and i == n - 1:
                cont = True
            i += 1
        if quote is not None and len(quote) == 1:
            quote = None if not cont else quote  # an unterminated one-quote string ends with the line
    return starts


def _is_ipython(stripped: str) -> bool:
    if not stripped:
        return False
    c = stripped[0]
    if c in "%!?":
        return True
    if _HELP_END.match(stripped) and not stripped.startswith("#"):
        return True
    return _ASSIGN_ESCAPE.match(stripped) is not None


def mask_cell(cell: Cell) -> None:
    """Fill ``cell.python`` / ``cell.masked`` / ``cell.skip`` / ``cell.dedent``."""
    lines = cell.text.split("\n")
    top = next((n for n, line in enumerate(lines) if line.strip()), 0)
    # IPython runs a cell whose first line is indented with that indentation taken off each line
    prefix = lines[top][: len(lines[top]) - len(lines[top].lstrip(" \t"))] if lines[top].strip() else ""
    if prefix:
        cell.dedent = prefix
        cell.dedented = frozenset(n for n, line in enumerate(lines) if line.startswith(prefix))
        lines = [line[len(prefix):] if n in cell.dedented else line for n, line in enumerate(lines)]
    first = lines[top].strip()
    start = 0
    if first.startswith("%%"):
        m = _CELL_MAGIC.match(first)
        name = m.group(1) if m else ""
        if name not in PYTHON_CELL_MAGICS:
            cell.skip = True
            cell.python = ""
            return
        cell.masked[top] = lines[top]
        lines[top] = _MASK
        start = top + 1
    starts = _line_states(lines)
    i = start
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if starts[i] and _is_ipython(stripped):
            indent = line[: len(line) - len(stripped)]
            cell.masked[i] = line
            lines[i] = indent + _MASK
            j = i
            while cell.masked[j].endswith("\\") and j + 1 < len(lines):
                j += 1
                cell.masked[j] = lines[j]
                lines[j] = indent + _MASK
            i = j + 1
            continue
        i += 1
    cell.python = "\n".join(lines)


# -- one module from the cells ----------------------------------------------------------------------------------------
#: The statement that separates two cells in the program.  It is a statement of its own, so every edit
#: stays on its side: statements inserted before a cell's first statement, or a decorator added to a
#: function at the top of a cell, come after it (in that cell); statements inserted after a cell's last
#: statement come before it (in that cell); comments at the end of a cell stay before it.  It is
#: inert (an ellipsis), binds no name and holds none of the rules' trigger words.
BOUNDARY = "...  # cell boundary"


@dataclass
class Program:
    source: str  # the module text
    starts: List[Tuple[int, int]]  # (first module line, 0-based, of each included cell; cell position in nb.cells)
    #: module lines (0-based) of the boundary statements between cells
    boundaries: List[int] = field(default_factory=list)


def build_program(nb: Notebook, excluded: Sequence[int] = ()) -> Program:
    parts: List[str] = []
    starts: List[Tuple[int, int]] = []
    boundaries: List[int] = []
    line = 0
    for k, cell in enumerate(nb.cells):
        if cell.skip or k in excluded or not cell.python.strip("\n"):
            continue
        if starts:
            parts.append(BOUNDARY + "\n")
            boundaries.append(line)
            line += 1
        text = cell.python if cell.python.endswith("\n") else cell.python + "\n"
        starts.append((line, k))
        parts.append(text)
        line += text.count("\n")
    return Program("".join(parts), starts, boundaries)


def locate(program: Program, line: int) -> Tuple[int, int]:
    """Module line (1-based) -> (position in nb.cells, line within the cell, 1-based)."""
    found = (program.starts[0][1], line) if program.starts else (0, line)
    for first, k in program.starts:
        if first < line:
            found = (k, line - first)
        else:
            break
    return found


def split_fixed(nb: Notebook, program: Program, fixed: str) -> Optional[Dict[int, str]]:
    """The fixed module text back into cells (position in nb.cells -> new cell text ending in "\\n",
    masked lines restored), or None when a change crosses a cell boundary or touches a masked line.

    An edit belongs to the cell that holds its target: the boundary statements between cells stay
    where they are (a change that moves or edits one crosses cells), and lines inserted next to one go
    to the cell on their side of it."""
    if not program.starts:
        return {}
    old = program.source.split("\n")[:-1]  # the module ends with "\n"
    new = fixed.split("\n")
    if new and new[-1] == "":
        new.pop()
    owner: List[int] = []
    cell_line: List[int] = []
    bounds = [first for first, _ in program.starts] + [len(old)]
    boundary = set(program.boundaries)
    for n, (first, k) in enumerate(program.starts):
        end = bounds[n + 1] - (1 if bounds[n + 1] - 1 in boundary else 0)
        owner.extend([k] * (end - first))
        cell_line.extend(range(end - first))
        if end < bounds[n + 1]:
            owner.append(-1)  # the boundary statement after this cell
            cell_line.append(-1)
    per_cell: Dict[int, List[str]] = {k: [] for _, k in program.starts}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                k = owner[i]
                if k < 0:
                    continue
                masked = nb.cells[k].masked.get(cell_line[i])
                if masked is None and cell_line[i] in nb.cells[k].dedented:
                    masked = nb.cells[k].dedent + new[j]
                per_cell[k].append(new[j] if masked is None else masked)
            continue
        if i2 > i1:
            owners = {owner[i] for i in range(i1, i2)}
            if len(owners) != 1 or -1 in owners or any(
                cell_line[i] in nb.cells[owner[i]].masked for i in range(i1, i2)
            ):
                return None
            k = owners.pop()
        elif i1 == 0:
            k = owner[0]
        elif owner[i1 - 1] >= 0:  # after a line of a cell: that cell (before the boundary that follows)
            k = owner[i1 - 1]
        else:  # right after a boundary: the top of the next cell
            k = owner[i1]
        prefix = nb.cells[k].dedent
        per_cell[k].extend(prefix + line if prefix and line.strip() else line for line in new[j1:j2])
    return {k: "".join(line + "\n" for line in lines) for k, lines in per_cell.items()}


def _masked_text(cell: Cell, text: str) -> str:
    """A cell's new text as the parser reads it: its IPython lines masked as the reader masks them."""
    probe = Cell(cell.index, text, "\n", cell.as_list, None)
    mask_cell(probe)
    return "" if probe.skip else probe.python


def unparsable_cells(nb: Notebook, new_texts: Dict[int, str]) -> List[int]:
    """Positions (in nb.cells) of the changed cells that no longer parse on their own."""
    import libcst as cst

    bad = []
    for k, text in sorted(new_texts.items()):
        python = _masked_text(nb.cells[k], text.replace("\r\n", "\n").replace("\r", "\n"))
        try:
            compile(python, f"<cell {nb.cells[k].index + 1}>", "exec", dont_inherit=True)
            cst.parse_module(python if python.endswith("\n") else python + "\n")
        except (SyntaxError, ValueError, cst.ParserSyntaxError):
            bad.append(k)
    return bad


# -- writing back -----------------------------------------------------------------------------------------------------
def _cell_text_from_program(cell: Cell, new_text: str) -> str:
    """The module-side text of a cell (always ending in "\n") back to the cell's own form."""
    text = new_text
    if text.endswith("\n") and not cell.text.endswith("\n"):
        text = text[:-1]
    return cell_own_breaks(cell, text)


def cell_own_breaks(cell: Cell, text: str) -> str:
    """A new text of ``cell`` (lines ending in "\n") with the cell's own line breaks: each line no edit
    touched keeps the break it had (a cell mixing "\r\n" and "\n" stays mixed), added lines get the
    cell's usual one."""
    if not cell.raw:
        return text
    from torchlint.fixes.apply import keep_untouched

    return keep_untouched(cell.raw, cell.text, text, cell.newline)


def _json_str(s: str, ensure_ascii: bool) -> str:
    return json.dumps(s, ensure_ascii=ensure_ascii)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _render_source(nb: Notebook, cell: Cell, new: str) -> str:
    span = cell.span
    assert span is not None
    start, end, items = span
    if not cell.as_list:
        return _json_str(new, nb.ensure_ascii)
    t = nb.text
    lines = _split_keep(new)
    pieces = [_json_str(p, nb.ensure_ascii) for p in lines]
    # a line no edit touched keeps its JSON spelling byte for byte (escapes such as `\/` or `\u00e9`)
    written = [t[a:b] for a, b in items]
    try:
        before = [json.loads(w) for w in written]
    except ValueError:
        before = []
    if len(before) == len(written):
        matcher = difflib.SequenceMatcher(None, before, lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                pieces[j1:j2] = written[i1:i2]
    original = t[start:end]
    if items and "\n" in original:
        first = items[0][0]
        item_indent = t[_line_start(t, first):first]
        close_indent = t[_line_start(t, end - 1):end - 1]
        nl = "\r\n" if "\r\n" in original else "\n"
    elif items:  # one-line list
        sep = t[items[0][1]:items[1][0]] if len(items) > 1 else nb.list_sep  # items: positions in the file
        return "[" + sep.join(pieces) + "]"
    else:  # "[]": indent from the key's line
        key_line = t[_line_start(t, start):start]
        close_indent = key_line[: len(key_line) - len(key_line.lstrip())]
        item_indent = close_indent + nb.indent_unit
        nl = "\r\n" if "\r\n" in t else "\n"
        if "\n" not in t.strip():
            return "[" + nb.list_sep.join(pieces) + "]"
    if not pieces:
        return "[]"
    return "[" + nl + ("," + nl).join(item_indent + p for p in pieces) + nl + close_indent + "]"


def write_cells(nb: Notebook, new_texts: Dict[int, str]) -> str:
    """The notebook file with the given cells' sources replaced (position in nb.cells -> cell text in
    the cell's own newline style); everything else byte for byte."""
    locate_sources(nb)
    edits = []
    for k, text in new_texts.items():
        cell = nb.cells[k]
        if cell.span is None:
            raise NotebookError(f"cell {cell.index + 1}: could not find its source in the file")
        edits.append((cell.span[0], cell.span[1], _render_source(nb, cell, text)))
    out = nb.text
    for start, end, rep in sorted(edits, reverse=True):
        out = out[:start] + rep + out[end:]
    check = json.loads(out)
    for k, text in new_texts.items():
        src = check["cells"][nb.cells[k].index].get("source")
        got = "".join(src) if isinstance(src, list) else src
        if got != text:
            raise NotebookError(f"cell {nb.cells[k].index + 1}: the written source does not read back")
    return out


# -- linting ----------------------------------------------------------------------------------------------------------
def _cell_parse_error(path: str, cell: Cell, python: str):
    """None when the cell parses alone; else its TL000 diagnostic (cell-relative position)."""
    try:
        cst.parse_module(python if python.endswith("\n") else python + "\n")
        return None
    except Exception as exc:
        d = parse_failure(path, python, exc)
        return Diagnostic(path, d.line, d.col, PARSE_ERROR, d.message, cell=cell.index + 1)


def _cell_alone_error(path: str, cell: Cell):
    """The TL000 of a cell that does not parse on its own, screened with CPython's parser (cheap: most
    cells parse) and located by libcst's; None when it parses (or the screen cannot tell)."""
    import ast

    try:
        ast.parse(cell.python)
        return None
    except SyntaxError:
        return _cell_parse_error(path, cell, cell.python)
    except (RecursionError, MemoryError, ValueError):
        return None


def code_bytes(nb: Notebook) -> int:
    """The size of the notebook's code (its code cells' sources, UTF-8): what ``max-file-size`` limits,
    so a notebook with megabytes of image outputs is still linted."""
    return sum(len(c.text.encode("utf-8", "surrogatepass")) for c in nb.cells)


def lint_notebook(path: str, text: str, settings: Settings, max_code_bytes: Optional[int] = None) -> FileResult:
    """Lint (and fix, in memory) one notebook's text: a FileResult whose diagnostics carry their cell
    and whose ``fixed_source`` is the new notebook file.  A notebook with more than ``max_code_bytes``
    of code is skipped with a warning."""
    result = FileResult(path)
    try:
        nb = read_notebook(text)
    except NotebookError as exc:
        result.diagnostics.append(Diagnostic(path, exc.line, exc.col, PARSE_ERROR, str(exc)))
        return result
    if nb.language is not None and nb.language != "python":
        result.skipped = True
        return result
    if max_code_bytes is not None and code_bytes(nb) > max_code_bytes:
        from torchlint.files import code_too_large

        result.warnings.append(f"{path}: {code_too_large(code_bytes(nb), max_code_bytes)}")
        return result
    for cell in nb.cells:
        mask_cell(cell)
    first_code = next((c for c in nb.cells if not c.skip and c.python.strip()), None)
    if settings.noqa and first_code is not None:
        level = file_noqa(first_code.python)
        if level is not None and not level:
            result.skipped = True
            return result
    # each cell must parse on its own (Jupyter runs it alone): two cells that parse only when joined (a
    # string opened in one and closed in the next) are reported, each, and left out of the program
    bad: Dict[int, Diagnostic] = {}
    for k, cell in enumerate(nb.cells):
        if not cell.skip and cell.python.strip():
            d = _cell_alone_error(path, cell)
            if d is not None:
                bad[k] = d
    program = build_program(nb, excluded=list(bad))
    inner = lint_source(path, program.source, settings)
    if any(d.code == PARSE_ERROR for d in inner.diagnostics):
        for k, cell in enumerate(nb.cells):
            if k in bad or cell.skip or not cell.python.strip():
                continue
            d = _cell_parse_error(path, cell, cell.python)
            if d is not None:
                bad[k] = d
        if bad:
            program = build_program(nb, excluded=list(bad))
            inner = lint_source(path, program.source, settings)
    result.errors.extend(inner.errors)
    result.warnings.extend(inner.warnings)
    result.skipped = inner.skipped and not bad
    final = program
    if inner.fixed_source is not None:
        split = split_fixed(nb, program, inner.fixed_source)
        changed: Dict[int, str] = {}
        if split is None:
            result.errors.append(f"{path}: a fix crossed a cell boundary or touched IPython syntax; fixes not applied")
        else:
            for k, new_text in split.items():
                cell_text = _cell_text_from_program(nb.cells[k], new_text)
                if cell_text.replace("\r\n", "\n").replace("\r", "\n") != nb.cells[k].text:
                    changed[k] = cell_text
        broken = unparsable_cells(nb, changed) if changed else []
        if broken:
            cells = ", ".join(str(nb.cells[k].index + 1) for k in broken)
            result.errors.append(
                f"{path}: fixes not written: cell{'s' if len(broken) > 1 else ''} {cells} would not parse on "
                f"{'their' if len(broken) > 1 else 'its'} own after the fix"
            )
            changed = {}
        if changed:
            try:
                result.fixed_source = write_cells(nb, changed)
                result.fixed_count = inner.fixed_count
                result.fixed_codes = dict(inner.fixed_codes)
                final = _program_after(program, split or {})
            except (NotebookError, ValueError) as exc:
                result.errors.append(f"{path}: fixes not written: {exc}")
        if result.fixed_source is None:
            # report what the unfixed notebook holds
            again = lint_source(path, program.source, replace(settings, fix=False))
            inner = again
            final = program
    diags = list(bad.values())
    if not diags and not inner.diagnostics:
        return result
    lines_map = _file_lines(nb if result.fixed_source is None else read_notebook(result.fixed_source))
    for d in inner.diagnostics:
        diags.append(_to_cell(d, nb, final))
    result.diagnostics = [_with_file_line(d, lines_map) for d in diags]
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _program_after(program: Program, split: Dict[int, str]) -> Program:
    starts = []
    boundaries = []
    line = 0
    for _, k in program.starts:
        if starts:
            boundaries.append(line)
            line += 1
        starts.append((line, k))
        line += split[k].count("\n")
    return Program("", starts, boundaries)


def _to_cell(d, nb: Notebook, program: Program):
    k, line = locate(program, d.line)
    cell_no = nb.cells[k].index + 1 if nb.cells else 0
    end_line = d.end_line
    if end_line:
        k2, el = locate(program, end_line)
        end_line = el if k2 == k else line
    fix = d.fix
    if fix is not None and fix.edits:
        edits = []
        for e in fix.edits:
            ek, eline = locate(program, e.line)
            ek2, eend = locate(program, e.end_line)
            if ek != k or ek2 != k:
                edits = []
                break
            edits.append(_indented_edit(nb.cells[k], replace(e, line=eline, end_line=eend)))
        fix = replace(fix, edits=tuple(edits))
    cell = nb.cells[k] if nb.cells else None
    col, end_col = d.col, d.end_col
    if cell is not None and cell.dedent:
        col = _cell_col(cell, line, col)
        end_col = _cell_col(cell, end_line or line, end_col) if end_col else end_col
    return replace(d, line=line, col=col, end_line=end_line, end_col=end_col, cell=cell_no, fix=fix)


def _cell_col(cell: Cell, line: int, col: int) -> int:
    """A 1-based column of the text the parser read, on the cell's 1-based ``line``, in the cell's own
    text (where IPython's dedent removed nothing, the same)."""
    return col + len(cell.dedent) if line - 1 in cell.dedented else col


def _indented_edit(cell: Cell, e):
    """An edit of a cell's dedented text (:attr:`Cell.dedent`) as an edit of the cell's own text: its
    columns shifted back, the lines it inserts indented as the cell is."""
    if not cell.dedent:
        return e
    content = "\n".join(
        cell.dedent + part if n and part.strip() else part for n, part in enumerate(e.content.split("\n"))
    )
    return replace(e, col=_cell_col(cell, e.line, e.col), end_col=_cell_col(cell, e.end_line, e.end_col),
                   content=content)


def _file_lines(nb: Notebook) -> Dict[int, List[int]]:
    """cell number (1-based) -> the file line (1-based) where each of its source lines is stored."""
    out: Dict[int, List[int]] = {}
    try:
        locate_sources(nb)
    except NotebookError:
        return out
    newlines = [m.start() for m in re.finditer("\n", nb.text)]
    for cell in nb.cells:
        if cell.span is None:
            continue
        start, end, items = cell.span
        if cell.as_list and items:
            out[cell.index + 1] = [bisect.bisect_left(newlines, a) + 1 for a, _ in items]
        else:
            out[cell.index + 1] = [bisect.bisect_left(newlines, start) + 1]
    return out


def _with_file_line(d, lines_map: Dict[int, List[int]]):
    rows = lines_map.get(d.cell)
    if not rows:
        return d
    def at(line: int) -> int:
        return rows[min(max(line, 1), len(rows)) - 1]
    return replace(d, file_line=at(d.line), file_end_line=at(d.end_line or d.line))


# -- --diff -----------------------------------------------------------------------------------------------------------
def cell_diffs(path: str, before: str, after: str) -> str:
    """A unified diff per changed cell (``path:cell N``)."""
    try:
        a, b = read_notebook(before), read_notebook(after)
    except NotebookError:
        return ""
    out = []
    for ca, cb in zip(a.cells, b.cells):
        if ca.text == cb.text:
            continue
        name = f"{path}:cell {ca.index + 1}"
        ta, tb = ca.text, cb.text
        if not ta.endswith("\n") and not tb.endswith("\n"):  # a cell's last line has no newline
            ta, tb = ta + "\n", tb + "\n"
        for line in difflib.unified_diff(_split_keep(ta), _split_keep(tb), fromfile=name, tofile=name):
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
