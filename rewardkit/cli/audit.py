"""``rewardkit audit``: audit a judge for bias, write a held-out set, re-render a report, check leakage.

rewardkit audit --judge embedded --set mixed --n 16 --out runs/smollm
rewardkit audit --judge openai:gpt-4o-mini --set my_pairs.jsonl --out runs/gpt4o-mini
rewardkit audit make-set --set code --n 200 --seed 1 --out code_pairs.jsonl
rewardkit audit report runs/smollm
rewardkit audit leakage --set runs/smollm/set.jsonl --against dpo_pairs.parquet
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_N = 60


def add_commands(subparsers: Any) -> None:
    audit = subparsers.add_parser(
        "audit",
        help="audit a pairwise judge for position, length, cue and self-preference bias",
        description="Judge a held-out set with verifiable gold in both orders (plus CALM-style cues) and write "
        "metrics.json, summary.md and report.html. Without an action, runs an audit.",
    )
    _add_run_arguments(audit)
    audit.set_defaults(func=cmd_run)
    actions = audit.add_subparsers(title="actions", metavar="ACTION", required=False)

    make = actions.add_parser("make-set", help="write a generated audit set (verified gold) to JSONL")
    _add_set_arguments(make)
    make.add_argument("--out", required=True, help="output .jsonl")
    make.add_argument("--no-verify", action="store_true", help="skip checking the gold with rewardkit verifiers")
    make.set_defaults(func=cmd_make_set)

    report = actions.add_parser("report", help="recompute metrics and re-render the report of a run directory")
    report.add_argument("run_dir", help="an audit --out directory")
    _add_metric_arguments(report)
    report.set_defaults(func=cmd_report)

    leak = actions.add_parser("leakage", help="warn when an audit set's prompts appear in RLAIF/DPO data")
    leak.add_argument("--set", dest="set_spec", required=True, help="audit set: .jsonl file or run directory")
    leak.add_argument("--against", required=True, nargs="+", help="DPO data files (jsonl/json/parquet/csv)")
    leak.add_argument("--prompt-column", default="prompt")
    leak.set_defaults(func=cmd_leakage)


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
    parser.add_argument("--n-boot", type=int, default=2000, help="bootstrap resamples for the intervals")


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--judge",
        default="embedded",
        help="embedded | openai:MODEL | transformers:PATH (default: embedded SmolLM2-135M)",
    )
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint for the judge")
    parser.add_argument("--api-key", default=None, help="default: $OPENAI_API_KEY")
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
    parser.add_argument("--no-verify", action="store_true", help="skip checking the gold with rewardkit verifiers")
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


def parse_judge_spec(spec: str) -> tuple[str, str | None]:
    """``embedded`` → (embedded, None); ``openai:MODEL`` / ``transformers:PATH`` → (backend, model)."""
    backend, _, model = spec.partition(":")
    if backend == "embedded" and not model:
        return "embedded", None
    if backend in ("openai", "transformers") and model:
        return backend, model
    raise ValueError(f"--judge {spec!r}: use embedded, openai:MODEL or transformers:PATH")


def load_items(set_spec: str, n: int | None, seed: int) -> tuple[list[Any], str]:
    """A generated set (by kind) or a JSONL file; returns (items, display name)."""
    from rewardkit.audit.generators import SET_KINDS, generate_set
    from rewardkit.heldout.sets import read_set

    if n is not None and n < 1:
        raise ValueError("--n must be at least 1")
    if set_spec in SET_KINDS:
        return generate_set(set_spec, n or DEFAULT_N, seed), f"{set_spec} (generated, seed {seed})"
    path = Path(set_spec)
    if path.is_dir():
        path = path / "set.jsonl"
    if path.suffix != ".jsonl" and not path.exists():
        raise ValueError(f"--set {set_spec!r}: use one of {', '.join(SET_KINDS)} or a .jsonl file")
    items = read_set(path)
    return (items[:n] if n else items), str(path)


def verified_items(items: list[Any]) -> tuple[list[Any], dict[str, int]]:
    """Drop items whose gold a verifier contradicts; count every status."""
    from rewardkit.audit.verify import summarize, verify_gold

    verdicts = verify_gold(items)
    bad = {v.item_id for v in verdicts if v.status == "contradicted"}
    for v in verdicts:
        if v.status == "contradicted":
            logger.warning("dropping %s: %s", v.item_id, v.reason)
    return [it for it in items if it.id not in bad], summarize(verdicts)


def build_judge(args: argparse.Namespace, cache_dir: Path) -> Any:
    from rewardkit.judges.clients.factory import make_client
    from rewardkit.judges.pairwise import PairwiseJudge

    backend, model = parse_judge_spec(args.judge)
    client = make_client(
        backend,
        model=model,
        base_url=args.base_url,
        api_key=args.api_key,
        cache_dir=str(cache_dir),
        concurrency=max(1, args.concurrency),
    )
    return PairwiseJudge(client)


def cmd_run(args: argparse.Namespace) -> int:
    from rewardkit.audit.perturb import parse_perturbations
    from rewardkit.audit.runner import AuditRunner
    from rewardkit.heldout.leakage import register_set

    if not args.out:
        raise ValueError("audit needs --out DIR (or an action: make-set, report, leakage)")
    perturbations = parse_perturbations(args.perturb)
    items, set_name = load_items(args.set_spec, args.n, args.seed)
    gold_check: dict[str, int] = {}
    if not args.no_verify:
        items, gold_check = verified_items(items)
        if not items:
            raise ValueError("every item's gold was contradicted by its verifier")
    out = Path(args.out)
    for path in args.against:
        _warn_leakage(items, path, "prompt")
    judge = build_judge(args, Path(args.cache_dir) if args.cache_dir else out / "judge-cache")
    if args.self_generate > 0:
        from rewardkit.audit.selfgen import own_generation_items

        own = own_generation_items(items, judge.client, args.self_generate, seed=args.seed)
        print(
            f"added {len(own)} items with the judge's own answers "
            f"({sum(it.metadata['own_right'] for it in own)} right)",
            file=sys.stderr,
        )
        items = items + own
    runner = AuditRunner(
        judge, items, out, perturbations=perturbations, concurrency=args.concurrency, progress=not args.no_progress
    )
    register_set(runner.items, name=set_name)  # rlaif runs warn when they reuse these prompts
    summary = runner.run()
    print(
        f"{summary.total} judge tasks: {summary.reused} reused, {summary.judged} judged, {summary.failed} failed",
        file=sys.stderr,
    )
    for error in summary.errors:
        print(f"  failed: {error}", file=sys.stderr)
    extra = {
        "set_name": set_name,
        "gold_check": gold_check,
        "calls": f"{summary.judged} new, {summary.reused} reused, {summary.failed} failed",
    }
    usage = getattr(getattr(judge, "client", None), "report", None)
    if callable(usage):
        try:
            extra["usage"] = usage().model_dump(mode="json")
        except Exception:  # usage accounting is informative only
            logger.debug("no usage report", exc_info=True)
    return _write_outputs(out, args, extra)


def _write_outputs(out: Path, args: argparse.Namespace, extra: dict[str, Any]) -> int:
    import json

    from rewardkit.audit.metrics import compute_metrics
    from rewardkit.audit.report import write_report
    from rewardkit.audit.runner import load_run, load_verdicts

    items, verdicts, manifest = load_run(out)
    info_path = out / "run_info.json"
    if extra:
        info_path.write_text(json.dumps(extra, indent=2))
    elif info_path.exists():
        extra = json.loads(info_path.read_text())
    other = load_verdicts(args.compare) if args.compare else None
    metrics = compute_metrics(
        items, verdicts, self_model=args.self_model or manifest.get("judge"), other=other, n_boot=args.n_boot
    )
    metrics["run"] = {**manifest, **extra}
    paths = write_report(out, metrics)
    for flag in metrics.get("flags", []):
        print(f"[{flag['severity']}] {flag['message']}")
    if not metrics.get("flags"):
        print("no bias flagged")
    print(f"report: {paths['html']}  metrics: {paths['metrics']}  summary: {paths['summary']}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    return _write_outputs(Path(args.run_dir), args, {})


def cmd_make_set(args: argparse.Namespace) -> int:
    from rewardkit.heldout.sets import write_set

    items, _ = load_items(args.set_spec, args.n, args.seed)
    status = ""
    if not args.no_verify:
        items, counts = verified_items(items)
        status = " (gold: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v) + ")"
    digest = write_set(args.out, items)
    print(f"{len(items)} items -> {args.out}{status}; set hash {digest[:16]}")
    return 0


def _warn_leakage(items: Sequence[Any], path: str, column: str) -> int:
    from rewardkit.heldout.leakage import find_leaks

    report = find_leaks(items, path, prompt_column=column)
    if report.leaked:
        print(f"WARNING: {report.message}", file=sys.stderr)
    return len(report.leaked)


def cmd_leakage(args: argparse.Namespace) -> int:
    items, _ = load_items(args.set_spec, None, 0)
    leaked = sum(_warn_leakage(items, path, args.prompt_column) for path in args.against)
    if not leaked:
        print(f"no audit prompt found in {', '.join(args.against)}")
    return 1 if leaked else 0
