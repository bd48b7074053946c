"""Benchmark: pairwise judging against the embedded llama.cpp server (SmolLM2-135M) on 127.0.0.1.

Measures
- judgments/s (one judgment = one pair in both orders) at concurrency 1, 4, 16, without the cache
  and with a warm cache (a rerun: every request is a hit);
- the cost of both-order judging relative to one order: wall time and prompt tokens, and how much
  of the two prompts is a shared prefix (what a prefix-caching server such as vLLM can reuse);
- group (listwise) judging vs pairwise round-robin vs pointwise scale vs likelihood scoring of the same groups
  of G completions: requests, prompt tokens and seconds per completion (``--group-size``, ``--groups``);
- what the second presentation order costs when it follows the first on the server (``--order-pairs``): the
  bundled demo pairs judged one request at a time, each pair's two orders back to back, with the packaged
  template (question after the responses) and with the question moved before them, at the judge's
  ``max_tokens`` (8) and at 1; next to it the likelihood judge, which needs one request per pair and no order.

    python bench/judge.py                 # 8 pairs
    python bench/judge.py --pairs 16 --concurrency 1 4 16 --json out.json
    python bench/judge.py --concurrency 16 --groups 0 --order-pairs 20     # just the order cost
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time

PROMPTS = [
    ("What is 2 + 2?", "4", "5"),
    ("Name the capital of France.", "Paris.", "I do not know."),
    ("Say hello politely.", "Hello, nice to meet you!", "Go away."),
    ("Is the earth flat?", "No, it is roughly a sphere.", "Yes."),
    ("Give a synonym of 'quick'.", "Fast.", "Slow."),
    ("What colour is the sky on a clear day?", "Blue.", "Green."),
    ("How many legs does a spider have?", "Eight.", "Six."),
    ("Translate 'merci' to English.", "Thank you.", "Please."),
]


def pairs(n: int) -> list[tuple[str, str, str]]:
    return [(f"{p} (#{i})", a, b) for i, (p, a, b) in enumerate(PROMPTS * (n // len(PROMPTS) + 1))][:n]


async def judge_all(judge, items) -> float:
    started = time.perf_counter()
    await asyncio.gather(*(judge.ajudge(*item) for item in items))
    elapsed = time.perf_counter() - started
    await judge.client.aclose()
    return elapsed


async def one_order_all(judge, items) -> float:
    started = time.perf_counter()
    await asyncio.gather(*(judge.client.acomplete(judge.messages(p, a, b, None), judge.params) for p, a, b in items))
    elapsed = time.perf_counter() - started
    await judge.client.aclose()
    return elapsed


def shared_prefix_fraction(judge, item) -> float:
    prompt, a, b = item
    ab = json.dumps(judge.messages(prompt, a, b, None))
    ba = json.dumps(judge.messages(prompt, b, a, None))
    common = next((i for i, (x, y) in enumerate(zip(ab, ba, strict=False)) if x != y), min(len(ab), len(ba)))
    return common / len(ab)


GROUP_PROMPTS = [
    ("What is 2 + 2?", ["4", "5", "The answer is 4.", "22", "four", "3", "2 + 2 = 4", "I am not sure."]),
    ("Name the capital of France.", ["Paris.", "Lyon.", "It is Paris.", "France.", "Berlin.", "paris", "Rome.", "?"]),
    ("Say hello politely.", ["Hello!", "Go away.", "Hi, nice to meet you.", "What?", "Hey.", "...", "Hello.", "No."]),
]


async def cost_per_completion(name: str, client, groups, judge_group) -> dict[str, float]:
    started = time.perf_counter()
    await asyncio.gather(*(judge_group(prompt, candidates) for prompt, candidates in groups))
    elapsed = time.perf_counter() - started
    await client.aclose()
    report = client.report()
    n = sum(len(c) for _, c in groups)
    return {
        "method": name,
        "requests_per_completion": report.requests / n,
        "prompt_tokens_per_completion": report.prompt_tokens / n,
        "seconds_per_completion": elapsed / n,
    }


def group_vs_pairwise(make, groups, permutations: int) -> list[dict[str, float]]:
    """The same groups scored three ways; each row is one method's cost per completion."""
    from rewardsmith.judges.group import GroupJudge
    from rewardsmith.judges.pointwise import LikelihoodJudge
    from rewardsmith.judges.rank import RankJudge
    from rewardsmith.judges.scale import ScaleJudge

    rows = []
    client = make()
    group = GroupJudge(client, permutations=permutations)
    rows.append(asyncio.run(cost_per_completion(f"group (k={permutations})", client, groups, group.ajudge)))
    client = make()
    rank = RankJudge(client, method="pairwise")
    rows.append(asyncio.run(cost_per_completion("pairwise round-robin", client, groups, rank.ajudge)))
    client = make()
    scale = ScaleJudge(client, guideline="Is the response correct and helpful?")

    async def pointwise(prompt, candidates):
        return await asyncio.gather(*(scale.ajudge(prompt, c) for c in candidates))

    rows.append(asyncio.run(cost_per_completion("pointwise scale", client, groups, pointwise)))
    client = make()
    likelihood = LikelihoodJudge(client)
    rows.append(asyncio.run(cost_per_completion("likelihood (per group)", client, groups, likelihood.ascore)))
    return rows


#: The packaged pairwise template with the question moved before the responses, so that the two orders of a pair
#: share everything up to the first response.
QUESTION_FIRST = """[system]
You are a careful, impartial judge. You compare two responses to the same prompt and answer with a single letter.
[user]
{{ question or "Which response is more helpful, honest and harmless?" }}
Consider the following prompt and two possible responses.

Prompt:
{{ prompt }}

Response (A):
{{ first }}

Response (B):
{{ second }}

Answer with a single letter: A or B.
"""


def demo_pairs(n: int) -> list[tuple[str, str, str, str]]:
    """The bundled demo pairs (prompt, a, b, sampled principle), as ``rlaif pairs --demo`` judges them."""
    from rewardsmith.constitutions.loader import load_constitution
    from rewardsmith.constitutions.pairs import PairsConfig, pair_tasks, sample_principles
    from rewardsmith.constitutions.prompts import demo_prompts_path, read_prompt_items

    constitution = load_constitution("helpful-harmless")
    tasks = pair_tasks(read_prompt_items(demo_prompts_path(), responses_column="responses"), PairsConfig())
    rows = []
    for task in tasks[:n]:
        principle = sample_principles(constitution, task.key, 0, 1)[0]
        rows.append((task.item.text, task.response_a, task.response_b, principle.comparison))
    return rows


def order_cost(make, items, template_dir: str) -> list[dict[str, object]]:
    """Seconds of each pair's first and second order, requested back to back, one request at a time."""
    from rewardsmith.judges.pairwise import PairwiseJudge
    from rewardsmith.judges.parsing import option_distribution
    from rewardsmith.judges.pointwise import LikelihoodJudge

    question_first = os.path.join(template_dir, "pairwise_question_first.jinja")
    with open(question_first, "w", encoding="utf-8") as handle:
        handle.write(QUESTION_FIRST)
    rows = []
    for name, template in (("question last (packaged)", "pairwise"), ("question first", question_first)):
        for max_tokens in (8, 1):
            client = make()
            judge = PairwiseJudge(client, template=template, max_tokens=max_tokens)
            first_s, second_s, letter_first = [], [], 0
            for round_ in range(2):  # two rounds, each prompt marked so no request repeats an earlier one
                for prompt, a, b, question in items:
                    prompt = f"{prompt}\n(round {round_}, {name}, {max_tokens})"
                    for times, (x, y) in ((first_s, (a, b)), (second_s, (b, a))):
                        started = time.perf_counter()
                        result = client.complete(judge.messages(prompt, x, y, question), judge.params)
                        times.append(time.perf_counter() - started)
                        found = option_distribution(result.logprobs, ("A", "B"))
                        letter_first += found is not None and found[1] == 0
            first, second = statistics.median(first_s), statistics.median(second_s)
            rows.append({
                "template": name, "max_tokens": max_tokens, "first_order_s": first, "second_order_s": second,
                "both_over_one": (first + second) / first, "letter_is_first_token": letter_first / (2 * len(first_s)),
            })  # fmt: skip
    client = make()
    likelihood = LikelihoodJudge(client)
    per_pair = []
    for prompt, a, b, question in items:
        started = time.perf_counter()
        likelihood.judge(f"{prompt}\n(likelihood)", a, b, question=question)
        per_pair.append(time.perf_counter() - started)
    rows.append({"template": "likelihood judge (no orders)", "max_tokens": 0,
                 "first_order_s": statistics.median(per_pair), "second_order_s": 0.0, "both_over_one": 1.0,
                 "letter_is_first_token": None})  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--group-size", type=int, default=4, help="completions per group (G) for the group bench")
    parser.add_argument("--groups", type=int, default=3, help="groups for the group bench (0 skips it)")
    parser.add_argument("--permutations", type=int, default=2, help="presentations per group (k)")
    parser.add_argument("--prompt-cache", action="store_true", help="start llama.cpp with its RAM prompt cache")
    parser.add_argument("--order-pairs", type=int, default=0, help="demo pairs for the order-cost bench (0 skips it)")
    args = parser.parse_args(argv)

    from rewardsmith.judges.clients.embedded import EmbeddedServer, llama_server_missing
    from rewardsmith.judges.clients.factory import make_client
    from rewardsmith.judges.pairwise import PairwiseJudge

    missing = llama_server_missing()
    if missing:
        print(f"bench/judge.py needs the llama.cpp server: {missing}", file=sys.stderr)
        return 2
    items = pairs(args.pairs)
    results: dict[str, object] = {
        "pairs": len(items), "model": None, "prompt_cache": args.prompt_cache, "by_concurrency": []
    }  # fmt: skip
    with EmbeddedServer(prompt_cache=args.prompt_cache) as server, tempfile.TemporaryDirectory() as cache_root:
        results["model"] = server.model

        def client(concurrency: int, cache_dir: str | None = None):
            return make_client(
                "openai", model=server.model, base_url=server.base_url, concurrency=concurrency, cache_dir=cache_dir
            )

        asyncio.run(judge_all(PairwiseJudge(client(2)), items[:2]))  # warm-up: model pages, HTTP connection
        for concurrency in args.concurrency:
            cache_dir = os.path.join(cache_root, f"c{concurrency}")
            cold_client = client(concurrency, cache_dir)
            cold = asyncio.run(judge_all(PairwiseJudge(cold_client), items))
            warm_client = client(concurrency, cache_dir)
            warm = asyncio.run(judge_all(PairwiseJudge(warm_client), items))
            row = {
                "concurrency": concurrency,
                "judgments_per_s_uncached": len(items) / cold,
                "judgments_per_s_cached": len(items) / warm,
                "cache_hits_on_rerun": warm_client.report().cache_hits,
                "requests_on_rerun": warm_client.report().requests,
            }
            results["by_concurrency"].append(row)
            print(
                f"concurrency {concurrency:>2}: {row['judgments_per_s_uncached']:7.2f} judgments/s uncached, "
                f"{row['judgments_per_s_cached']:9.1f} cached ({row['requests_on_rerun']} requests on rerun)",
                flush=True,
            )

        concurrency = max(args.concurrency)
        one_client, both_client = client(concurrency), client(concurrency)
        one_judge, both_judge = PairwiseJudge(one_client), PairwiseJudge(both_client)
        one = asyncio.run(one_order_all(one_judge, items))
        both = asyncio.run(judge_all(both_judge, items))
        results["both_orders"] = {
            "wall_time_ratio": both / one,
            "prompt_token_ratio": both_client.report().prompt_tokens / max(1, one_client.report().prompt_tokens),
            "shared_prefix_fraction": shared_prefix_fraction(both_judge, items[0]),
        }
        print(
            f"both orders vs one (concurrency {concurrency}): wall time x{both / one:.2f}, "
            f"prompt tokens x{results['both_orders']['prompt_token_ratio']:.2f}; "
            f"{results['both_orders']['shared_prefix_fraction']:.0%} of the prompt is a prefix shared by both orders"
        )
        if args.groups:
            groups = [(p, c[: args.group_size]) for p, c in (GROUP_PROMPTS * args.groups)[: args.groups]]
            groups = [(f"{p} (#{i})", c) for i, (p, c) in enumerate(groups)]
            rows = group_vs_pairwise(lambda: client(max(args.concurrency)), groups, args.permutations)
            results["group_vs_pairwise"] = {"group_size": args.group_size, "groups": len(groups), "rows": rows}
            for row in rows:
                print(
                    f"G={args.group_size} {row['method']:<22} {row['requests_per_completion']:5.2f} requests, "
                    f"{row['prompt_tokens_per_completion']:7.1f} prompt tokens, "
                    f"{row['seconds_per_completion']:6.3f} s per completion",
                    flush=True,
                )
        if args.order_pairs:
            rows = order_cost(lambda: client(1), demo_pairs(args.order_pairs), cache_root)
            results["order_cost"] = {"pairs": args.order_pairs, "rows": rows}
            for row in rows:
                letter = row["letter_is_first_token"]
                print(
                    f"{row['template']:<28} max_tokens {row['max_tokens']}: first order {row['first_order_s']:.3f} s, "
                    f"second {row['second_order_s']:.3f} s, both/one x{row['both_over_one']:.2f}"
                    + ("" if letter is None else f", letter is the first token in {letter:.0%}"),
                    flush=True,
                )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(results, handle, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
