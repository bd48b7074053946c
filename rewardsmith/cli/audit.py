"""``rewardsmith audit``: audit a judge for bias, write a held-out set, re-render a report, check leakage.

rewardsmith audit run --judge embedded --set mixed --n 16 --out runs/smollm
rewardsmith audit run --judge openai:gpt-4o-mini --set my_pairs.jsonl --out runs/gpt4o-mini --rpm 500 --timeout 30
rewardsmith audit run --judge openai:my-judge --constitution helpful-harmless --question harmless --cot --out runs/rlaif
rewardsmith audit run --reward-model runs/rm/final --set mixed --out runs/rm
rewardsmith audit run --reward-model http://127.0.0.1:8000/classify --set pairs.jsonl --out runs/rm-vllm
rewardsmith audit make-set --set code --n 200 --seed 1 --out code_pairs.jsonl
rewardsmith audit report runs/smollm
rewardsmith audit leakage --set runs/smollm/set.jsonl --against dpo_pairs.parquet
rewardsmith audit reward --spec rewards.yaml --data rows.jsonl --out runs/hack --attacks all --max-fp 0.0
rewardsmith audit reward --spec rewards.yaml --data rows.jsonl --out runs/hack --search-budget 300 --seed 1
rewardsmith audit replay runs/hack/findings.jsonl --spec fixed_rewards.yaml
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Any

from rewardsmith.audit.pipeline import DEFAULT_N
from rewardsmith.cli.clients import (
    add_client_args,
    add_pairwise_judge_args,
    client_flags_given,
    client_from_args,
    pairwise_judge_from_args,
    request_options,
)
from rewardsmith.cli.failures import report_failures
from rewardsmith.cli.interrupts import command_line, on_interrupt, say_resuming, stores_saved

logger = logging.getLogger(__name__)

#: the judge client's request options a reward model reads too (the other client flags are refused with it)
REWARD_MODEL_REQUEST_OPTIONS = ("timeout", "max_retries")


def add_commands(subparsers: Any) -> None:
    audit = subparsers.add_parser(
        "audit",
        help="audit a pairwise judge for position, length, cue and self-preference bias",
        description="Judge a held-out set with verifiable gold in both orders (plus CALM-style cues) and write "
        "metrics.json, summary.md and report.html (`audit run`).",
    )
    actions = audit.add_subparsers(title="actions", metavar="ACTION")

    run = actions.add_parser("run", help="judge a held-out set and write metrics and the report (resumable)")
    _add_run_arguments(run)
    run.set_defaults(func=cmd_run, needs=_run_needs)

    make = actions.add_parser("make-set", help="write a generated audit set (verified gold) to JSONL")
    _add_set_arguments(make)
    make.add_argument("--out", required=True, help="output .jsonl")
    make.add_argument("--no-verify", action="store_true", help="skip checking the gold with rewardsmith verifiers")
    make.set_defaults(func=cmd_make_set)

    report = actions.add_parser("report", help="recompute metrics and re-render the report of a run directory")
    report.add_argument("run_dir", help="an audit --out directory")
    _add_metric_arguments(report)
    report.set_defaults(func=cmd_report, needs=("audit",))

    leak = actions.add_parser("leakage", help="warn when an audit set's prompts appear in RLAIF/DPO data")
    leak.add_argument("--set", dest="set_spec", required=True, help="audit set: .jsonl file or run directory")
    leak.add_argument("--against", required=True, nargs="+", help="DPO data files (jsonl/json/parquet/csv)")
    leak.add_argument("--prompt-column", default="prompt")
    leak.set_defaults(func=cmd_leakage)

    hack = actions.add_parser(
        "reward",
        help="attack a reward spec with adversarial completions on your rows before training (exit 1 if hackable)",
    )
    _add_reward_audit_arguments(hack)
    hack.set_defaults(func=cmd_reward, needs=("audit",))

    replay = actions.add_parser(
        "replay",
        help="re-score the sealed exploits of `audit reward --search-budget` with a spec (exit 1 if any still pays)",
    )
    replay.add_argument("findings", help="a findings.jsonl written by `audit reward --search-budget N`")
    replay.add_argument("--spec", required=True, help="the reward spec to replay the findings against")
    replay.set_defaults(func=cmd_replay)


def _add_set_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="set_spec",
        default="mixed",
        help="math | code | format | mixed (generated) or FILE.jsonl (default: mixed)",
    )
    parser.add_argument("--n", type=int, default=None, help=f"items (generated default {DEFAULT_N}; file: all)")
    parser.add_argument("--seed", type=int, default=0, help="generator seed")


def _add_metric_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--self-model", default=None, help="author name of the judge's own responses (default: the judge's model name)"
    )
    parser.add_argument("--compare", default=None, help="another audit run directory: Cohen's kappa between judges")
    parser.add_argument(
        "--n-boot", type=int, default=2000, help="BCa bootstrap resamples (intervals of statistics that are not rates)"
    )


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    add_client_args(parser, "judge", "the audited judge (default embedded)", default="embedded")
    parser.set_defaults(judge=None)  # unset, so that --reward-model can tell an explicit --judge from the default
    add_pairwise_judge_args(parser)
    from rewardsmith.judges.reward_model import REMOTE_PROTOCOLS

    rm = parser.add_argument_group("a reward model as the audited judge (instead of --judge)")
    rm.add_argument(
        "--reward-model",
        default=None,
        metavar="PATH_OR_URL",
        help="audit a reward model: a local one-output sequence classifier, or a reward server URL; "
        "P(a better) = sigmoid(r_a - r_b)",
    )
    rm.add_argument(
        "--reward-model-protocol",
        choices=("auto", *REMOTE_PROTOCOLS),
        default="auto",
        help="the server's wire format (auto: a URL ending in /classify or /pooling is vLLM, any other OpenRLHF)",
    )
    rm.add_argument(
        "--reward-model-device", default="cpu", metavar="DEVICE", help="torch device of a local reward model"
    )
    parser.add_argument(
        "--question",
        default=None,
        help="comparison question asked with every pair (default: the template's); with --constitution, "
        "a principle id asks that principle's comparison question",
    )
    parser.add_argument(
        "--constitution",
        default=None,
        help="judge with this constitution's comparison template and examples, as `rlaif pairs` does",
    )
    _add_set_arguments(parser)
    parser.add_argument("--out", default=None, help="run directory (resumable: rerun to continue)")
    parser.add_argument(
        "--perturb",
        default="all",
        help="cues on the wrong response: all | none | comma list of verbosity, authority, "
        "bandwagon, distraction, sentiment",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="judge calls in flight")
    parser.add_argument("--cache-dir", default=None, help="judge request cache (default: OUT/judge-cache)")
    parser.add_argument("--no-verify", action="store_true", help="skip checking the gold with rewardsmith verifiers")
    parser.add_argument(
        "--self-generate",
        type=int,
        default=0,
        metavar="K",
        help="add K items holding the judge's own answers (self-preference audit)",
    )
    parser.add_argument("--against", nargs="*", default=(), help="DPO data files to check the set for leakage")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_metric_arguments(parser)


def _run_needs(args: argparse.Namespace) -> tuple[str, ...]:
    """``audit`` for the report's plots; a local reward model needs ``judge-local``; the default judge its backend."""
    from rewardsmith.cli.extras import check_client_needs

    if args.reward_model:
        return ("audit",) if args.reward_model.startswith(("http://", "https://")) else ("audit", "judge-local")
    if args.judge is None:  # --judge given is checked with every command's clients; the default is checked here
        check_client_needs("embedded", "judge", "rewardsmith audit run")
    return ("audit",)


def cmd_run(args: argparse.Namespace) -> int:
    from rewardsmith.audit.runner import VERDICTS_FILE

    if not args.out:
        raise ValueError("audit run needs --out DIR")
    stores = [(Path(args.out) / VERDICTS_FILE, "judge verdicts")]
    say_resuming(stores)
    with on_interrupt(lambda: stores_saved(stores), command_line):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from rewardsmith.audit.perturb import parse_perturbations
    from rewardsmith.audit.pipeline import load_items, run_audit, verified_items

    perturbations = parse_perturbations(args.perturb)
    items, set_name = load_items(args.set_spec, args.n, args.seed)
    gold_check: dict[str, int] = {}
    if not args.no_verify:
        items, gold_check = verified_items(items)
        if not items:
            raise ValueError("every item's gold was contradicted by its verifier")
    out = Path(args.out)
    cache_dir = Path(args.cache_dir) if args.cache_dir else out / "judge-cache"
    constitution = None
    if args.constitution:
        from rewardsmith.constitutions.loader import load_constitution

        constitution = load_constitution(args.constitution)
    question = _question(args.question, constitution)
    if args.reward_model:
        judge = _reward_model_judge(args)
    else:
        args.judge = args.judge or "embedded"
        client = client_from_args(args, "judge", cache_dir=cache_dir, concurrency=args.concurrency)
        judge = pairwise_judge_from_args(args, client, constitution=constitution, state_dir=out / "templates")
    outcome = run_audit(
        judge,
        items,
        out,
        set_name=set_name,
        perturbations=perturbations,
        concurrency=args.concurrency,
        self_generate=args.self_generate,
        seed=args.seed,
        gold_check=gold_check,
        against=args.against,
        compare=args.compare,
        self_model=args.self_model,
        n_boot=args.n_boot,
        progress=not args.no_progress,
        question=question,
    )
    for message in outcome.leaks:
        print(f"WARNING: {message}", file=sys.stderr)
    if outcome.added_items:
        print(f"added {outcome.added_items} items with the judge's own answers", file=sys.stderr)
    summary = outcome.summary
    failed = f", {summary.failed} FAILED (not in the metrics; rerun the same command to retry them)"
    print(
        f"judge tasks: {summary.total} ({summary.judged} judged, {summary.reused} reused"
        f"{failed if summary.failed else ''})"
    )
    for error in summary.errors:
        print(f"  failed: {error}", file=sys.stderr)
    if summary.judged_by and summary.judged_by.get("fallback"):
        print(
            f"judged by: {summary.judged_by['transport']} ({summary.judged_by['model']}), "
            f"because {summary.judged_by['fallback_reason']}"
        )
    usage = (outcome.metrics.get("run") or {}).get("usage")
    if usage:
        from rewardsmith.judges.accounting import UsageReport

        print(UsageReport.model_validate(usage).summary())
    covered = _print_findings(outcome.metrics, outcome.paths)
    return max(report_failures(summary.failed, "judge task(s)"), 0 if covered else 1)


def _reward_model_judge(args: argparse.Namespace) -> Any:
    """The reward model ``--reward-model`` names, as a pairwise judge; options only an LLM judge reads are refused."""
    from rewardsmith.judges.base import JudgeError
    from rewardsmith.judges.reward_model import LocalRewardModel, RewardModelPairwiseJudge, make_reward_model

    if args.judge is not None:
        raise ValueError("--reward-model and --judge are mutually exclusive: audit one judge per run")
    llm_only = {
        "--judge-template": args.judge_template,
        "--no-logprobs": args.no_logprobs,
        "--cot": args.chain_of_thought,
        "--cot-clamp": tuple(args.cot_clamp) != (0.4, 0.6),
        "--constitution": args.constitution,
        "--question": args.question is not None,
        "--self-generate": args.self_generate > 0,
        "--cache-dir": args.cache_dir,
    }
    given = client_flags_given(args, "judge", besides=REWARD_MODEL_REQUEST_OPTIONS)
    given += [flag for flag, value in llm_only.items() if value]
    if given:
        raise ValueError(f"{', '.join(given)}: not read by a reward model, which scores each response alone")
    target = args.reward_model
    remote = target.startswith(("http://", "https://"))
    if not remote and not Path(target).is_dir():
        raise ValueError(f"--reward-model {target!r} is neither a model directory nor an http(s):// URL")
    options = {k: v for k, v in request_options(args).items() if k in REWARD_MODEL_REQUEST_OPTIONS}
    scorer = make_reward_model(target, protocol=args.reward_model_protocol, device=args.reward_model_device, **options)
    if isinstance(scorer, LocalRewardModel):
        try:
            scorer.load()  # a directory that is no one-output classifier fails here, not in every judge task
        except JudgeError as exc:
            raise ValueError(str(exc)) from None
        except Exception as exc:
            raise ValueError(f"--reward-model {target}: {type(exc).__name__}: {exc}") from None
    return RewardModelPairwiseJudge(scorer)


def _question(value: str | None, constitution: Any) -> str | None:
    """``--question``: the text itself, or with a constitution the comparison question of the principle it names."""
    if value is None or constitution is None:
        return value
    by_id = {principle.id: principle.comparison for principle in constitution.principles}
    return by_id.get(value, value)


def _print_findings(metrics: dict[str, Any], paths: dict[str, Path]) -> bool:
    """Print the findings; False when the audit judged too little for them to mean anything (the headline says)."""
    from rewardsmith.audit.flags import coverage_problem
    from rewardsmith.audit.report import no_findings_line

    problem = coverage_problem(metrics)
    if problem:
        print(problem, file=sys.stderr)
    for flag in metrics.get("flags", []):
        print(f"[{flag['severity']}] {flag['message']}")
    if not metrics.get("flags"):
        print(no_findings_line(metrics))
    print(f"report: {paths['html']}  metrics: {paths['metrics']}  summary: {paths['summary']}")
    return problem is None


def cmd_report(args: argparse.Namespace) -> int:
    from rewardsmith.audit.pipeline import write_outputs

    metrics, paths = write_outputs(
        Path(args.run_dir), compare=args.compare, self_model=args.self_model, n_boot=args.n_boot
    )
    return 0 if _print_findings(metrics, paths) else 1


def cmd_make_set(args: argparse.Namespace) -> int:
    from rewardsmith.audit.pipeline import load_items, verified_items
    from rewardsmith.heldout.sets import write_set

    items, _ = load_items(args.set_spec, args.n, args.seed)
    status = ""
    if not args.no_verify:
        items, counts = verified_items(items)
        status = " (gold: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + ")"
    digest = write_set(args.out, items)
    print(f"{len(items)} items -> {args.out}{status}; set hash {digest[:16]}")
    return 0


def cmd_leakage(args: argparse.Namespace) -> int:
    from rewardsmith.audit.pipeline import leakage_warnings, load_items

    items, _ = load_items(args.set_spec, None, 0)
    leaks = leakage_warnings(items, args.against, args.prompt_column)
    for message in leaks:
        print(f"WARNING: {message}", file=sys.stderr)
    if not leaks:
        print(f"no audit prompt found in {', '.join(args.against)}")
    return 1 if leaks else 0


def _add_reward_audit_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="the reward spec YAML/JSON a trainer would read")
    parser.add_argument("--data", required=True, help="rows with prompts and gold columns (jsonl, json, csv, parquet)")
    parser.add_argument("--out", required=True, help="run directory (resumable: rerun to continue)")
    parser.add_argument(
        "--attacks", default="all", help="all (every attack the spec's kinds allow) | comma list of names or families"
    )
    parser.add_argument("--max-fp", type=float, default=0.0, help="exit 1 when an attack's rate is above this")
    parser.add_argument("--threshold", type=float, default=1.0, help="a completion scoring >= this counts as correct")
    parser.add_argument(
        "--min-control", type=float, default=1.0, help="exit 1 when the honest controls pass less often than this"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the attacks' and the search's random choices")
    parser.add_argument(
        "--search-budget",
        type=_budget,
        default=0,
        metavar="N",
        help="also search for new exploits, scoring at most N mutated wrong completions; findings are sealed in "
        "OUT/findings.jsonl (default 0: no search; an A grade needs one)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _budget(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("--search-budget must be 0 (no search) or a positive number of completions")
    return value


def cmd_reward(args: argparse.Namespace) -> int:
    from rewardsmith.hackaudit.runner import VERDICTS_FILE

    stores = [(Path(args.out) / VERDICTS_FILE, "scored completions")]
    say_resuming(stores)
    with on_interrupt(lambda: stores_saved(stores), command_line):
        return _reward(args)


def _reward(args: argparse.Namespace) -> int:
    from rewardsmith.hackaudit.grade import grade_line
    from rewardsmith.hackaudit.report import findings
    from rewardsmith.hackaudit.runner import run_reward_audit

    outcome = run_reward_audit(
        args.spec,
        args.data,
        args.out,
        attacks=args.attacks,
        max_fp=args.max_fp,
        threshold=args.threshold,
        min_control=args.min_control,
        seed=args.seed,
        progress=not args.no_progress,
        search_budget=args.search_budget,
    )
    m = outcome.metrics
    print(f"completions: {outcome.scored_now} scored, {outcome.reused} reused; kinds: {', '.join(m['run']['kinds'])}")
    for line in findings(m):
        print(line)
    exploits = (m.get("search") or {}).get("found", 0)
    if not outcome.flagged and not outcome.controls_failing:
        print(f"no attack above {args.max_fp:g}; honest controls pass")
    print(grade_line(m["grade"]))
    paths = outcome.paths
    if "trajectories" in m:
        t = m["trajectories"]
        for name, mutation in t["mutations"].items():
            print(
                f"trajectory mutation {name}: paid at least as much as the honest transcript "
                f"{mutation['paid_at_least_honest']}/{mutation['n']}"
            )
        print(f"trajectories: {paths['trajectories']}")
    print(f"report: {paths['html']}  metrics: {paths['metrics']}  examples: {paths['examples']}")
    if "card" in paths:
        print(f"card: {paths['card']}")
    if "findings" in paths:
        print(f"findings: {paths['findings']}  replay: rewardsmith audit replay {paths['findings']} --spec SPEC")
    return 1 if outcome.flagged or outcome.controls_failing or exploits else 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-score every sealed finding with ``--spec``: 1 while any is still paid (or cannot be scored), else 0."""
    from rewardsmith.adapters.spec import load_spec
    from rewardsmith.hackaudit.runner import load_raw_spec, spec_digest
    from rewardsmith.hackaudit.sealed import read_findings, replay

    records = read_findings(args.findings)
    raw = load_raw_spec(args.spec)
    digest = spec_digest(raw)
    replayed = replay(records, load_spec(raw).combined())
    for r in replayed:
        spec_note = "" if r.record["spec_digest"] == digest else " (spec changed since the audit)"
        print(
            f"{r.verdict}: row {r.record['row']} seal {r.record['seal'][:12]} score {r.score} "
            f"(sealed {r.record['score']}){spec_note}: {r.reason[:100]}"
        )
    paying = sum(r.pays for r in replayed)
    unscorable = sum(r.score is None for r in replayed)
    print(
        f"{len(replayed)} sealed findings: {paying} still pay, {unscorable} unscorable, "
        f"{len(replayed) - paying - unscorable} fixed"
    )
    return 1 if paying or unscorable else 0
