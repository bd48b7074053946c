"""The RLAIF pipelines as library calls: :func:`run_pairs` (RL-CAI preference pairs) and :func:`run_revisions`
(SL-CAI critique → revision), with the resume, summaries and leakage checks ``rewardsmith rlaif`` prints.

Everything a run needs is passed in (clients, constitution, configs); everything it did is returned in a
:class:`RunOutcome` and written to ``out`` (``summary.json``, the datasets, the resumable state under ``state/``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rewardsmith.audit.preflight import check_judge
from rewardsmith.bridge import run_sync
from rewardsmith.constitutions.export import EXPORT_FORMATS
from rewardsmith.constitutions.generate import GenerationConfig, agenerate
from rewardsmith.constitutions.prompts import PromptItem, is_pairable
from rewardsmith.store import KeyedStore

logger = logging.getLogger(__name__)

#: The folder inside ``out`` holding the resumable state (records, generated candidates, the cache).
STATE = "state"


@dataclass
class RunOutcome:
    """A finished (or resumed-to-finish) RLAIF run: its summary, failures and audit-set leaks."""

    summary: Any
    generation_failed: int = 0
    leaks: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        """Items that failed for infrastructure reasons (judge or generation errors); a rerun retries them."""
        return int(self.summary.failed) + self.generation_failed


def fill_candidates(
    items: list[PromptItem],
    out: Path,
    *,
    policy: Any | None,
    generation: GenerationConfig,
    responses_column: str = "responses",
    progress: bool = True,
    notes: list[str] | None = None,
) -> tuple[list[PromptItem], int]:
    """Generate candidates for the prompts that have fewer than two (returns items, failed prompts).

    Without a policy such prompts are left as they are and the pipeline drops them with their reason; only an
    input where no prompt at all has two candidates (a wrong column, a forgotten policy) is an error.
    """
    from rewardsmith.constitutions.pairs import UNPAIRABLE
    from rewardsmith.constitutions.progress import RunProgress

    given = [item for item in items if is_pairable(item)]
    missing = [item for item in items if not is_pairable(item)]
    if not missing:
        return items, 0
    if policy is None:
        if not given:
            raise ValueError(
                f"{len(missing)} prompt(s) have fewer than two distinct candidates in column "
                f"{responses_column!r} and none has two: give a policy to generate them "
                "(--policy openai:MODEL, transformers:PATH or embedded)"
            )
        if notes is not None:
            notes.append(
                f"{len(missing)} of {len(items)} prompt(s) have fewer than two distinct non-empty candidates and no "
                f"--policy generates more: dropped as {UNPAIRABLE} (see dropped.jsonl)"
            )
        return items, 0
    if generation.k < 2:
        raise ValueError("--k must be at least 2 to make pairs")
    check_judge(SimpleNamespace(client=policy), role="policy")  # before every prompt meets a dead endpoint
    bar = RunProgress(len(missing), "generating candidates", _accountant(policy), enabled=progress)
    with KeyedStore(out / STATE / "candidates.jsonl") as store:
        try:
            generated, failed = run_sync(agenerate(policy, missing, generation, store, bar), close=policy)
        finally:
            bar.close()
    by_index = {item.index: item for item in [*given, *generated]}
    return [by_index[i] for i in sorted(by_index)], failed


def run_pairs(
    items: list[PromptItem],
    out: str | Path,
    *,
    judge: Any,
    constitution: Any,
    config: Any,
    policy: Any | None = None,
    generation: GenerationConfig | None = None,
    formats: Sequence[str] = EXPORT_FORMATS,
    responses_column: str = "responses",
    progress: bool = True,
) -> RunOutcome:
    """Judge candidate pairs in both orders under sampled principles and export a DPO dataset to ``out``.

    ``judge`` is a :class:`~rewardsmith.judges.pairwise.PairwiseJudge` (see :func:`build_pairwise_judge`);
    ``policy`` (a chat client) writes candidates for prompts that have fewer than two. Rerun to resume.
    A policy with candidates to write, and the judge with pairs to judge, are each asked once first: an endpoint
    that cannot answer raises :class:`~rewardsmith.audit.preflight.JudgeUnavailable` naming it and the fix.
    """
    from rewardsmith.constitutions.pairs import PairsPipeline, export_pairs, pair_tasks, planned_keys, prompt_drops

    out = Path(out)
    notes: list[str] = []
    generation = generation or GenerationConfig(seed=config.seed, concurrency=config.concurrency)
    items, generation_failed = fill_candidates(
        items,
        out,
        policy=policy,
        generation=generation,
        responses_column=responses_column,
        progress=progress,
        notes=notes,
    )
    if getattr(judge, "note", None):
        notes.append(judge.note)
    pipeline = PairsPipeline(judge, constitution, config)
    keys = planned_keys(items, config)
    summary, leaks = _run_pipeline(
        pipeline,
        items,
        out,
        total=len(pair_tasks(items, config)) + len(prompt_drops(items)),
        desc="judging pairs",
        accountant=_accountant(judge.client) if hasattr(judge, "client") else None,
        store_name="pairs.jsonl",
        export=lambda store: export_pairs(store, out, tuple(formats), keys=keys),
        progress=progress,
    )
    return RunOutcome(summary=summary, generation_failed=generation_failed, leaks=leaks, notes=notes)


def run_revisions(
    items: list[PromptItem],
    out: str | Path,
    *,
    client: Any,
    constitution: Any,
    config: Any,
    formats: Sequence[str] = EXPORT_FORMATS,
    progress: bool = True,
) -> RunOutcome:
    """Critique → revision rounds under sampled principles; exports SFT data and revision-over-original pairs.

    Prompts without a response get one from ``client`` first, as in Constitutional AI. Rerun to resume.
    """
    from rewardsmith.constitutions.revise import RevisePipeline, export_revisions, revision_tasks

    out = Path(out)
    missing = [item for item in items if not item.candidates]
    generation_failed = 0
    if missing:
        generation = GenerationConfig(
            k=1,
            temperature=config.temperature,
            max_tokens=config.revision_max_tokens,
            seed=config.seed,
            concurrency=config.concurrency,
        )
        with KeyedStore(out / STATE / "responses.jsonl") as store:
            generated, generation_failed = run_sync(agenerate(client, missing, generation, store), close=client)
        by_index = {item.index: item for item in items if item.candidates}
        by_index.update({item.index: item for item in generated})
        items = [by_index[i] for i in sorted(by_index)]
    pipeline = RevisePipeline(client, constitution, config)
    keys = {task.key for task in revision_tasks(items)}
    summary, leaks = _run_pipeline(
        pipeline,
        items,
        out,
        total=len(revision_tasks(items)),
        desc="critique -> revision",
        accountant=_accountant(client),
        store_name="revisions.jsonl",
        export=lambda store: export_revisions(
            store, out, tuple(formats), conversational=config.conversational, keys=keys
        ),
        progress=progress,
    )
    return RunOutcome(summary=summary, generation_failed=generation_failed, leaks=leaks)


def build_pairwise_judge(
    client: Any,
    constitution: Any | None,
    *,
    template: str | None = None,
    use_logprobs: bool = True,
    chain_of_thought: bool = False,
    cot_clamp: tuple[float, float] = (0.4, 0.6),
    state_dir: Path | None = None,
) -> Any:
    """The pairwise judge for a run: ``client`` with the constitution's comparison template and examples.

    ``rlaif pairs``, ``audit run`` and ``judge pair`` all build their judge here, so an audit can judge
    exactly as a labelling run does. Without a constitution the judge uses ``template`` as it is. A constitution's
    own template (or examples) is written, named by its digest, under ``state_dir`` (default: ``templates/`` in the
    rewardsmith cache).
    """
    from rewardsmith.judges.likelihood_default import embedded_default_judge
    from rewardsmith.judges.pairwise import PairwiseJudge

    likelihood = embedded_default_judge(
        client, template=template, use_logprobs=use_logprobs, chain_of_thought=chain_of_thought
    )
    if likelihood is not None:  # the embedded SmolLM2 judges by response likelihood (see judges/pointwise.py)
        return likelihood
    rendered = template
    if constitution is not None:
        from rewardsmith.constitutions.judging import comparison_template
        from rewardsmith.heldout.leakage import cache_root

        rendered = comparison_template(
            constitution, template, chain_of_thought=chain_of_thought, state_dir=state_dir or cache_root() / "templates"
        )
    return PairwiseJudge(
        client,
        template=rendered,
        use_logprobs=use_logprobs,
        chain_of_thought=chain_of_thought,
        cot_clamp=cot_clamp,
    )


def _run_pipeline(
    pipeline: Any,
    items: list[PromptItem],
    out: Path,
    *,
    total: int,
    desc: str,
    accountant: Any,
    store_name: str,
    export: Callable[[Any], dict[str, Path]],
    progress: bool,
) -> tuple[Any, list[Any]]:
    """Run ``pipeline`` over ``items``, resuming from the state in ``out``; ``export(store)`` writes the datasets.

    Refuses a state made with other settings and writes ``summary.json`` (with audit-set leaks). The transport
    that judged (the embedded judge's server, or its in-process fallback and why) goes into ``run.json``'s
    ``judged_by`` history and ``summary.json``.
    """
    from rewardsmith.constitutions.pair_records import record_judged_by
    from rewardsmith.constitutions.pairs import check_fingerprint
    from rewardsmith.constitutions.progress import RunProgress
    from rewardsmith.heldout.leakage import find_audited_set_leaks
    from rewardsmith.judges.clients.provenance import judged_by

    check_fingerprint(out / STATE, pipeline.fingerprint())
    bar = RunProgress(total, desc, accountant, enabled=progress)
    with KeyedStore(out / STATE / store_name) as store:
        try:
            summary = pipeline.run(items, store, bar)
        finally:
            bar.close()
            transport = judged_by(getattr(pipeline, "judge", None) or pipeline.client)
            record_judged_by(out / STATE, transport)
        written = export(store)
    summary.outputs = {name: str(path) for name, path in written.items()}
    if accountant is not None:
        summary.usage = accountant.report().summary()
    leaks = find_audited_set_leaks(item.prompt for item in items)
    (out / "summary.json").write_text(
        json.dumps(
            {**summary.model_dump(), "judged_by": transport, "leakage": [leak.model_dump() for leak in leaks]},
            indent=2,
        )
    )
    return summary, leaks


def _accountant(client: Any) -> Any:
    from rewardsmith.judges.accounting import Accountant

    return getattr(client, "accountant", None) or Accountant()
