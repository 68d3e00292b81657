"""The syntax tree of a source file, parsed once per test run.

Several checks read the package's own modules (the layers, the module hygiene, the value API, the
spelling readers, the rules' fact recording): `tree_of` parses each file's text once and hands every
caller the same tree, keyed by the path and the text read now, so an edited or new file is parsed
again. The trees are shared: a caller reads them and never changes them.
"""
from __future__ import annotations

import ast
import os
from typing import Dict, Tuple, Union

_TREES: Dict[Tuple[str, str], ast.Module] = {}


def tree_of(path: Union[str, "os.PathLike[str]"], text: Union[str, None] = None) -> ast.Module:
    """``ast.parse`` of the file ``path`` (its text read as UTF-8 unless ``text`` is given)."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    key = (os.path.realpath(path), text)
    tree = _TREES.get(key)
    if tree is None:
        tree = _TREES[key] = ast.parse(text)
    return tree
