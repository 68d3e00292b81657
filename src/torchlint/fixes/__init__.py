"""Fixes: the edit toolkit rules build fixes with, applying a round of fixes to a tree, the text edits
of a fix (for machine-readable output), and writing fixed files back atomically."""
from torchlint.fixes.apply import (
    Edit,
    EditMaker,
    FileChangedError,
    apply_fixes,
    fix_edits,
    write_atomic,
)
from torchlint.fixes.toolkit import (
    add_argument,
    add_decorator,
    import_anchor,
    import_module,
    import_name,
    insert_statement,
    remove_argument,
    wrap_statements,
)

__all__ = [
    "Edit",
    "EditMaker",
    "FileChangedError",
    "apply_fixes",
    "fix_edits",
    "write_atomic",
    "add_argument",
    "add_decorator",
    "import_anchor",
    "import_module",
    "import_name",
    "insert_statement",
    "remove_argument",
    "wrap_statements",
]
