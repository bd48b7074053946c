"""Re-score stored rollouts with a reward spec and say what changed: the runner under ``rewardsmith rescore``.

When a verifier fix lands mid-project the question is "which of the rewards my run trained on were wrong?". This
scores the stored completions again with the spec as it is now, writes every new verdict beside the stored one
(appended per batch, so a killed run resumes), and diffs them per row and per term: ``down`` (paid before, less
now: 1 -> 0 for a binary reward), ``up`` (0 -> 1), ``now_unscorable`` and ``now_scorable``, each with both reasons.
``--max-flips`` turns the diff into a gate for CI ("I changed my verifier: did more than N verdicts move?").

Reading the stored layouts is :mod:`rewardsmith.rollouts`; scoring is the spec's own combined reward, the same
object the trainers get.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from rewardsmith.rollouts import FORMATS, RolloutFormat, StoredRollout, detect_format, read_rollouts

#: how a verdict moved: the four that count as flips, then the two that do not
FLIP_KINDS = ("down", "up", "now_unscorable", "now_scorable")
STEADY_KINDS = ("same", "unscorable_both")
#: two scores closer than this are the same verdict (float noise in a weighted sum is not a flip)
SAME_WITHIN = 1e-9

RESCORED_FILE = "rescored.jsonl"
DIFF_FILE = "flips.jsonl"
SUMMARY_FILE = "summary.md"
REPORT_FILE = "report.html"


class RescoreOptions(BaseModel):
    """What to re-score and how (the command line's options, validated once)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    spec: Path
    data: Path = Field(description="a stored rollout file, or a folder of them (TRL's completions/ folder)")
    out: Path
    format: RolloutFormat | None = Field(None, description="the stored layout; detected from the columns when unset")
    only: Literal["all", "unscorable"] = Field("all", description="'unscorable': only rows stored as unscorable")
    reason_matches: str | None = Field(None, description="only rows whose stored reason matches this regex")
    rename: dict[str, str] = Field(default_factory=dict, description="stored column -> the name the spec reads")
    gold_file: Path | None = Field(None, description="a dataset whose columns are joined to the rows")
    join_on: str | None = Field(None, description="the column that matches rows to gold_file's rows")
    completion_column: str = "completion"
    batch_size: int = Field(64, ge=1)
    max_flips: int | None = Field(None, ge=0)
    overwrite: bool = False


@dataclass
class Verdict:
    """One row's stored and new verdicts (one line of ``rescored.jsonl``)."""

    row_index: int
    stored_score: float | None
    stored_reason: str
    stored_terms: dict[str, float | None]
    new_score: float | None
    new_reason: str
    new_terms: dict[str, float | None]

    def as_record(self, scorer: str) -> dict[str, Any]:
        return {
            "row_index": self.row_index,
            "scorer": scorer,
            **{k: v for k, v in vars(self).items() if k != "row_index"},
        }


@dataclass
class RescoreOutcome:
    """Counts per kind overall and per term, the flipped rows, and where everything was written."""

    rows: int
    rescored: int
    resumed: int
    overall: Counter[str]
    per_term: dict[str, Counter[str]]
    flips: list[dict[str, Any]]
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def flip_count(self) -> int:
        return sum(self.overall[k] for k in FLIP_KINDS)

    def summary_line(self) -> str:
        moved = ", ".join(f"{self.overall[k]} {k}" for k in FLIP_KINDS)
        return f"{self.rescored} rows rescored ({self.resumed} resumed): {self.flip_count} flipped ({moved})"


def classify(stored: float | None, new: float | None) -> str:
    """How a verdict moved from ``stored`` to ``new`` (one of :data:`FLIP_KINDS` or :data:`STEADY_KINDS`)."""
    if stored is None and new is None:
        return "unscorable_both"
    if stored is None:
        return "now_scorable"
    if new is None:
        return "now_unscorable"
    if abs(new - stored) <= SAME_WITHIN:
        return "same"
    return "up" if new > stored else "down"


def weighted_total(terms: Mapping[str, float | None], weights: Mapping[str, float]) -> float | None:
    """The total a trainer paid from per-term rewards (TRL stores no total): the spec's rule, ``sum w_i r_i`` over
    the terms that scored, ``None`` when none did."""
    scored = [weights[name] * score for name, score in terms.items() if score is not None and name in weights]
    return sum(scored) if scored else None


def rescore(options: RescoreOptions, *, progress: bool = True) -> RescoreOutcome:
    """Re-score the rows ``options`` select, resume what ``options.out`` already holds, write the diff and reports."""
    from tqdm import tqdm

    from rewardsmith.adapters.spec import load_spec
    from rewardsmith.store import append_jsonl

    spec = load_spec(options.spec)
    terms = spec.reward_funcs()
    term_names = [t.__name__ for t in terms]
    weights = dict(zip(term_names, spec.reward_weights(), strict=True))
    combined = spec.combined()
    rows, fmt = load_stored(options)
    stored = read_rollouts(rows, fmt, term_names=term_names, completion_column=options.completion_column)
    attach_columns(stored, options, fmt, tuple(combined.gold_columns))
    if fmt == "trl":
        for rollout in stored:
            if set(term_names) <= set(rollout.terms):
                rollout.score = weighted_total(rollout.terms, weights)
    selected = select_rows(stored, options)

    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / RESCORED_FILE
    if options.overwrite:
        log.unlink(missing_ok=True)
    scorer = scorer_id(options, fmt)
    done = previous_verdicts(log, scorer, len(stored))
    if done:
        print(f"resuming: {len(done)} of {len(selected)} selected rows already rescored in {log}")
    pending = [i for i in selected if i not in done]
    bar = tqdm(total=len(selected), initial=len(selected) - len(pending), desc="rescoring", unit="row",
               disable=None if progress else True)  # fmt: skip
    with bar:
        for start in range(0, len(pending), options.batch_size):
            indices = pending[start : start + options.batch_size]
            verdicts = score_rows(combined, term_names, [stored[i] for i in indices], indices)
            append_jsonl(log, [v.as_record(scorer) for v in verdicts])
            for v in verdicts:
                done[v.row_index] = v
            bar.update(len(indices))
    ordered = [done[i] for i in selected if i in done]
    outcome = diff(ordered, term_names, rows=len(stored), resumed=len(selected) - len(pending), stored=stored)
    outcome.paths = write_reports(outcome, out, options)
    return outcome


def load_stored(options: RescoreOptions) -> tuple[list[dict[str, Any]], RolloutFormat]:
    """The stored rows (every file of a folder, in name order) and their layout."""
    from rewardsmith.data import read_records

    data = Path(options.data)
    if data.is_dir():
        files = sorted(p for p in data.iterdir() if p.suffix.lower() in {".jsonl", ".json", ".parquet"})
        if not files:
            raise ValueError(f"{data}: no .jsonl, .json or .parquet files to rescore")
    else:
        files = [data]
    rows: list[dict[str, Any]] = []
    for path in files:
        rows.extend(read_records(path))
    if not rows:
        raise ValueError(f"{data}: no rows to rescore")
    fmt = options.format or detect_format(files[0], list(rows[0]))
    return rows, fmt


def attach_columns(
    stored: Sequence[StoredRollout], options: RescoreOptions, fmt: RolloutFormat, gold: tuple[str, ...]
) -> None:
    """Give every row the columns the spec reads: ``--rename``, verl's ``gts``, a joined ``--gold-file``; a column
    still missing is one error naming the two ways to supply it."""
    joined = _gold_index(options) if options.gold_file is not None else None
    for rollout in stored:
        for before, after in options.rename.items():
            if before in rollout.columns:
                rollout.columns[after] = rollout.columns.pop(before)
        if fmt == "verl" and "gts" in rollout.columns and len(gold) == 1 and gold[0] not in rollout.columns:
            rollout.columns[gold[0]] = rollout.columns["gts"]  # verl's ground truth is the one gold column
        if joined is not None:
            key = rollout.columns.get(options.join_on or "")
            match = joined.get(_key(key))
            if match is None:
                raise ValueError(
                    f"--gold-file {options.gold_file}: no row whose {options.join_on!r} is {str(key)[:80]!r}"
                )
            for name, value in match.items():
                rollout.columns.setdefault(name, value)
    if stored:
        missing = [c for c in gold if c not in stored[0].columns]
        if missing:
            have = sorted(stored[0].columns)
            raise ValueError(
                f"the spec reads column(s) {missing} that the stored rows lack (they have {have}): map one with "
                f"--rename STORED={missing[0]} or join a dataset with --gold-file FILE --join-on COLUMN"
            )


def _gold_index(options: RescoreOptions) -> dict[str, dict[str, Any]]:
    from rewardsmith.data import read_records

    if not options.join_on:
        raise ValueError("--gold-file needs --join-on COLUMN (the column both files share, e.g. prompt)")
    index: dict[str, dict[str, Any]] = {}
    for row in read_records(options.gold_file):  # type: ignore[arg-type]
        if options.join_on not in row:
            raise ValueError(f"--gold-file {options.gold_file}: no column {options.join_on!r}")
        index.setdefault(_key(row[options.join_on]), row)
    return index


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def select_rows(stored: Sequence[StoredRollout], options: RescoreOptions) -> list[int]:
    """Positions of the rows to rescore: all, or those stored unscorable, or those whose reason matches."""
    pattern = re.compile(options.reason_matches) if options.reason_matches else None
    chosen = []
    for index, rollout in enumerate(stored):
        if options.only == "unscorable" and rollout.score is not None:
            continue
        if pattern is not None and not pattern.search(rollout.reason):
            continue
        chosen.append(index)
    return chosen


def score_rows(
    combined: Any, term_names: list[str], rows: Sequence[StoredRollout], indices: list[int]
) -> list[Verdict]:
    """New verdicts for ``rows`` from the spec's combined reward (its per-term components when it has several)."""
    completions = [r.completion for r in rows]
    names = sorted({k for r in rows for k in r.columns})
    columns = {k: [r.columns.get(k) for r in rows] for k in names}
    results = combined.details(completions, **columns)
    verdicts = []
    for index, rollout, result in zip(indices, rows, results, strict=True):
        components = result.model_dump().get("components")
        new_terms = dict(components) if isinstance(components, Mapping) else {term_names[0]: result.score}
        verdicts.append(
            Verdict(
                row_index=index,
                stored_score=rollout.score,
                stored_reason=rollout.reason,
                stored_terms=rollout.terms,
                new_score=result.score,
                new_reason=result.reason,
                new_terms=new_terms,
            )
        )
    return verdicts


def diff(
    verdicts: Sequence[Verdict], term_names: Sequence[str], *, rows: int, resumed: int, stored: Sequence[StoredRollout]
) -> RescoreOutcome:
    """Counts of each kind of move, overall and per term (where the stored file kept the term), and the flips."""
    overall: Counter[str] = Counter()
    per_term: dict[str, Counter[str]] = {name: Counter() for name in term_names}
    flips = []
    for v in verdicts:
        kind = classify(v.stored_score, v.new_score)
        overall[kind] += 1
        moved_terms = {}
        for name in term_names:
            if name not in v.stored_terms:
                continue
            term_kind = classify(v.stored_terms[name], v.new_terms.get(name))
            per_term[name][term_kind] += 1
            if term_kind in FLIP_KINDS:
                moved_terms[name] = {"kind": term_kind, "stored": v.stored_terms[name], "new": v.new_terms.get(name)}
        if kind in FLIP_KINDS or moved_terms:
            completion = stored[v.row_index].completion
            flips.append(
                {
                    "row_index": v.row_index,
                    "kind": kind,
                    "stored_score": v.stored_score,
                    "new_score": v.new_score,
                    "stored_reason": v.stored_reason,
                    "new_reason": v.new_reason,
                    "terms": moved_terms,
                    "completion": completion if isinstance(completion, str) else json.dumps(completion, default=str),
                }
            )
    per_term = {name: counts for name, counts in per_term.items() if counts}
    return RescoreOutcome(
        rows=rows, rescored=len(verdicts), resumed=resumed, overall=overall, per_term=per_term, flips=flips
    )


def scorer_id(options: RescoreOptions, fmt: str) -> str:
    """What produced the new verdicts: the spec file's bytes and the options that change a verdict."""
    blob = json.dumps(
        [
            Path(options.spec).read_bytes().decode("utf-8", "replace"),
            fmt,
            options.rename,
            str(options.gold_file),
            options.join_on,
            options.completion_column,
        ],
        sort_keys=True,
    )
    return "rescore@" + hashlib.sha256(blob.encode()).hexdigest()[:12]


def previous_verdicts(log: Path, scorer: str, rows: int) -> dict[int, Verdict]:
    """Verdicts an earlier run wrote to ``log``; one written by another spec or layout is refused, not mixed."""
    from rewardsmith.store import read_appended_jsonl

    done: dict[int, Verdict] = {}
    for lineno, record in enumerate(read_appended_jsonl(log), start=1):
        index = record.get("row_index")
        if record.get("scorer") != scorer:
            raise ValueError(
                f"{log}: line {lineno} was rescored with another spec or options ({record.get('scorer')!r}); "
                "use --overwrite or another --out"
            )
        if not isinstance(index, int) or not 0 <= index < rows:
            raise ValueError(f"{log}: line {lineno} is not a verdict of these rows; use --overwrite or another --out")
        verdict = Verdict(
            row_index=index,
            stored_score=record.get("stored_score"),
            stored_reason=str(record.get("stored_reason") or ""),
            stored_terms=dict(record.get("stored_terms") or {}),
            new_score=record.get("new_score"),
            new_reason=str(record.get("new_reason") or ""),
            new_terms=dict(record.get("new_terms") or {}),
        )
        done.setdefault(index, verdict)
    return done


def write_reports(outcome: RescoreOutcome, out: Path, options: RescoreOptions) -> dict[str, Path]:
    """``flips.jsonl`` (one line per moved row), ``summary.md`` and ``report.html``."""
    from rewardsmith.store import append_jsonl

    flips = out / DIFF_FILE
    flips.unlink(missing_ok=True)
    append_jsonl(flips, outcome.flips)
    flips.touch()
    summary = out / SUMMARY_FILE
    summary.write_text(summary_markdown(outcome, options), encoding="utf-8")
    report = out / REPORT_FILE
    report.write_text(report_html(outcome, options), encoding="utf-8")
    return {"rescored": out / RESCORED_FILE, "flips": flips, "summary": summary, "report": report}


def _count_rows(outcome: RescoreOutcome) -> list[tuple[str, Counter[str]]]:
    return [("overall", outcome.overall), *outcome.per_term.items()]


def summary_markdown(outcome: RescoreOutcome, options: RescoreOptions) -> str:
    kinds = (*FLIP_KINDS, *STEADY_KINDS)
    lines = [
        f"# Rescore of {options.data} with {options.spec}",
        "",
        outcome.summary_line() + ".",
        "",
        "| verdict | " + " | ".join(kinds) + " |",
        "|---|" + "---|" * len(kinds),
    ]
    lines += [f"| {name} | " + " | ".join(str(c[k]) for k in kinds) + " |" for name, c in _count_rows(outcome)]
    if options.max_flips is not None:
        verdict = "over" if outcome.flip_count > options.max_flips else "within"
        lines += ["", f"{outcome.flip_count} flips: {verdict} --max-flips {options.max_flips}."]
    return "\n".join(lines) + "\n"


def report_html(outcome: RescoreOutcome, options: RescoreOptions, shown: int = 500) -> str:
    """A self-contained page: the counts table, then the flipped rows with both verdicts and both reasons."""
    esc = html.escape
    kinds = (*FLIP_KINDS, *STEADY_KINDS)
    head = "".join(f"<th>{k}</th>" for k in kinds)
    counts = "".join(
        f"<tr><th>{esc(name)}</th>" + "".join(f"<td>{c[k]}</td>" for k in kinds) + "</tr>"
        for name, c in _count_rows(outcome)
    )
    flip_rows = "".join(_flip_row(f) for f in outcome.flips[:shown])
    more = f"<p>{len(outcome.flips) - shown} more in {DIFF_FILE}.</p>" if len(outcome.flips) > shown else ""
    gate = ""
    if options.max_flips is not None:
        over = outcome.flip_count > options.max_flips
        gate = f"<p class='{'over' if over else 'ok'}'>{outcome.flip_count} flips, --max-flips {options.max_flips}</p>"
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>rescore: {esc(str(options.data))}</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;
padding:4px 8px;vertical-align:top}}pre{{white-space:pre-wrap;max-width:40em;margin:0}}.down,.over{{color:#b00}}
.up,.ok{{color:#070}}.now_unscorable{{color:#a60}}</style></head><body>
<h1>Rescore of {esc(str(options.data))}</h1>
<p>spec {esc(str(options.spec))} &middot; {esc(outcome.summary_line())}</p>{gate}
<table><tr><th>verdict</th>{head}</tr>{counts}</table>
<h2>Flipped rows</h2>
<table><tr><th>row</th><th>kind</th><th>stored &rarr; new</th><th>terms moved</th><th>stored reason</th>
<th>new reason</th><th>completion</th></tr>{flip_rows}</table>{more}
</body></html>
"""


def _flip_row(flip: dict[str, Any]) -> str:
    esc = html.escape
    terms = ", ".join(f"{name}: {moved['kind']}" for name, moved in flip["terms"].items())
    cells = [
        str(flip["row_index"]),
        f"<span class='{esc(flip['kind'])}'>{esc(flip['kind'])}</span>",
        f"{esc(str(flip['stored_score']))} &rarr; {esc(str(flip['new_score']))}",
        esc(terms),
        esc(flip["stored_reason"][:400]),
        esc(flip["new_reason"][:400]),
        f"<pre>{esc(flip['completion'][:600])}</pre>",
    ]
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


__all__ = ["FORMATS", "RescoreOptions", "RescoreOutcome", "classify", "rescore", "weighted_total"]
