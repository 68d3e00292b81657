import os
import subprocess
import sys
import textwrap

import pytest

TRAIN_BUG = textwrap.dedent(
    """\
    import torch


    def train(model, loader, criterion):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
)

CE_BUG = textwrap.dedent(
    """\
    import torch
    import torch.nn.functional as F


    def loss_fn(logits, target):
        return F.cross_entropy(torch.softmax(logits, dim=-1), target)
    """
)

CLEAN = textwrap.dedent(
    """\
    import torch


    def train(model, loader, criterion, optimizer):
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
    """
)


class Runner:
    def __init__(self, cwd):
        self.cwd = cwd

    def __call__(self, *args, stdin=None, env=None, cwd=None):
        full_env = dict(os.environ)
        full_env.pop("PYTHONHASHSEED", None)
        if env:
            full_env.update(env)
        return subprocess.run(
            [sys.executable, "-m", "torchlint", *args],
            cwd=str(cwd or self.cwd),
            input=stdin,
            capture_output=True,
            text=isinstance(stdin, str) or stdin is None,
            env=full_env,
            timeout=300,
        )


@pytest.fixture
def run(tmp_path):
    return Runner(tmp_path)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(TRAIN_BUG)
    (tmp_path / "pkg" / "losses.py").write_text(CE_BUG)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    return tmp_path


# -- the `slow` marker ------------------------------------------------------------------------------
# `pytest` runs the fast subset (pyproject.toml deselects `slow`); `pytest -m ""` runs everything (CI).
# Slow: every test of the files below (they run programs, editors or language-server sessions), every
# test that uses the `run` fixture (one torchlint subprocess or more), and the tests listed by name,
# which took a second or more each (`pytest -m "" --durations=0`, one file at a time, on a loaded
# 2-core machine).
SLOW_FILES = {
    "test_fix_safety.py", "test_never_hang.py", "test_pre_commit.py", "test_properties.py", "test_server.py",
    "test_server_neovim.py", "test_server_notebook.py", "test_server_parity.py", "test_watchdog.py",
}
SLOW_TESTS = {
    "test_bad_input.py": ["test_missing_path", "test_symlink_loop"],
    "test_cli.py": [
        "test_cache_hit_and_clean", "test_clean_exit_0_and_default_path", "test_deterministic_across_hash_seeds_and_jobs",
        "test_diff_shows_without_writing", "test_findings_exit_1_with_ruff_style_lines", "test_fix_does_not_touch_unreported_files",
        "test_fix_without_check_word_then_clean", "test_github_output", "test_json_output", "test_linter_never_imports_torch",
        "test_rule_and_rules_commands", "test_sarif_output", "test_select_ignore_prefixes", "test_statistics_and_exit_zero",
        "test_stdin", "test_unsafe_fix_needs_flag",
    ],
    "test_config.py": [
        "test_bad_values", "test_ce_only_file", "test_command_line_ignore_applies_over_config_select",
        "test_config_found_from_subfolder", "test_default_excludes_and_gitignore",
        "test_default_excludes_do_not_apply_to_folders_above_a_named_path", "test_exclude_and_extend_exclude",
        "test_explicit_config_file", "test_isolated_ignores_config", "test_per_file_ignores",
        "test_select_and_ignore_from_pyproject",
    ],
    "test_docs.py": ["test_docs_rules_are_current"],  # lints the cases every rule page shows
    "test_editor_fixer.py": ["test_stdin_fixer_prints_fixed_text_and_uses_the_files_configuration"],
    "test_flake8.py": ["test_flake8_extend_ignore", "test_flake8_noqa_is_honoured", "test_same_findings_as_cli"],
    "test_flake8_selection.py": ["test_rules_imported_when_tl_is_selected", "test_selection_follows_flake8_options",
                                 "test_nothing_imported_when_no_tl_code_is_selected"],
    "test_hardening_cache.py": [
        "test_cache_dir_dot_does_not_hide_the_project", "test_clean_removes_only_marked_folders",
        "test_entry_bound_to_file_identity", "test_fifo_named_py_does_not_hang", "test_gitignore_only_in_a_created_folder",
        "test_planted_entry_cannot_hide_findings", "test_symlinked_cache_dir_is_not_written_through",
    ],
    "test_hardening_cli.py": [
        "test_bad_configuration_is_one_error_line", "test_control_characters_in_file_names_are_escaped",
        "test_no_all_checks_passed_when_exiting_2", "test_too_deep_folder_is_reported",
    ],
    "test_hardening_flake8.py": ["test_flake8_reports_a_file_libcst_cannot_take"],
    "test_hardening_memory.py": [
        "test_a_file_whose_analysis_goes_over_the_memory_limit_is_tl000_too_large",
        "test_a_worker_over_its_memory_limit_is_stopped_and_the_run_goes_on", "test_without_a_limit_a_worker_may_grow",
        "test_looking_up_a_name_costs_the_same_however_often_it_was_bound",
        "test_what_a_worker_inherits_from_a_large_parent_does_not_count_against_its_file",
    ],
    "test_hardening_parse.py": [
        "test_1000_branch_elif_chain", "test_5000_adjacent_string_literals_are_not_a_parse_error",
        "test_500_term_plus_chain_lints_and_fixes", "test_long_chain_is_tl000_not_a_crash",
    ],
    "test_inject.py": ["test_loops_over_the_batch", "test_fix_check", "test_numeric_equivalence",
                       "test_picks_are_seeded_and_skips_do_not_use_them"],
    "test_hardening_write.py": [
        "test_fix_as_root_keeps_owner_and_group", "test_fix_keeps_extended_attributes", "test_hard_linked_file_is_written_in_place",
        "test_nearest_configuration_per_file", "test_temp_files_of_a_killed_write_are_removed_next_run",
    ],
    "test_noqa.py": ["test_fix_leaves_suppressed_findings", "test_no_noqa_flag", "test_noqa_forms"],
    "test_notebooks.py": [
        "test_cli_codes_case_insensitive_and_statistics_json", "test_cli_fix_diff_and_cache",
        "test_cli_folder_includes_notebooks_and_extend_exclude", "test_cli_formats", "test_cli_nothing_checked",
        "test_cli_stdin_notebook", "test_tutorial_notebook_findings_and_fixed_program_runs",
    ],
    "test_packaging.py": ["test_wheel_contents"],
    "test_program_model.py": [
        "test_cached_result_is_invalidated_when_an_imported_module_changes",
        "test_cached_result_is_invalidated_when_an_imported_module_gains_the_softmax",
        "test_tl101_never_inserts_zero_grad_on_an_object_without_one",
    ],
    "test_tl518_effect.py": ["test_tl518_the_moved_parameter_is_missing_and_untrained_until_fixed"],
    "test_runtime_cross_entropy.py": ["test_cookbook_extremes", "test_import_torchlint_does_not_import_torch"],
    "test_runtime_verify.py": ["test_a_wrong_implementation_fails", "test_main_prints_a_table_and_returns_zero",
                               "test_rows_for_every_function_and_dtype"],
    "test_stress_parse.py": ["test_every_stress_program_is_reported"],
    "test_target_torch.py": ["test_auto_reads_the_projects_requirement"],
    "test_tl1_rules.py": ["test_accumulation_fix_keeps_the_program_running"],
    "test_tl2_fix_equivalence.py": ["test_fix_keeps_values_on_ordinary_inputs"],
    "test_tl2_rules.py": ["test_all_fixes_together_converge_and_are_idempotent"],
}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        name = os.path.basename(path)
        function = getattr(item, "originalname", None) or item.name.split("[", 1)[0]
        if (name in SLOW_FILES or function in SLOW_TESTS.get(name, ()) or "run" in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
