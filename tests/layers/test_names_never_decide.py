"""Identifier spellings are no evidence: the training family decides from what code does and from the
names of torch and library APIs.  This test reads the training family's modules and fails when a new
reading of an identifier's spelling appears (a regular expression over names, a model-name check) that
is not listed below with the role it plays.

Roles:

- ``api``: a table of torch/library API names or source spellings of API calls (``.eval(``,
  ``requires_grad``), never of a program's own variables.
- ``silence``: can only keep a rule silent (a framework hook, a test, Monte-Carlo dropout); it never
  creates a finding or makes a fix safe.
- ``weak``: weak evidence that joins behavioural evidence (a model call, a loss, a backward pass).
- ``debt``: still able to make code an evaluation site on its own together with a model call (named for
  evaluation, a metric name, a validation loader's name).  Known, listed so that none is added; the
  behavioural definition (``EvaluationFacts._outputs_only_off_graph``, ``_forward_through_helpers``,
  ``_decodes``) is what replaces them.
"""
from __future__ import annotations

import ast
from pathlib import Path

from source_trees import tree_of

SRC = Path(__file__).resolve().parents[2] / "src" / "torchlint"
MODULES = [
    SRC / "families" / "training" / "evaluation.py",
    SRC / "families" / "training" / "grad_mode.py",
    SRC / "families" / "training" / "steps.py",
    SRC / "analysis" / "training.py",
    SRC / "analysis" / "mode_layers.py",
    SRC / "analysis" / "roles.py",  # the program model's role answers: what a value is, by what is done with it
    SRC / "analysis" / "effects.py",
]

#: (module file name, pattern variable or function) -> role
KNOWN = {
    ("evaluation.py", "EVAL_NAME"): "debt",
    ("evaluation.py", "HOOK_NAME"): "silence",
    ("evaluation.py", "METRIC_NAME"): "debt",
    ("evaluation.py", "PREDICTION_LIST"): "debt",
    ("evaluation.py", "EVAL_DATA"): "debt",
    ("evaluation.py", "TRAIN_CALL"): "silence",
    ("evaluation.py", "NEEDS_GRAD"): "api",
    ("evaluation.py", "GRAD_READS"): "api",
    ("evaluation.py", "_GRAD_WORDS"): "api",  # the gradient APIs, matched in one name of the code
    ("evaluation.py", "MODEL_BASES"): "silence",
    ("evaluation.py", "_SETS_MODE_ITSELF"): "silence",  # a mode switched or read in a helper's code
    ("evaluation.py", "_NAMED_FOR_EVALUATION"): "silence",  # a helper named for evaluation, followed when found
    ("evaluation.py", "_MODE_WORDS"): "silence",  # a call not followed that may switch a mode: unknown
    ("evaluation.py", "is_model_name"): "weak",
    ("evaluation.py", "_excluded"): "silence",
    ("roles.py", "_NOT_MODULE_CLASS"): "api",  # library classes (`AutoTokenizer`) that build no module
    ("roles.py", "_LAYER_MODEL"): "api",  # torch.nn classes that are whole models or containers
    ("roles.py", "_AUTOGRAD"): "api",  # the autograd API spelled in a method's code
    ("training.py", "_OPTIMIZER_NAME"): "weak",
    ("training.py", "_SCHEDULER_NAME"): "weak",
    ("training.py", "_SCALER_NAME"): "weak",
    ("training.py", "_CLEAR_HELPER"): "weak",
    ("training.py", "_LOSS_CALLEE"): "weak",
    ("training.py", "_BACKWARD_OWNER"): "weak",
}


def _readers(path: Path):
    """Module-level compiled patterns, functions that search a literal pattern, and uses of the
    model-name check."""
    tree = tree_of(path)
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr == "compile" and isinstance(func.value, ast.Name) \
                    and func.value.id == "re":
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        found.add(t.id)
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for call in ast.walk(fn):
            if not isinstance(call, ast.Call):
                continue
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in ("search", "match", "fullmatch", "findall") and \
                    isinstance(func.value, ast.Name) and func.value.id == "re" and call.args and \
                    isinstance(call.args[0], ast.Constant) and r"[A-Za-z_]" not in str(call.args[0].value):
                found.add(fn.name)
    text = path.read_text()
    if "is_model_name(" in text:
        found.add("is_model_name")
    return {(path.name, name) for name in found}


def test_no_new_reading_of_identifier_spellings():
    found = set()
    for path in MODULES:
        found |= _readers(path)
    unknown = sorted(found - set(KNOWN))
    assert unknown == [], (
        "a training-family decision reads an identifier's spelling; decide from behaviour or an API table, "
        f"or list it with its role: {unknown}"
    )


def test_the_list_holds_nothing_that_is_gone():
    found = set()
    for path in MODULES:
        found |= _readers(path)
    assert sorted(set(KNOWN) - found) == []


def test_mode_dependence_reads_only_api_names():
    """The layer tables decide from torch/torchvision API names and literal arguments only."""
    assert _readers(SRC / "analysis" / "mode_layers.py") == set()
