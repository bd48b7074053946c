"""verl 0.9.1's own reward loop scoring with rewardsmith, configured exactly as the README says.

verl pins transformers 5.10.x, so it lives in its own virtual environment (``.ci/run``, step "verl 0.9.1
virtualenv"). In the main test run this module has one test, which runs this same file with that environment's
python; inside it (``import verl`` works) the tests below run verl's ``RewardLoopWorker`` with its reward managers
(``naive``, ``dapo``, ``gdpo``, ``rate_limited``) on a verl-shaped ``DataProto``, with verl's own Hydra config
(``ppo_trainer.yaml``) composed and rewardsmith's ``compute_score`` set under ``reward.custom_reward_function`` by
file path and by ``pkg://``, with ``reward_kwargs`` inline (verl hands them over as OmegaConf containers), plus
``compute_score_remote`` against a real ``rewardsmith serve`` on 127.0.0.1.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

VERL_PYTHON = Path(os.environ.get("REWARDSMITH_VERL_VENV", "/opt/rewardsmith-verl")) / "bin" / "python"
ROOT = Path(__file__).resolve().parents[2]

try:
    import verl
except ImportError:
    verl = None

pytestmark = pytest.mark.slow


if verl is None:

    def test_verl_0_9_1_reward_loop_in_its_virtualenv():
        if not VERL_PYTHON.exists():
            pytest.skip(
                f"verl 0.9.1 virtualenv absent ({VERL_PYTHON}): built by the 'verl 0.9.1 virtualenv' step of .ci/run"
            )
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        command = [str(VERL_PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--noconftest", __file__]
        proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
        output = proc.stdout[-6000:] + proc.stderr[-3000:]
        assert proc.returncode == 0, f"verl virtualenv tests failed (rc {proc.returncode}):\n{output}"
        assert " passed" in proc.stdout and "skipped" not in proc.stdout.splitlines()[-1], output


else:
    import numpy as np
    import torch
    from hydra import compose, initialize_config_dir
    from omegaconf import DictConfig, ListConfig
    from transformers import AutoTokenizer
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
    from verl.protocol import DataProto
    from verl.trainer.ppo.metric_utils import process_validation_metrics

    assert verl.__version__ == "0.9.1", f"these tests pin verl 0.9.1, found {verl.__version__}"

    PROMPT_LEN, RESPONSE_LEN = 16, 48

    # (data_source, response, ground_truth, expected score, expected unscorable, a word of the reason)
    TABLE = [
        ("openai/gsm8k", "Natalia sold 48 + 24 clips. #### 72", "72", 1.0, False, "identical"),
        ("openai/gsm8k", "So the answer is \\boxed{71}.", "72", 0.0, False, "different"),
        ("lighteval/MATH", "<think>half</think> \\boxed{\\dfrac12}", "\\frac{1}{2}", 1.0, False, "gold"),
        ("aime24", "\\boxed{8}", "2^{3}", 1.0, False, "gold"),
        ("lighteval/MATH", "\\boxed{(x-1)(x+1)}", "x^2-1", 1.0, False, "sympy: equal"),  # symbolic
        ("openai/gsm8k", "The answer is 72", None, 0.0, True, "gold"),  # no gold: unscorable, not wrong
        ("my_private_set", "\\boxed{72}", "72", 0.0, True, "no rewardsmith route"),
    ]
    # Inline reward_kwargs with a nested dict and list: verl passes them as DictConfig / ListConfig.
    MAPPING = (
        "{mapping:{include_reason:true,routes:["
        "{match:['*gsm8k*','*math*','aime*'],reward:math_equivalence,config:{workers:2}}]}}"
    )

    @pytest.fixture(scope="module")
    def tokenizer_dir(tmp_path_factory):
        from rewardsmith.adapters.demo.tiny_model import build_tiny_model

        return build_tiny_model(tmp_path_factory.mktemp("verl-tiny"))

    def verl_config(tokenizer_dir: Path, path: str, name: str, reward_kwargs: str, manager: str = "naive") -> Any:
        """verl's own ppo_trainer.yaml, composed by Hydra with the README's reward settings as overrides."""
        config_dir = Path(verl.__file__).parent / "trainer" / "config"
        with initialize_config_dir(config_dir=str(config_dir), version_base=None):
            return compose(
                config_name="ppo_trainer",
                overrides=[
                    f"actor_rollout_ref.model.path={tokenizer_dir}",
                    f"reward.custom_reward_function.path={path}",
                    f"reward.custom_reward_function.name={name}",
                    f"+reward.custom_reward_function.reward_kwargs={reward_kwargs}",
                    f"reward.reward_manager.name={manager}",
                ],
            )

    def verl_batch(tokenizer_dir: Path, table: list[tuple], response_len: int = RESPONSE_LEN) -> DataProto:
        """What verl's rollout hands the reward loop: left-padded prompts, right-padded responses, non-tensors."""
        tok = AutoTokenizer.from_pretrained(tokenizer_dir)
        prompts, responses, masks = [], [], []
        for _, response, *_ in table:
            prompt = tok("Solve the problem.")["input_ids"][:PROMPT_LEN]
            prompt_pad = PROMPT_LEN - len(prompt)
            ids = tok(response)["input_ids"][:response_len]
            assert tok.decode(ids) == response, "the tiny tokenizer must round-trip the table's responses"
            pad = response_len - len(ids)
            prompts.append([tok.pad_token_id] * prompt_pad + prompt)
            responses.append(ids + [tok.pad_token_id] * pad)
            masks.append([0] * prompt_pad + [1] * len(prompt) + [1] * len(ids) + [0] * pad)
        tensors = {
            "prompts": torch.tensor(prompts),
            "responses": torch.tensor(responses),
            "attention_mask": torch.tensor(masks),
        }
        tensors["input_ids"] = torch.cat([tensors["prompts"], tensors["responses"]], dim=1)
        non_tensors = {
            "data_source": np.array([row[0] for row in table], dtype=object),
            "reward_model": np.array([{"ground_truth": row[2], "style": "rule"} for row in table], dtype=object),
            "extra_info": np.array([{"index": i, "split": "train"} for i in range(len(table))], dtype=object),
            "raw_prompt": np.array([[{"role": "user", "content": "Solve the problem."}]] * len(table), dtype=object),
            "uid": np.array([f"uid-{i}" for i in range(len(table))], dtype=object),
        }
        return DataProto.from_dict(tensors=tensors, non_tensors=non_tensors)

    def run_reward_loop(config: Any, batch: DataProto) -> list[dict[str, Any]]:
        worker = RewardLoopWorker(config)
        return worker.loop.run_until_complete(worker.compute_score_batch(batch))

    def assert_verdicts(outputs: list[dict[str, Any]], table: list[tuple], with_reason: bool = True) -> None:
        for output, (source, response, _, score, unscorable, word) in zip(outputs, table, strict=True):
            info = output["reward_extra_info"]
            assert output["reward_score"] == score, (source, response, info)
            assert info["score"] == score and info["unscorable"] is unscorable, (source, response, info)
            if with_reason:
                assert word in info["reason"], (source, response, info["reason"])
        assert len({tuple(sorted(o["reward_extra_info"])) for o in outputs}) == 1, "every sample has the same keys"

    def validation_metrics(outputs: list[dict[str, Any]], table: list[tuple]) -> dict[str, dict[str, Any]]:
        """verl's own aggregation of reward_extra_info (what its trainer logs as val-aux/<source>/<key>/...)."""
        infos: dict[str, list[Any]] = {}
        for output in outputs:
            for key, value in output["reward_extra_info"].items():
                infos.setdefault(key, []).append(value)
        return process_validation_metrics([row[0] for row in table], [f"u{i}" for i in range(len(table))], infos)

    @pytest.fixture(scope="module")
    def adapter_file() -> str:
        import rewardsmith.adapters.trainers.verl as adapter

        # the README's `python -c "import rewardsmith.adapters.trainers.verl as m; print(m.__file__)"`
        return adapter.__file__

    @pytest.mark.parametrize("manager", ["naive", "dapo", "gdpo", "rate_limited"])
    @pytest.mark.parametrize("how", ["file", "pkg"])
    @pytest.mark.parametrize("name", ["compute_score", "compute_score_batched"])
    def test_reward_loop_scores_the_verdict_table(tokenizer_dir, adapter_file, manager, how, name):
        path = adapter_file if how == "file" else "pkg://rewardsmith.adapters.trainers.verl"
        config = verl_config(tokenizer_dir, path, name, MAPPING, manager)
        kwargs = config.reward.custom_reward_function.reward_kwargs
        assert isinstance(kwargs.mapping, DictConfig) and isinstance(kwargs.mapping.routes, ListConfig)
        outputs = run_reward_loop(config, verl_batch(tokenizer_dir, TABLE))
        assert_verdicts(outputs, TABLE)
        metrics = validation_metrics(outputs, TABLE)
        assert metrics["my_private_set"]["unscorable"]["mean@1"] == 1.0
        assert metrics["aime24"]["unscorable"]["mean@1"] == 0.0
        assert "reason" not in metrics["aime24"], "text keys are not averaged"

    def test_default_routes_without_reward_kwargs(tokenizer_dir):
        config = verl_config(tokenizer_dir, "pkg://rewardsmith.adapters.trainers.verl", "compute_score", "{}")
        outputs = run_reward_loop(config, verl_batch(tokenizer_dir, TABLE))
        assert_verdicts(outputs, TABLE, with_reason=False)
        assert set(outputs[0]["reward_extra_info"]) == {"score", "unscorable"}

    def test_batched_path_scores_one_batch_and_reports_its_unscorable_share(tokenizer_dir, caplog):
        config = verl_config(
            tokenizer_dir, "pkg://rewardsmith.adapters.trainers.verl", "compute_score_batched", MAPPING
        )
        with caplog.at_level(logging.WARNING, logger="rewardsmith.adapters.trainers.verl"):
            outputs = run_reward_loop(config, verl_batch(tokenizer_dir, TABLE))
        assert_verdicts(outputs, TABLE)
        lines = [r.getMessage() for r in caplog.records if "unscorable" in r.getMessage()]
        assert lines == [lines[0]] and "2 of 7 samples in this batch unscorable" in lines[0], lines
        assert "no rewardsmith route" in lines[0]

    def test_first_batch_from_verl_thread_pool_in_a_fresh_process(tokenizer_dir, tmp_path):
        """The sync compute_score runs in verl's executor threads: a fresh worker's first batch is all correct."""
        table = TABLE[:5] * 8  # 40 samples, scored concurrently by the worker's thread pool
        script = tmp_path / "first_batch.py"
        script.write_text(
            "import json, sys\n"
            "from tests.trainers.test_verl_reward_loop import TABLE, run_reward_loop, verl_batch, verl_config\n"
            "tok = sys.argv[1]\n"
            "table = TABLE[:5] * 8\n"
            "config = verl_config(tok, 'pkg://rewardsmith.adapters.trainers.verl', 'compute_score', '{}')\n"
            "outputs = run_reward_loop(config, verl_batch(tok, table))\n"
            "print(json.dumps([[o['reward_score'], bool(o['reward_extra_info']['unscorable'])] for o in outputs]))\n"
        )
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(
            [sys.executable, str(script), str(tokenizer_dir)], capture_output=True, text=True, timeout=600, env=env
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        got = json.loads(proc.stdout.strip().splitlines()[-1])
        assert got == [[row[3], row[4]] for row in table]

    def wait_until_served_pool_is_warm(url: str, timeout_s: float = 180.0) -> None:
        """The served math reward starts its worker pool on its first request, and a cold pool answers "no
        symbolic worker ready" (unscorable) until it is up: ask until a symbolic comparison is scored."""
        import time

        from rewardsmith import get_reward

        remote = get_reward("remote", {"urls": [url], "reward": "math_equivalence"})
        deadline = time.monotonic() + timeout_s
        while True:
            (result,) = remote.details(["\\boxed{(x-1)(x+1)}"], solution=["x^2-1"])
            if result.score is not None or time.monotonic() > deadline:
                assert result.score == 1.0, result.reason
                return
            time.sleep(1.0)

    def test_compute_score_remote_against_rewardsmith_serve(tokenizer_dir):
        from rewardsmith.adapters.runtime.serve.process import ServerProcess

        spec = [{"name": "math_equivalence", "config": {"workers": 2}}]
        with ServerProcess(spec, "--workers", "2") as server:
            wait_until_served_pool_is_warm(server.url)
            kwargs = (
                f"{{remote:{{urls:['{server.url}'],chunk_size:4}},mapping:{{include_reason:true,routes:["
                "{match:['*gsm8k*','*math*','aime*'],reward:math_equivalence}]}}"
            )
            module = "pkg://rewardsmith.adapters.trainers.verl"
            config = verl_config(tokenizer_dir, module, "compute_score_remote", kwargs)
            outputs = run_reward_loop(config, verl_batch(tokenizer_dir, TABLE))
        assert_verdicts(outputs, TABLE)

    def hermes_rollout(turns: list[tuple[str, str]], answer: str) -> str:
        """The response ids of verl's tool agent loop, as text: each assistant turn's Hermes tool call, then the
        tool's answer in a user turn and the next assistant header (which decoding without special tokens leaves
        as role words), then the final answer."""
        text = ""
        for code, result in turns:
            call = json.dumps({"name": "run_python", "arguments": {"code": code}})
            text += f"<tool_call>\n{call}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{result}\n"
            text += "</tool_response><|im_end|>\n<|im_start|>assistant\n"
        return f"{text}{answer}<|im_end|>"

    PRIMES = "primes = [p for p in range(2, 20) if all(p % d for d in range(2, p))]"
    SLEEPS = "import time\nwhile True:\n    time.sleep(0.05)"
    # (data_source, response, ground_truth, the score verl trains, per-turn values in reward_extra_info)
    MULTI_TURN = [
        ("python_agent", hermes_rollout([(PRIMES, ""), ("print(sum(primes) / len(primess))", "NameError"),
                                         ("print(sum(primes) / len(primes))", "9.625")],
                                        "The mean is 9.625."), None, 0.75, [1.0, 0.0, 1.0, 1.0]),
        ("python_agent", hermes_rollout([("x = 2", ""), (SLEEPS, "[stopped: time limit]"), ("print(x)", "2")],
                                        "Done."), None, 0.75, [1.0, 0.0, 1.0, 1.0]),
        ("python_agent", hermes_rollout([("y = 1", "")], "Done."), None, 1.0, [1.0, 1.0]),
        ("openai/gsm8k", "The answer is \\boxed{72}.", "72", 1.0, []),  # a single-turn route: no per-turn values
    ]  # fmt: skip
    STEPS_MAPPING = (
        "{mapping:{include_reason:true,routes:["
        "{match:['*agent*'],reward:code_turns,config:{timeout_s:2.0},steps:{aggregate:mean}},"
        "{match:['*gsm8k*'],reward:math_equivalence}]}}"
    )

    @pytest.mark.parametrize("manager", ["naive", "gdpo"])
    def test_multi_turn_rollouts_carry_their_per_turn_values_in_reward_extra_info(tokenizer_dir, manager):
        from rewardsmith.sandboxes.local.backend import LocalSandbox

        if LocalSandbox().tier != "bwrap":
            pytest.skip("code_turns needs the local sandbox's bwrap tier")
        module = "pkg://rewardsmith.adapters.trainers.verl"
        config = verl_config(tokenizer_dir, module, "compute_score", STEPS_MAPPING, manager)
        outputs = run_reward_loop(config, verl_batch(tokenizer_dir, MULTI_TURN, response_len=512))
        for output, (source, _, _, score, steps) in zip(outputs, MULTI_TURN, strict=True):
            info = output["reward_extra_info"]
            assert output["reward_score"] == pytest.approx(score), (source, info)
            assert json.loads(info["step_rewards"]) == steps, (source, info)
            assert info["unscorable"] is False
        # verl stacks each key over the batch with np.array (reward loop and agent loop alike): ragged per-turn
        # lists would not stack, their JSON text does
        for key in outputs[0]["reward_extra_info"]:
            stacked = np.array([o["reward_extra_info"][key] for o in outputs])
            assert stacked.shape == (len(MULTI_TURN),), key
        assert "turn_scores" not in outputs[0]["reward_extra_info"], "the agent loop overwrites its own key"
