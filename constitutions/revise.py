"""SL-CAI: critique -> revision loops, one principle sampled per round.

Round ``r`` of a response continues the conversation the model already had::

    user: <prompt>            assistant: <current response>
    user: <critique request>  assistant: <critique>
    user: <revision request>  assistant: <revision>   -> the current response of round r + 1

The principle of round ``r`` is a pure function of ``(seed, response key, r)``, so a resumed run
asks the same questions. The outputs are an SFT dataset (prompt -> final revision) and DPO pairs
(chosen = final revision, rejected = original). A response whose revision comes back empty or
unchanged is dropped from the DPO pairs with its reason, so ``chosen == rejected`` never happens.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.bridge import run_sync
from rewardsmith.constitutions.export import export_dataset
from rewardsmith.constitutions.loader import constitution_hash
from rewardsmith.constitutions.pairs import sample_principles
from rewardsmith.constitutions.progress import RunProgress, describe_run
from rewardsmith.constitutions.prompts import PromptItem, content_key
from rewardsmith.constitutions.schema import Constitution, Principle
from rewardsmith.judges.base import ChatClient, ChatParams, JudgeError, Message
from rewardsmith.store import KeyedStore

logger = logging.getLogger(__name__)

DEFAULT_CRITIQUE_TEMPLATE = (
    "{{ critique_request }}\nWrite the critique in a few sentences. Do not rewrite the response yet."
)
DEFAULT_REVISION_TEMPLATE = (
    "{{ revision_request }}\nReply with the rewritten response only, without any introduction or comment."
)
_LABEL = re.compile(
    r"^\s*(?:\*\*)?\s*(?:here is (?:the|my) )?(?:(?:revised|rewritten|improved) )?(?:response|revision|answer)"
    r"\s*(?:\*\*)?\s*:\s*(?:\*\*)?\s*",
    flags=re.IGNORECASE,
)


class ReviseConfig(BaseModel):
    """Settings of a critique -> revision run (all recorded in the run fingerprint)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rounds: int = Field(1, ge=1, le=8, description="critique -> revision rounds per response")
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    critique_max_tokens: int = Field(160, ge=1)
    revision_max_tokens: int = Field(256, ge=1)
    few_shot: bool = Field(True, description="prepend the constitution's revision examples")
    conversational: bool = Field(False, description="write prompt/completion/chosen/rejected as chat messages")
    seed: int = 0
    concurrency: int = Field(1, ge=1, le=256)


@dataclass(frozen=True)
class RevisionTask:
    order: tuple[int, int]
    key: str
    item: PromptItem
    response: str


def revision_tasks(items: Sequence[PromptItem]) -> list[RevisionTask]:
    """One task per distinct (prompt, response)."""
    tasks = []
    for item in items:
        for position, response in enumerate(dict.fromkeys(item.candidates)):
            key = content_key("revise", item.prompt, response)
            tasks.append(RevisionTask(order=(item.index, position), key=key, item=item, response=response))
    return tasks


#: Sample values for a dry render of each revision-stage template, so a broken one fails before any request.
TEMPLATE_SAMPLES: dict[str, dict[str, str]] = {
    "critique": {"critique_request": "Critique it.", "prompt": "p", "response": "r"},
    "revision": {"revision_request": "Revise it.", "prompt": "p", "response": "r", "critique": "c"},
}


def render(template: str, *, kind: str = "template", **variables: Any) -> str:
    """Render a constitution's critique/revision template in jinja's sandbox (it is user-supplied text)."""
    from rewardsmith.judges.templates import render_source

    return render_source(template, name=f"{kind} template", **variables).strip()


def check_revision_templates(constitution: Constitution) -> None:
    """Dry-render the constitution's critique and revision templates; raise ``TemplateError`` if one fails."""
    from rewardsmith.judges.templates import check_source

    for kind, default in (("critique", DEFAULT_CRITIQUE_TEMPLATE), ("revision", DEFAULT_REVISION_TEMPLATE)):
        source = getattr(constitution.templates, kind) or default
        check_source(source, name=f"{kind} template of constitution {constitution.name!r}", **TEMPLATE_SAMPLES[kind])


def clean_revision(text: str) -> str:
    """The revised response without a leading label ("Revised response:") or wrapping quotes."""
    text = _LABEL.sub("", text.strip(), count=1).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    return text


def critique_messages(
    constitution: Constitution, principle: Principle, prompt: list[Message], response: str, *, few_shot: bool
) -> list[Message]:
    """The conversation that asks for a critique of ``response`` under ``principle``."""
    critique_template = constitution.templates.critique or DEFAULT_CRITIQUE_TEMPLATE
    revision_template = constitution.templates.revision or DEFAULT_REVISION_TEMPLATE
    messages: list[Message] = []
    if few_shot:
        for example in constitution.examples.revision:
            messages += [
                {"role": "user", "content": example.prompt},
                {"role": "assistant", "content": example.response},
                {
                    "role": "user",
                    "content": render(
                        critique_template,
                        kind="critique",
                        critique_request=principle.critique,
                        prompt=example.prompt,
                        response=example.response,
                    ),
                },
                {"role": "assistant", "content": example.critique},
                {
                    "role": "user",
                    "content": render(
                        revision_template,
                        kind="revision",
                        revision_request=principle.revision,
                        prompt=example.prompt,
                        response=example.response,
                        critique=example.critique,
                    ),
                },
                {"role": "assistant", "content": example.revision},
            ]
    prompt_text = "\n\n".join(m["content"] for m in prompt if m.get("role") == "user")
    messages += [dict(m) for m in prompt]
    messages += [
        {"role": "assistant", "content": response},
        {
            "role": "user",
            "content": render(
                critique_template,
                kind="critique",
                critique_request=principle.critique,
                prompt=prompt_text,
                response=response,
            ),
        },
    ]
    return messages


def revision_messages(
    constitution: Constitution,
    principle: Principle,
    critique_conversation: list[Message],
    prompt: list[Message],
    response: str,
    critique: str,
) -> list[Message]:
    revision_template = constitution.templates.revision or DEFAULT_REVISION_TEMPLATE
    prompt_text = "\n\n".join(m["content"] for m in prompt if m.get("role") == "user")
    return [
        *critique_conversation,
        {"role": "assistant", "content": critique},
        {
            "role": "user",
            "content": render(
                revision_template,
                kind="revision",
                revision_request=principle.revision,
                prompt=prompt_text,
                response=response,
                critique=critique,
            ),
        },
    ]


class ReviseSummary(BaseModel):
    responses_total: int = 0
    revised: int = 0
    dropped: dict[str, int] = Field(default_factory=dict)
    failed: int = 0
    resumed: int = 0
    outputs: dict[str, str] = Field(default_factory=dict)
    usage: str = ""

    def describe(self) -> str:
        return describe_run(
            self, f"responses: {self.responses_total}, revised: {self.revised}, not usable as DPO pairs: "
        )


class RevisePipeline:
    """Critique and revise responses with ``client`` (any :class:`ChatClient`) under a constitution."""

    def __init__(self, client: ChatClient, constitution: Constitution, config: ReviseConfig | None = None) -> None:
        check_revision_templates(constitution)
        self.client = client
        self.constitution = constitution
        self.config = config or ReviseConfig()
        self.constitution_digest = constitution_hash(constitution)

    def fingerprint(self) -> dict[str, Any]:
        return {
            "pipeline": "rlaif-revise",
            "model": getattr(self.client, "model", ""),
            "constitution": self.constitution.name,
            "constitution_hash": self.constitution_digest,
            "config": self.config.model_dump(mode="json", exclude={"concurrency"}),
        }

    def _params(self, max_tokens: int, round_index: int) -> ChatParams:
        return ChatParams(
            temperature=self.config.temperature, max_tokens=max_tokens, seed=self.config.seed + round_index
        )

    async def revise_task(self, task: RevisionTask) -> dict[str, Any]:
        prompt = task.item.messages
        response = task.response
        rounds = []
        for round_index in range(self.config.rounds):
            principle = sample_principles(self.constitution, f"{task.key}:round{round_index}", self.config.seed, 1)[0]
            asked = critique_messages(self.constitution, principle, prompt, response, few_shot=self.config.few_shot)
            critique = (
                await self.client.acomplete(asked, self._params(self.config.critique_max_tokens, round_index))
            ).text.strip()
            revise_asked = revision_messages(self.constitution, principle, asked, prompt, response, critique)
            raw = (
                await self.client.acomplete(revise_asked, self._params(self.config.revision_max_tokens, round_index))
            ).text
            revision = clean_revision(raw)
            rounds.append({"principle": principle.id, "critique": critique, "revision": revision})
            if revision:
                response = revision
        reason = ""
        if not any(r["revision"] for r in rounds):
            reason = "empty revision"
        elif response.strip() == task.response.strip():
            reason = "unchanged"
        return {
            "status": "dropped" if reason else "revised",
            "reason": reason,
            "prompt_id": task.item.prompt_id,
            "prompt": task.item.messages if self.config.conversational else task.item.text,
            "original": task.response,
            "revision": response,
            "principles": [r["principle"] for r in rounds],
            "critiques": [r["critique"] for r in rounds],
            "revisions": [r["revision"] for r in rounds],
            "reviser_model": getattr(self.client, "model", ""),
            "constitution": self.constitution.name,
            "constitution_hash": self.constitution_digest,
            "order": list(task.order),
        }

    async def arun(
        self, items: Sequence[PromptItem], store: KeyedStore, progress: RunProgress | None = None
    ) -> ReviseSummary:
        tasks = revision_tasks(items)
        todo = [task for task in tasks if task.key not in store]
        summary = ReviseSummary(responses_total=len(tasks), resumed=len(tasks) - len(todo))
        if progress is not None:
            progress.skip(summary.resumed)
        semaphore = asyncio.Semaphore(self.config.concurrency)

        async def one(task: RevisionTask) -> None:
            async with semaphore:
                try:
                    record = await self.revise_task(task)
                except JudgeError as exc:
                    summary.failed += 1
                    logger.warning("revision of %s failed, will be retried: %s", task.key, exc)
                    if progress is not None:
                        progress.add("failed")
                    return
            store.append(task.key, record)
            if progress is not None:
                progress.add("done" if record["status"] == "revised" else "dropped")

        await asyncio.gather(*(one(task) for task in todo))
        for task in tasks:
            record = store.get(task.key)
            if record is None:
                continue
            if record["status"] == "revised":
                summary.revised += 1
            else:
                summary.dropped[record["reason"]] = summary.dropped.get(record["reason"], 0) + 1
        return summary

    def run(self, items: Sequence[PromptItem], store: KeyedStore, progress: RunProgress | None = None) -> ReviseSummary:
        return run_sync(self.arun(items, store, progress), close=self.client)


def export_revisions(
    store: KeyedStore,
    out_dir: str | Path,
    formats: Sequence[str],
    *,
    conversational: bool,
    keys: Collection[str] | None = None,
) -> dict[str, Path]:
    """``sft.*`` (prompt -> final revision, every revised response) and ``dpo.*`` (revision over original).

    ``keys`` limits the export to the responses of the current input.
    """
    records = sorted((r for r in store.records() if keys is None or r["key"] in keys), key=lambda r: tuple(r["order"]))
    provenance_keys = (
        "key",
        "prompt_id",
        "principles",
        "critiques",
        "revisions",
        "reviser_model",
        "constitution",
        "constitution_hash",
    )
    sft, dpo = [], []
    for record in records:
        if record["status"] != "revised":
            continue
        provenance = {k: record[k] for k in provenance_keys}
        revision = _completion(record["revision"], conversational)
        sft.append({"prompt": record["prompt"], "completion": revision, **provenance})
        original = _completion(record["original"], conversational)
        dpo.append({"prompt": record["prompt"], "chosen": revision, "rejected": original, **provenance})
    written = {f"sft.{fmt}": path for fmt, path in export_dataset(sft, out_dir, "sft", formats).items()}
    written.update({f"dpo.{fmt}": path for fmt, path in export_dataset(dpo, out_dir, "dpo", formats).items()})
    return written


def _completion(text: str, conversational: bool) -> Any:
    return [{"role": "assistant", "content": text}] if conversational else text
