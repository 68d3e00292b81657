"""Programs that import torch, run as their own processes without paying for ``import torch`` each time.

Starting Python and importing torch costs a few seconds of CPU, and an optimizer's first ``step()`` imports
``torch._dynamo``, which costs as much again: together far more than the small programs the tests run
(the fix-safety programs run two or three times each).  A ``WarmPython`` is one Python that imports both
once and then forks a fresh process for each program: the child changes to the program's
folder, sends its standard output and error to files, sets ``sys.argv`` and ``sys.path[0]`` as
``python PROGRAM`` would, reseeds the random generators that a new process would seed from the system,
and runs the program as ``__main__`` (``runpy``); it ends like a Python process does (``sys.exit`` status,
traceback and status 1 on an exception, non-daemon threads joined, ``atexit`` handlers and the standard
streams flushed on the way out; the teardown of every module after that, seconds in a forked copy of a
Python with torch loaded, is left out: it prints nothing).

``WarmPython(env, isolated=True)`` is started as ``python -I`` (no environment variables, no user site, no
script folder on ``sys.path``) and refuses every ``torchlint`` import in the programs it runs, as a program
run under the ``torchlint-fix`` pre-commit hook sees it.  The server itself never imports torchlint.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

SERVER = r'''
import atexit
import json
import os
import runpy
import sys
import threading
import time

import torch
import torch._dynamo  # noqa: F401  imported on an optimizer's first step: as long again as `import torch`

ISOLATED = sys.argv[1] == "isolated"
assert not [m for m in sys.modules if m == "torchlint" or m.startswith("torchlint.")], "torchlint imported"


class _NoTorchlint:
    def find_spec(self, name, path=None, target=None):
        if name == "torchlint" or name.startswith("torchlint."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None


def _child(req):
    os.chdir(req["cwd"])
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    for fd in (null, out, err):
        os.close(fd)
    # a new process seeds these from the system; a forked one would share the server's state
    if "random" in sys.modules:
        sys.modules["random"].seed()
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    torch.default_generator.seed()  # torch.initial_seed() differs from process to process too
    sys.argv = [req["path"]]
    if ISOLATED:
        sys.meta_path.insert(0, _NoTorchlint())  # `python -I` puts no script folder on sys.path
    else:
        sys.path[0] = os.path.dirname(os.path.abspath(req["path"]))
    code = 0
    try:
        runpy.run_path(req["path"], run_name="__main__")
    except SystemExit as stop:  # as the interpreter handles it
        if stop.code is None:
            code = 0
        elif isinstance(stop.code, int):
            code = stop.code
        else:
            print(stop.code, file=sys.stderr)
            code = 1
    except BaseException:
        sys.excepthook(*sys.exc_info())
        code = 1
    # the interpreter's way out, in its order: non-daemon threads, atexit handlers, the standard streams;
    # the module teardown after them (seconds, with torch loaded in a forked copy) changes no output
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    os._exit(code & 0xFF)


def main():
    channel = sys.stdout
    while True:
        line = sys.stdin.readline()
        if not line:
            os._exit(0)  # nothing to tear down
        req = json.loads(line)
        channel.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(req)
        deadline = time.monotonic() + req["timeout"]
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                status = None
                break
            time.sleep(0.005)
        code = None if status is None else os.waitstatus_to_exitcode(status)
        channel.write(json.dumps({"returncode": code}) + "\n")
        channel.flush()


main()
'''


@dataclass
class Completed:
    returncode: int | None  # None: killed after the timeout
    stdout: str
    stderr: str


class WarmPython:
    def __init__(self, env: dict, isolated: bool = False):
        self.folder = Path(tempfile.mkdtemp(prefix="warm-python-"))
        script = self.folder / "warm_server.py"
        script.write_text(SERVER)
        flags = ["-I"] if isolated else []
        mode = "isolated" if isolated else "plain"
        self.proc = subprocess.Popen([sys.executable, *flags, str(script), mode], env=env, cwd=str(self.folder),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.count = 0

    def run(self, path: Path, cwd: Path, timeout: float = 300) -> Completed:
        self.count += 1
        out, err = self.folder / f"{self.count}.out", self.folder / f"{self.count}.err"
        req = {"path": str(path), "cwd": str(cwd), "stdout": str(out), "stderr": str(err), "timeout": timeout}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the warm Python ended (status {self.proc.poll()})"
        code = json.loads(line)["returncode"]
        return Completed(code, out.read_text(), err.read_text())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.proc.stdout.close()
        for f in self.folder.iterdir():
            f.unlink()
        self.folder.rmdir()
