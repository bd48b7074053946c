"""Sandboxed tool environments: hostile tool calls contained, per-rollout state and budgets, and a real TRL 1.16
GRPOTrainer run with tool calling on the tiny offline model (taught to emit one tool call, so the calls are parsed,
executed in the sandbox and rewarded end to end)."""

from __future__ import annotations

import json
import math
import os
import shutil
import time

import pytest

from rewardsmith import get_reward
from rewardsmith.adapters.trainers.environments import PythonSandboxEnvironment, ShellSandboxEnvironment, truncate
from rewardsmith.adapters.trainers.trl_steps import StepRewardFunc
from tests.support.containment import HOST_CHECKS
from tests.support.containment import host as host  # the fixture: the attack battery's live host facts
from tests.support.hostile_programs import SANDBOX_ATTACKS, render
from tests.support.timing import deadline_bound

needs_sandbox = pytest.mark.skipif(shutil.which("python3") is None, reason="python3 is needed inside the sandbox")


@needs_sandbox
def test_state_persists_within_a_rollout_and_reset_forgets_it():
    env = PythonSandboxEnvironment()
    env.reset()
    assert env.run_python("x = 6") == "[no output]"
    assert env.run_python("print(x * 7)") == "42\n"
    env.reset()
    assert "NameError" in env.run_python("print(x)")


@needs_sandbox
def test_call_limit_budget_and_truncation():
    env = PythonSandboxEnvironment(call_timeout_s=1.0, rollout_budget_s=1.5)
    env.reset()
    assert env.run_python("while True: pass") == "[stopped: time limit of 1s]"
    started = time.monotonic()
    assert "time limit" in env.run_python("import time; time.sleep(60)")  # the rest of the budget, not 60 s
    assert time.monotonic() - started < deadline_bound(0.5, base_slack_s=0.45)
    assert "time budget" in env.run_python("print(1)")
    chatty = PythonSandboxEnvironment(max_output_chars=300, max_calls=2)
    chatty.reset()
    flood = chatty.run_python("print('a' * 100000)")
    assert len(flood) < 400 and "truncated" in flood and "[stopped: output limit]" in flood
    assert chatty.run_python("print(1)") == "1\n"
    assert "2 tool calls" in chatty.run_python("print(1)")
    assert truncate("abcdef", 10) == "abcdef"


@needs_sandbox
def test_a_hung_cell_is_not_replayed():
    call_timeout_s = 2.0
    env = PythonSandboxEnvironment(call_timeout_s=call_timeout_s)
    env.reset()
    env.run_python("y = 1")
    env.run_python("while True: pass")
    started = time.monotonic()
    assert env.run_python("print(y + 1)") == "2\n"
    assert time.monotonic() - started < call_timeout_s  # replaying the hung cell would spend its whole limit


@needs_sandbox
def test_get_reward_scores_the_program_or_the_last_output():
    coder = PythonSandboxEnvironment(reward={"name": "code_tests"})
    coder.reset(tests={"asserts": ["assert add(2, 3) == 5"]}, prompt="ignored")
    coder.run_python("def add(a, b):\n    return a + b")
    assert coder.get_reward() == 1.0
    coder.reset(tests={"asserts": ["assert add(2, 3) == 5"]})
    coder.run_python("def add(a, b):\n    return a - b")
    assert coder.get_reward() == 0.0
    solver = PythonSandboxEnvironment(reward={"name": "math_equivalence"}, score_on="output")
    solver.reset(solution="42")
    solver.run_python("print(6 * 7)")
    assert solver.get_reward() == 1.0
    solver.reset()  # no gold: unscorable, which TRL ignores
    solver.run_python("print(6 * 7)")
    assert solver.get_reward() is None
    assert PythonSandboxEnvironment().get_reward() is None  # no reward configured


@needs_sandbox
def test_shell_environment_runs_commands_without_network_or_host_files(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET-9")
    env = ShellSandboxEnvironment()
    env.reset()
    assert env.run_shell("echo hi") == "hi\n"
    out = env.run_shell(f"cat {secret}; python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 2)'")
    assert "HOST-SECRET-9" not in out and "exit code" in out
    assert "[error" in env.run_shell(123)  # arguments as a broken parser might pass them


@needs_sandbox
@pytest.mark.parametrize("case", SANDBOX_ATTACKS, ids=[c.id for c in SANDBOX_ATTACKS])
def test_hostile_tool_calls_are_contained(case, host):
    """The sandbox attack battery, each program sent as a model's tool call, with the same host checks."""
    values, listener = host
    before = listener.connections
    env = PythonSandboxEnvironment(call_timeout_s=case.wall_time_s, rollout_budget_s=60)
    env.reset()
    started = time.monotonic()
    out = env.run_python(render(case.code, values))
    assert time.monotonic() - started < case.wall_time_s + 10
    for forbidden in (*case.must_not_print, "{SECRET_VALUE}", "{SECRET_ENV_VALUE}"):
        assert render(forbidden, values) not in out
    for check in case.host_checks:
        HOST_CHECKS[check](values, listener, before)
    assert env.run_python("print('still works')").endswith("still works\n")


# -- a real GRPOTrainer run with tool calling -------------------------------------------------------
TOOL_CALL = '<tool_call>\n{"name": "run_python", "arguments": {"code": "print(6 * 7)"}}\n</tool_call>'


def teach_one_tool_call(model_dir, out_dir, prompt):
    """The tiny random model, trained on one sequence until it emits ``TOOL_CALL`` after ``prompt``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import qwen3_chat_template

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    tokenizer.chat_template = qwen3_chat_template
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    env = PythonSandboxEnvironment()
    text = tokenizer.apply_chat_template(prompt, tools=[env.run_python], add_generation_prompt=True, tokenize=False)
    prefix = tokenizer(text, add_special_tokens=False)["input_ids"]
    target = tokenizer(TOOL_CALL + "<|im_end|>", add_special_tokens=False)["input_ids"]
    ids = torch.tensor([prefix + target])
    labels = torch.tensor([[-100] * len(prefix) + target])
    torch.manual_seed(0)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(300):
        loss = model(input_ids=ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if loss.item() < 0.01:
            break
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return loss.item()


@needs_sandbox
@pytest.mark.slow
def test_grpo_trainer_runs_tool_calls_in_the_sandbox_and_logs_the_environment_reward(tiny_model_dir, tmp_path):
    pytest.importorskip("trl")
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOTrainer

    from tests.support.trl_helpers import tiny_grpo_config

    prompt = [{"role": "user", "content": "What is 6 times 7? Use the tool."}]
    taught = tmp_path / "taught"
    assert teach_one_tool_call(tiny_model_dir, taught, prompt) < 0.05

    calls: list[str] = []

    class CountingPython(PythonSandboxEnvironment):
        """Records every call so the test can see what the trainer executed."""

        def run_python(self, code: str) -> str:
            """Run Python code in a sandbox and return what it printed.

            Args:
                code: The Python program to run.
            """
            out = super().run_python(code)
            calls.append(out)
            return out

    def factory():
        return CountingPython(reward={"name": "math_equivalence"}, score_on="output")

    # per-step validity of the model's calls against the tool TRL declares from run_python's docstring
    run_python_tool = {"type": "function", "function": {"name": "run_python", "parameters": {
        "type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}}}  # fmt: skip
    seen: list[list[float | None]] = []
    made_calls: list[int] = []  # per completion: its assistant messages that carry tool calls

    class RecordingSteps(StepRewardFunc):
        """Records the per-turn values of every completion the trainer scored."""

        def __call__(self, completions, **kwargs):
            trl_log_extra = kwargs.pop("log_extra")
            made_calls.extend(sum(1 for m in c if m.get("tool_calls")) for c in completions)

            def log_extra(name, column):
                if name == f"{self.__name__}_per_turn":
                    seen.extend(json.loads(v) for v in column)
                trl_log_extra(name, column)

            return super().__call__(completions, **kwargs, log_extra=log_extra)

    validity = RecordingSteps(get_reward("tool_call_validity", {"tools_column": "declared_tools"}))

    os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
    args = tiny_grpo_config(tmp_path / "out", max_completion_length=64, max_tool_calling_iterations=1, temperature=0.7)
    trainer = GRPOTrainer(
        model=str(taught),
        args=args,
        train_dataset=Dataset.from_list(
            [{"prompt": prompt, "solution": "42", "declared_tools": json.dumps([run_python_tool])}] * 8
        ),
        processing_class=AutoTokenizer.from_pretrained(taught),
        environment_factory=factory,
        reward_funcs=[validity],
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "rewards/CountingPython/mean" in h]
    print(
        f"tool calls: {len(calls)}, returned 42: {calls.count('42' + chr(10))}, env reward means: "
        f"{[h['rewards/CountingPython/mean'] for h in logged]}"
    )
    assert len(logged) == 2 and all(math.isfinite(h["loss"]) for h in logged)
    assert calls and calls.count("42\n") >= len(calls) // 2  # parsed, run in the sandbox, output returned
    assert any(h["rewards/CountingPython/mean"] > 0 for h in logged)  # the environment scored the rollouts
    assert any(h.get("tools/call_frequency", 0) > 0 for h in logged)
    # per turn: a turn whose call is valid against run_python's schema earns 1.0; TRL logged the per-turn lists
    assert len(seen) == len(made_calls) and sum(made_calls) >= len(calls) > 0
    assert all(v[:n] == [1.0] * n for v, n in zip(seen, made_calls, strict=True)), (seen, made_calls)
    assert "tool_call_validity_steps_per_turn" in trainer._logs["extra"]
    assert any(h.get("rewards/tool_call_validity_steps/mean", 0) > 0 for h in logged)
