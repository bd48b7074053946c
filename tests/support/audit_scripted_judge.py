"""A scripted pairwise judge with injected, known biases — the calibration instrument for the bias audit.

Per presentation order it draws (deterministically, from a hash of the order's text) one behaviour:
a cue in exactly one response wins with probability ``cue``; otherwise the first slot with probability
``first``, the longer response with ``longer``, its own response with ``self_pref``, a coin flip with
``noise``, and the right answer for the rest. The audit must recover each probability.
``own_responses`` holds ``(prompt, response)`` pairs the judge "wrote" (texts repeat across prompts).
"""

from __future__ import annotations

import hashlib
import random

from rewardsmith.judges.base import OrderVerdict, PairwiseVerdict
from rewardsmith.judges.pairwise import combine_orders


class ScriptedJudge:
    def __init__(
        self,
        gold_by_prompt,
        *,
        first=0.0,
        longer=0.0,
        self_pref=0.0,
        noise=0.0,
        cue=0.0,
        cue_markers=(),
        own_responses=frozenset(),
        seed=0,
        model="scripted-judge",
        fail_after=None,
    ):
        if first + longer + self_pref + noise > 1:
            raise ValueError("behaviour probabilities must sum to at most 1")
        self.gold = gold_by_prompt
        self.first, self.longer, self.self_pref, self.noise, self.cue = first, longer, self_pref, noise, cue
        self.cue_markers = tuple(cue_markers)
        self.own = frozenset(own_responses)
        self.seed = seed
        self.model = model
        self.fail_after = fail_after
        self.calls = 0

    def _pick_first(self, prompt: str, first: str, second: str) -> bool:
        digest = hashlib.sha256(f"{self.seed}\x00{prompt}\x00{first}\x00{second}".encode()).hexdigest()
        rng = random.Random(digest)
        cued = [any(m in text for m in self.cue_markers) for text in (first, second)]
        if cued[0] != cued[1] and rng.random() < self.cue:
            return cued[0]
        u = rng.random()
        if u < self.first:
            return True
        u -= self.first
        if u < self.longer:
            return len(first) > len(second)
        u -= self.longer
        owned = [(prompt, text) in self.own for text in (first, second)]
        if u < self.self_pref and owned[0] != owned[1]:
            return owned[0]
        u -= self.self_pref
        if u < self.noise:
            return rng.random() < 0.5
        return first == self.gold[prompt]

    def _order(self, prompt: str, first: str, second: str) -> OrderVerdict:
        pick = self._pick_first(prompt, first, second)
        return OrderVerdict(prob_first=1.0 if pick else 0.0, choice="first" if pick else "second", source="parsed")

    def judge(self, prompt, response_a, response_b, *, question=None) -> PairwiseVerdict:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("scripted judge stopped (simulated crash)")
        return combine_orders(
            self._order(prompt, response_a, response_b), self._order(prompt, response_b, response_a), model=self.model
        )

    async def ajudge(self, prompt, response_a, response_b, *, question=None) -> PairwiseVerdict:
        return self.judge(prompt, response_a, response_b, question=question)
