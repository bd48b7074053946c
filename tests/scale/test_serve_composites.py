"""Composite specs (gate, weighted sum, route) served to OpenRLHF and described by ``GET /v1/rewards``.

OpenRLHF's client sends one ``labels`` value per sample and nothing says which column it belongs to; the server
puts it in the reward's gold column. A composite holds the rewards that read gold, so the column must be found
through it: the docs' own spec (``docs/integrations/index.md``, the ``rewards.yaml`` the OpenRLHF page serves)
gates ``math_equivalence`` behind ``think_format``, and its labels must reach ``solution``, else every sample is
unscorable and OpenRLHF trains on 0.0. Here OpenRLHF 0.11's own executor scores that exact spec through a real
``rewardsmith serve`` on 127.0.0.1; a second server holds a weighted sum, a registered gate and a glob route.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.extras import require_extras

require_extras("serve")

import httpx

from rewardsmith.adapters.runtime.serve.process import ServerProcess
from rewardsmith.adapters.runtime.serve.specs import build_served, check_openrlhf_labels
from rewardsmith.reward import ConfigError

ROOT = Path(__file__).resolve().parents[2]
DOCS_PAGE = ROOT / "docs" / "integrations" / "index.md"


def docs_spec_text() -> str:
    """The ``rewards.yaml`` block of the integrations page, exactly as the docs show it."""
    found = re.search(r'```yaml file="rewards\.yaml"\n(.*?)```', DOCS_PAGE.read_text(), re.S)
    assert found, f"{DOCS_PAGE} has no rewards.yaml block"
    return found.group(1)


@pytest.fixture(scope="module")
def docs_spec_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("docs-spec") / "rewards.yaml"
    path.write_text(docs_spec_text())
    return path


@pytest.fixture(scope="module")
def docs_server(docs_spec_file: Path):
    with ServerProcess(docs_spec_file) as running:
        yield running.url


# -- OpenRLHF's own executor against the docs' spec -----------------------------------------------------------


def openrlhf_agent() -> Any:
    return pytest.importorskip(
        "openrlhf.utils.agent",
        reason="needs OpenRLHF's client: pip install --no-deps 'openrlhf==0.11.*' pylatexenc (see .ci/run)",
    )


@dataclass
class Generated:
    token_ids: list[int]
    text: str
    finish_reason: str = "stop"
    logprobs: Any = None


@dataclass
class Output:
    outputs: list[Generated]


@dataclass
class Sampling:
    max_tokens: int | None = 64
    logprobs: int | None = None


class ScriptedEngine:
    """Stands in for vLLM's async engine (the one part not run for real): a fixed response per prompt."""

    def __init__(self, tokenizer: Any, responses: dict[tuple[int, ...], str]) -> None:
        self.tokenizer = tokenizer
        self.responses = responses

    async def generate(self, prompt_token_ids: list[int], sampling_params: Any, multi_modal_data: Any = None):
        text = self.responses[tuple(prompt_token_ids)]
        return Output([Generated(self.tokenizer(text=text, add_special_tokens=False)["input_ids"], text)])


# (response, label, reward OpenRLHF must get, why) — the gated reward behind /get_reward
DOCS_SPEC_VERDICTS = [
    ("<think>3 + 4 = 7</think> The answer is \\boxed{7}.", "7", 1.0, "right and well formed"),
    ("<think>3 + 4 = 8</think> The answer is \\boxed{8}.", "7", 0.0, "wrong and well formed"),
    ("The answer is \\boxed{7}.", "7", 0.0, "right, no reasoning block: the gate closes"),
    ("<think>9 / 2</think> \\boxed{\\frac{9}{2}}", "4.5", 1.0, "right, in another form"),
    ("<think>9 / 2</think> \\boxed{4}", "4.5", 0.0, "wrong, close"),
    ("<think>x = 2</think> so $x = 2$, i.e. \\boxed{2}", "$2$", 1.0, "right, the gold in LaTeX"),
]


def test_openrlhf_client_scores_the_docs_spec_through_its_gate(docs_server: str, tiny_model_dir: Path) -> None:
    from transformers import AutoTokenizer

    agent = openrlhf_agent()
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    prompts = [f"<|im_start|>user\nCase {i}: what is it?<|im_end|>\n<|im_start|>assistant\n" for i in range(6)]
    responses = {
        tuple(tokenizer(text=p, add_special_tokens=False)["input_ids"]): f"{response}<|im_end|>"
        for p, (response, *_) in zip(prompts, DOCS_SPEC_VERDICTS, strict=True)
    }
    engine = ScriptedEngine(tokenizer, responses)
    executor = agent.SingleTurnAgentExecutor(docs_server + "/get_reward")

    async def run() -> list[dict[str, Any]]:
        return await asyncio.gather(
            *(
                executor.execute(p, label, Sampling(), 256, tokenizer, engine)
                for p, (_, label, *_) in zip(prompts, DOCS_SPEC_VERDICTS, strict=True)
            )
        )

    outputs = asyncio.run(run())
    got = [(out["reward"], out["extra_logs"]["unscorable"]) for out in outputs]
    expected = [([want], [0.0]) for _, _, want, _ in DOCS_SPEC_VERDICTS]
    assert got == expected, [(why, g) for (*_, why), g in zip(DOCS_SPEC_VERDICTS, got, strict=True) if g != expected]


def test_rewards_endpoint_describes_the_docs_spec(docs_server: str) -> None:
    answer = httpx.get(docs_server + "/v1/rewards", timeout=30)
    assert answer.status_code == 200, answer.text
    described = {r["name"]: r for r in answer.json()["rewards"]}
    assert list(described) == ["math_equivalence_if_think_format", "think_format", "by_task"]
    gated = described["math_equivalence_if_think_format"]
    assert gated["reward"] == "gate" and gated["label_column"] == "solution" and gated["label_problem"] is None
    assert gated["gold_columns"] == ["solution"] and gated["config"]["threshold"] == 1.0
    reward, gate = gated["terms"]
    assert (reward["role"], reward["kind"], reward["gold_columns"]) == ("reward", "math_equivalence", ["solution"])
    assert reward["config"]["gold_column"] == "solution"
    assert (gate["role"], gate["kind"], gate["gold_columns"]) == ("gate", "think_format", [])
    assert (gate["threshold"], gate["otherwise"]) == (1.0, 0.0)
    routed = described["by_task"]
    assert routed["reward"] == "route" and routed["config"]["column"] == "task"
    assert [(t["route"], t["kind"]) for t in routed["terms"]] == [(["arithmetic"], "think_format")]


# -- a weighted sum, a registered gate and a glob route -------------------------------------------------------

MATH = {"name": "math_equivalence", "config": {"symbolic": False}}
MATH_ANSWER = {"name": "math_equivalence", "config": {"symbolic": False, "gold_column": "answer"}}
COMPOSITES = [
    {
        "name": "weighted_sum",
        "config": {"name": "math_and_format", "rewards": [{**MATH, "weight": 0.8}, "think_format"]},
    },
    {
        "name": "gate",
        "config": {"name": "gated", "reward": MATH, "gate": "think_format", "threshold": 0.5, "otherwise": -1.0},
    },
    {
        "name": "route",
        "label": "routed",
        "config": {
            "column": "data_source",
            "mode": "glob",
            "routes": [{"match": ["*math*", "*MATH*"], "reward": MATH}],
            "default": MATH_ANSWER,
        },
    },
    {"name": "weighted_sum", "config": {"name": "two_golds", "rewards": [MATH, MATH_ANSWER]}},
]


@pytest.fixture(scope="module")
def composites_server():
    with ServerProcess(COMPOSITES) as running:
        yield running.url


def test_rewards_endpoint_describes_weighted_sum_gate_and_route(composites_server: str) -> None:
    answer = httpx.get(composites_server + "/v1/rewards", timeout=30)
    assert answer.status_code == 200, answer.text
    described = {r["name"]: r for r in answer.json()["rewards"]}
    summed = described["math_and_format"]
    assert summed["reward"] == "weighted_sum" and summed["config"]["missing"] == "skip"
    assert [(t["kind"], t["weight"], t["gold_columns"]) for t in summed["terms"]] == [
        ("math_equivalence", 0.8, ["solution"]),
        ("think_format", 1.0, []),
    ]
    assert summed["label_column"] == "solution"
    gated = described["gated"]
    assert [(t["role"], t["kind"]) for t in gated["terms"]] == [
        ("reward", "math_equivalence"),
        ("gate", "think_format"),
    ]
    assert (gated["terms"][1]["threshold"], gated["terms"][1]["otherwise"]) == (0.5, -1.0)
    routed = described["routed"]
    assert routed["config"]["mode"] == "glob" and routed["gold_columns"] == ["solution", "answer"]
    assert [(t["route"], t["gold_columns"]) for t in routed["terms"]] == [
        (["*math*", "*MATH*"], ["solution"]),
        ("default", ["answer"]),
    ]
    assert routed["label_columns"] == ["solution", "answer"]  # a sample meets one target: each reads its own
    assert "set label_column" in described["two_golds"]["label_problem"]


def openrlhf_post(url: str, responses: list[str], labels: list[Any]) -> httpx.Response:
    prompts = ["Q: "] * len(responses)
    body = {"query": [p + r for p, r in zip(prompts, responses, strict=True)], "prompts": prompts, "labels": labels}
    return httpx.post(url, json=body, timeout=60)


# (served reward, response, label, reward OpenRLHF gets, why)
COMPOSITE_VERDICTS = [
    ("math_and_format", "<think>t</think> \\boxed{7}", "7", 1.8, "0.8 x right + 1.0 x formatted"),
    ("math_and_format", "<think>t</think> \\boxed{8}", "7", 1.0, "wrong: the format term only"),
    ("gated", "<think>t</think> \\boxed{7}", "7", 1.0, "gate passes, right"),
    ("gated", "\\boxed{7}", "7", -1.0, "gate fails: its otherwise"),
    ("routed", "\\boxed{7}", "7", 1.0, "no data_source: the default reads the label from 'answer'"),
    ("routed", "\\boxed{6}", "7", 0.0, "the default, wrong"),
]


@pytest.mark.parametrize(("served", "response", "label", "want", "why"), COMPOSITE_VERDICTS)
def test_openrlhf_labels_reach_the_gold_column_through_each_composite(
    composites_server: str, served: str, response: str, label: str, want: float, why: str
) -> None:
    answer = openrlhf_post(f"{composites_server}/get_reward/{served}", [response], [label])
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["rewards"], body["extra_logs"]["unscorable"]) == ([want], [0.0]), (why, body["reasons"])


def test_a_reward_with_two_gold_columns_refuses_plain_labels_and_takes_mappings(composites_server: str) -> None:
    url = f"{composites_server}/get_reward/two_golds"
    refused = openrlhf_post(url, ["\\boxed{7}"], ["7"])
    assert refused.status_code == 422
    assert "set label_column" in refused.json()["error"] and "\n" not in refused.json()["error"]
    taken = openrlhf_post(url, ["\\boxed{7}"], [{"solution": "7", "answer": "7"}])
    assert taken.status_code == 200 and taken.json()["rewards"] == [2.0]


def test_a_server_whose_get_reward_has_no_one_label_column_refuses_to_start(tmp_path: Path) -> None:
    spec = [{"name": "weighted_sum", "config": {"name": "two_golds", "rewards": [MATH, MATH_ANSWER]}}]
    with pytest.raises(RuntimeError, match="did not become ready") as failed:
        ServerProcess(spec, startup_timeout_s=60).start()
    (line,) = [x for x in str(failed.value).splitlines() if "two_golds" in x]
    assert "solution" in line and "answer" in line and "set label_column" in line


GATED_ANSWER = {"name": "gate", "config": {"reward": MATH_ANSWER, "gate": "think_format"}}
ROUTED = ("solution", "answer")  # a route: every target's column, each target reads its own


@pytest.mark.parametrize(
    ("entry", "columns"),
    [
        ({"name": "weighted_sum", "config": {"rewards": [MATH, MATH_ANSWER]}, "label_column": "answer"}, ("answer",)),
        ({"name": "math_equivalence", "gate": {"name": "think_format"}}, ("solution",)),
        ({"name": "weighted_sum", "config": {"rewards": [GATED_ANSWER, "tag_count"]}}, ("answer",)),
        ({"name": "route", "config": {"routes": {"a": MATH, "b": MATH_ANSWER, "c": "think_format"}}}, ROUTED),
        ({"name": "weighted_sum", "config": {"rewards": ["think_format", "tag_count"]}}, ("label",)),
    ],
)
def test_label_columns_are_found_through_nested_composites(entry: dict[str, Any], columns: tuple[str, ...]) -> None:
    (served,) = build_served([entry]).values()
    assert served.label_columns == columns and served.label_problem is None
    check_openrlhf_labels({"x": served})


def test_an_ambiguous_composite_names_the_fix_in_one_line() -> None:
    served = build_served([{"name": "gate", "config": {"name": "g", "reward": MATH_ANSWER, "gate": MATH}}])
    with pytest.raises(ConfigError) as refused:
        check_openrlhf_labels(served)
    assert str(refused.value).count("\n") == 0 and "label_column" in str(refused.value)
