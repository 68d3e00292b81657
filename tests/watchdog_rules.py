"""Test-only rules that misbehave on purpose, and a launcher that runs the CLI or flake8 with them.

``python watchdog_rules.py cli ARGS`` runs ``torchlint ARGS`` and ``python watchdog_rules.py flake8 ARGS``
runs ``flake8 ARGS``, both with these rules added to the catalog.  A file that contains
``SLEEP_FOREVER`` makes the analysis sleep for an hour (unless ``TORCHLINT_TEST_AWAKE`` is set); one
that contains ``KILL_WORKER`` makes the process that analyses it die from SIGKILL, as a native parser
crash would; ``SPIN_FOREVER`` makes it loop forever on a CPU.
"""
import os
import signal
import sys
import time

import libcst as cst

from torchlint.rule import LintRule


class SleepingRule(LintRule):
    CODE = "TL990"
    NAME = "test-only-sleep"
    MESSAGE = "test only"
    TRIGGERS = ("SLEEP_FOREVER",)

    def visit_Module(self, node: cst.Module) -> None:
        if "SLEEP_FOREVER" in self.ctx.source and not os.environ.get("TORCHLINT_TEST_AWAKE"):
            time.sleep(3600)


class KillingRule(LintRule):
    CODE = "TL991"
    NAME = "test-only-kill"
    MESSAGE = "test only"
    TRIGGERS = ("KILL_WORKER",)

    def visit_Module(self, node: cst.Module) -> None:
        if "KILL_WORKER" in self.ctx.source:
            os.kill(os.getpid(), signal.SIGKILL)


class SpinningRule(LintRule):
    CODE = "TL992"
    NAME = "test-only-spin"
    MESSAGE = "test only"
    TRIGGERS = ("SPIN_FOREVER",)

    def visit_Module(self, node: cst.Module) -> None:
        while "SPIN_FOREVER" in self.ctx.source:  # a hang that keeps a CPU busy
            pass


TEST_RULES = [SleepingRule, KillingRule, SpinningRule]


def install() -> None:
    """Add the test rules to ``torchlint.rules.all_rules()`` in this process (and the ones it forks)."""
    import torchlint.rules as catalog

    rules = catalog.all_rules()
    catalog._CACHE[:] = sorted(rules + [r for r in TEST_RULES if r not in rules], key=lambda r: r.CODE)


def main() -> None:
    install()
    tool, args = sys.argv[1], sys.argv[2:]
    if tool == "cli":
        from torchlint.cli import main as cli_main

        sys.argv = ["torchlint", *args]
        cli_main()
    else:
        from flake8.main.cli import main as flake8_main

        sys.exit(flake8_main(args))


if __name__ == "__main__":
    main()
