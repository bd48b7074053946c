"""The RLAIF pipelines' sync faces (``PairsPipeline.run``, ``RevisePipeline.run``, ``run_pairs`` generating candidates,
``run_revisions`` generating responses) cross through the one bridge: each gives the same result from plain code,
from a coroutine inside a running loop (a notebook, an async trainer: ``asyncio.run`` refuses there) and from a
plain thread, against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.constitutions.generate import GenerationConfig
from rewardsmith.constitutions.loader import load_constitution
from rewardsmith.constitutions.pairs import PairsConfig, PairsPipeline
from rewardsmith.constitutions.prompts import PromptItem
from rewardsmith.constitutions.revise import ReviseConfig, RevisePipeline
from rewardsmith.constitutions.runners import run_pairs, run_revisions
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.store import KeyedStore
from tests.support.call_sites import CALL_SITES
from tests.support.fault_server import FaultServer

CONSTITUTION = load_constitution("honest-concise")
PAIRED = [PromptItem(index=i, prompt_id=f"p{i}", prompt=f"question {i}", candidates=(f"x{i}", f"y{i}")) for i in (0, 1)]
BARE = [PromptItem(index=0, prompt_id="p0", prompt="Say something kind.", candidates=())]


def _client(server: FaultServer) -> Any:
    return make_client("openai", model="fault-model", base_url=server.base_url, api_key="local", max_retries=0)


def pairs_pipeline(server: FaultServer, out: Path) -> Any:
    # Every order answers "A" at P = 0.7: a pure position preference, averaged to a tie.
    pipeline = PairsPipeline(PairwiseJudge(_client(server)), CONSTITUTION, PairsConfig(concurrency=2))
    with KeyedStore(out / "pairs.jsonl") as store:
        summary = pipeline.run(PAIRED, store)
        reasons = sorted((r["prompt_id"], r["reason"]) for r in store.records())
    return summary.dropped, reasons


def revise_pipeline(server: FaultServer, out: Path) -> Any:
    server.push("answer:Too curt.", "answer:Revision: A kinder x0.")  # the critique, then the revision
    items = [PromptItem(index=0, prompt_id="p0", prompt="Say something kind.", candidates=("x0",))]
    with KeyedStore(out / "revisions.jsonl") as store:
        summary = RevisePipeline(_client(server), CONSTITUTION, ReviseConfig()).run(items, store)
        (record,) = store.records()
    return summary.revised, record["critiques"], record["revision"]


def pairs_with_generated_candidates(server: FaultServer, out: Path) -> Any:
    # the policy's check request and two samples; the judge's check and orders then answer "A"
    server.push("answer:OK", "answer:first", "answer:second")
    client = _client(server)
    outcome = run_pairs(
        BARE,
        out,
        judge=PairwiseJudge(client),
        constitution=CONSTITUTION,
        config=PairsConfig(),
        policy=client,
        generation=GenerationConfig(k=2, seed=0),
        progress=False,
    )
    (record,) = (json.loads(line) for line in (out / "state" / "pairs.jsonl").read_text().splitlines())
    return outcome.generation_failed, outcome.summary.dropped, sorted((record["response_a"], record["response_b"]))


def revisions_with_generated_responses(server: FaultServer, out: Path) -> Any:
    server.push("answer:You are great.", "answer:Too plain.", "answer:Revision: You are truly great.")
    outcome = run_revisions(BARE, out, client=_client(server), constitution=CONSTITUTION, config=ReviseConfig())
    (record,) = (json.loads(line) for line in (out / "state" / "revisions.jsonl").read_text().splitlines())
    return outcome.generation_failed, outcome.summary.revised, record["original"], record["revision"]


# (face, what it gives from wherever it is called)
FACES = [
    (pairs_pipeline, ({"tie": 2}, [("p0", "tie"), ("p1", "tie")])),
    (revise_pipeline, (1, ["Too curt."], "A kinder x0.")),
    (pairs_with_generated_candidates, (0, {"tie": 1}, ["first", "second"])),
    (revisions_with_generated_responses, (0, 1, "You are great.", "You are truly great.")),
]


@pytest.mark.parametrize("where", CALL_SITES, ids=lambda f: f.__name__)
@pytest.mark.parametrize(("face", "expected"), FACES, ids=lambda v: getattr(v, "__name__", None))
def test_sync_face_gives_the_same_result_wherever_it_is_called(where, face, expected, tmp_path):
    with FaultServer() as server:
        assert where(lambda: face(server, tmp_path)) == expected
