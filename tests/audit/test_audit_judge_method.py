"""An audit directory records how its judge judged (letter or likelihood); a rerun whose judge changed method
is refused, and a directory recorded before the method was part of the settings still resumes unchanged."""

from __future__ import annotations

import json

import pytest

from rewardsmith.audit.generators import generate_set
from rewardsmith.audit.runner import MANIFEST_FILE, AuditRunner
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.pointwise import ContinuationScore, LikelihoodJudge, LikelihoodScores


class Likelihoods:
    """Log-likelihoods from the responses' lengths, under the letter judge's model name."""

    model = "fault-judge"

    def loglikelihood(self, messages, continuations):
        return LikelihoodScores(scores=[ContinuationScore(logprob=-float(len(c)), tokens=1) for c in continuations])


def judges(server):
    client = make_client("openai", model="fault-judge", base_url=server.base_url, timeout=10, max_retries=0)
    return {"pairwise": PairwiseJudge(client, use_logprobs=False), "likelihood": LikelihoodJudge(Likelihoods())}


def recorded_before_the_method(out):
    """``run.json`` as a run made before the method was recorded wrote it."""
    path = out / MANIFEST_FILE
    manifest = json.loads(path.read_text())
    del manifest["judge_settings"]["method"]
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize(("method", "other"), [("pairwise", "likelihood"), ("likelihood", "pairwise")])
def test_a_judge_that_changed_method_is_refused_also_in_an_older_run(tmp_path, fault_server, method, other):
    built = judges(fault_server)
    assert built[method].model == built[other].model  # the model name alone does not tell them apart
    items = generate_set("math", 2, seed=0)
    out = tmp_path / "run"
    assert AuditRunner(built[method], items, out, progress=False).run().judged == 2
    settings = json.loads((out / MANIFEST_FILE).read_text())["judge_settings"]
    assert settings["method"] == method
    sent = len(fault_server.requests)
    with pytest.raises(ValueError, match="configured otherwise"):
        AuditRunner(built[other], items, out, progress=False).run()

    recorded_before_the_method(out)
    with pytest.raises(ValueError, match="configured otherwise"):
        AuditRunner(built[other], items, out, progress=False).run()
    assert len(fault_server.requests) == sent  # refused before judging anything
    summary = AuditRunner(built[method], items, out, progress=False).run()  # the same judge resumes
    assert (summary.reused, summary.judged) == (2, 0)
    assert json.loads((out / MANIFEST_FILE).read_text())["judge_settings"] == settings  # now with the method
