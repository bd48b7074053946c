"""Critique -> revision logic with a scripted chat client (deterministic answers), and the judge prompt a
constitution produces (few-shot examples, template overrides). The real embedded model runs the same
pipeline in ``test_rlaif_embedded.py``."""

from __future__ import annotations

import asyncio
import json

import pytest

from rewardsmith.constitutions.judging import comparison_template
from rewardsmith.constitutions.loader import load_constitution, parse_text
from rewardsmith.constitutions.prompts import PromptItem
from rewardsmith.constitutions.revise import (
    ReviseConfig,
    RevisePipeline,
    clean_revision,
    critique_messages,
    export_revisions,
)
from rewardsmith.judges.base import ChatClient, ChatParams, ChatResult, JudgeError
from rewardsmith.judges.clients.function import FunctionClient
from rewardsmith.judges.templates import render_messages
from rewardsmith.store import KeyedStore

CONSTITUTION = parse_text(
    """
name: two-rules
description: Two principles for revision tests.
principles:
  - {id: rule-one,comparison: "Which obeys rule one?", critique: "CRITIQUE-ONE please.", revision: "REVISE-ONE please."}
  - {id: rule-two,comparison: "Which obeys rule two?", critique: "CRITIQUE-TWO please.", revision: "REVISE-TWO please."}
examples:
  revision:
    - {prompt: "Example prompt", response: "Example bad", critique: "Example critique", revision: "Example good"}
""",
    "inline",
)


def scripted_chat(revise=lambda response: f"{response} (better)", fail_on: str | None = None) -> FunctionClient:
    """Critique requests get "critique N" (N: the requests so far); revision requests get ``revise(current
    response)``; a request holding ``fail_on`` fails as an endpoint outage."""

    def answer(messages, params: ChatParams) -> ChatResult:
        last = messages[-1]["content"]
        if fail_on and fail_on in json.dumps(messages):
            raise JudgeError("endpoint down")
        if "REVISE-" in last:
            current = messages[-4]["content"]  # the assistant response the critique was about
            return ChatResult(text=revise(current))
        return ChatResult(text=f"critique {len(client.requests)}")

    client = FunctionClient(answer, model="scripted-chat")
    return client


def items(*responses):
    return [PromptItem(index=0, prompt_id="p0", prompt="Tell me a fact.", candidates=tuple(responses))]


def run(tmp_path, client, its, **config):
    pipeline = RevisePipeline(client, CONSTITUTION, ReviseConfig(**config))
    with KeyedStore(tmp_path / "state" / "revisions.jsonl") as store:
        summary = pipeline.run(its, store)
        written = export_revisions(store, tmp_path, ("jsonl",), conversational=config.get("conversational", False))
    sft = [json.loads(line) for line in written["sft.jsonl"].read_text().splitlines()]
    dpo = [json.loads(line) for line in written["dpo.jsonl"].read_text().splitlines()]
    return summary, sft, dpo


def test_scripted_chat_is_a_chat_client():
    assert isinstance(scripted_chat(), ChatClient)


def test_rounds_chain_revisions_and_sample_one_principle_each(tmp_path):
    client = scripted_chat()
    summary, sft, dpo = run(tmp_path, client, items("The sun is cold."), rounds=3)
    assert summary.revised == 1 and len(client.requests) == 6
    assert sft[0]["completion"] == "The sun is cold. (better) (better) (better)"
    assert dpo[0]["rejected"] == "The sun is cold."
    assert dpo[0]["chosen"] == sft[0]["completion"]
    assert len(dpo[0]["principles"]) == 3 and set(dpo[0]["principles"]) <= {"rule-one", "rule-two"}
    assert dpo[0]["critiques"] == ["critique 1", "critique 3", "critique 5"]
    # each critique request matches the principle recorded for its round
    for round_index, principle in enumerate(dpo[0]["principles"]):
        asked = client.requests[2 * round_index].messages[-1]["content"]
        assert ("CRITIQUE-ONE" if principle == "rule-one" else "CRITIQUE-TWO") in asked


def test_critique_conversation_layout_with_few_shot_example():
    principle = CONSTITUTION.principles[1]
    prompt = [{"role": "user", "content": "Tell me a fact."}]
    messages = critique_messages(CONSTITUTION, principle, prompt, "The sun is cold.", few_shot=True)
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"] == "Example prompt" and messages[5]["content"] == "Example good"
    assert messages[-3:-1] == [*prompt, {"role": "assistant", "content": "The sun is cold."}][-2:]
    assert messages[-1]["content"].startswith("CRITIQUE-TWO please.")
    bare = critique_messages(CONSTITUTION, principle, prompt, "The sun is cold.", few_shot=False)
    assert [m["role"] for m in bare] == ["user", "assistant", "user"]


def test_template_overrides_reach_the_model(tmp_path):
    constitution = CONSTITUTION.model_copy(
        update={"templates": CONSTITUTION.templates.model_copy(update={"critique": "<<{{ critique_request }}>>"})}
    )
    messages = critique_messages(
        constitution, constitution.principles[0], [{"role": "user", "content": "q"}], "r", few_shot=False
    )
    assert messages[-1]["content"] == "<<CRITIQUE-ONE please.>>"


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Revised response: The sun is hot.", "The sun is hot."),
        ("**Revision:** The sun is hot.", "The sun is hot."),
        ("Here is the rewritten response: The sun is hot.", "The sun is hot."),
        ('"The sun is hot."', "The sun is hot."),
        ("  The sun is hot.\n", "The sun is hot."),
        ("Ratio: 3 to 1.", "Ratio: 3 to 1."),  # a colon inside the answer is kept
        ("", ""),
    ],
)
def test_clean_revision_table(raw, clean):
    assert clean_revision(raw) == clean


def test_unchanged_and_empty_revisions_never_make_dpo_pairs(tmp_path):
    _, sft, dpo = run(tmp_path / "same", scripted_chat(revise=lambda response: response), items("Same text."))
    assert not sft and not dpo
    summary, sft, dpo = run(tmp_path / "empty", scripted_chat(revise=lambda response: "Revision:"), items("Text."))
    assert summary.dropped == {"empty revision": 1} and not dpo


def test_failures_are_retried_by_the_next_run_and_done_work_is_not_repeated(tmp_path):
    its = items("Good one.", "Broken one.")
    summary, _, dpo = run(tmp_path, scripted_chat(fail_on="Broken one."), its)
    assert summary.failed == 1 and summary.revised == 1 and len(dpo) == 1
    healthy = scripted_chat()
    summary, _, dpo = run(tmp_path, healthy, its)
    assert summary.failed == 0 and summary.resumed == 1 and len(dpo) == 2
    assert len(healthy.requests) == 2  # only the failed response was redone
    assert [row["rejected"] for row in dpo] == ["Good one.", "Broken one."]


def test_conversational_export(tmp_path):
    _, sft, dpo = run(tmp_path, scripted_chat(), items("Fact."), conversational=True)
    assert sft[0]["prompt"] == [{"role": "user", "content": "Tell me a fact."}]
    assert sft[0]["completion"] == [{"role": "assistant", "content": "Fact. (better)"}]
    assert dpo[0]["rejected"] == [{"role": "assistant", "content": "Fact."}]


@pytest.mark.parametrize("chain_of_thought", [False, True])
def test_comparison_examples_become_solved_turns_of_the_judge_prompt(tmp_path, chain_of_thought):
    constitution = load_constitution("helpful-harmless")
    path = comparison_template(constitution, None, chain_of_thought=chain_of_thought, state_dir=tmp_path)
    assert path is not None and path.endswith(".jinja")
    messages = render_messages(path, prompt="P {{ not jinja }}", first="FIRST", second="SECOND", question="Q?")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    example = constitution.examples.comparison[0]
    assert example.prompt in messages[1]["content"] and example.response_b in messages[1]["content"]
    expected = f"{example.explanation}\nVerdict: A" if chain_of_thought else "A"
    assert messages[2]["content"] == expected
    assert "P {{ not jinja }}" in messages[3]["content"] and "Q?" in messages[3]["content"]
    assert messages[3]["content"].index("FIRST") < messages[3]["content"].index("SECOND")


def test_constitution_without_examples_keeps_the_judge_default(tmp_path):
    constitution = load_constitution("math-reasoning")
    assert comparison_template(constitution, None, chain_of_thought=False, state_dir=tmp_path) is None
    assert comparison_template(constitution, "rubric", chain_of_thought=False, state_dir=tmp_path) == "rubric"


def test_async_pipeline_runs_concurrently_without_interleaving_records(tmp_path):
    its = [PromptItem(index=i, prompt_id=f"p{i}", prompt=f"q{i}", candidates=(f"a{i}", f"b{i}")) for i in range(10)]
    pipeline = RevisePipeline(scripted_chat(), CONSTITUTION, ReviseConfig(concurrency=8))
    with KeyedStore(tmp_path / "r.jsonl") as store:
        summary = asyncio.run(pipeline.arun(its, store))
    assert summary.revised == 20
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len({json.loads(line)["key"] for line in lines}) == 20
