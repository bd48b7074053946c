"""Mini-trainer losses: hand-computed verdict tables, then the same batch through TRL 1.16's trainers."""

from __future__ import annotations

import math
import tempfile
from types import SimpleNamespace

import pytest

from tests.support.extras import require_extras

require_extras("trl")

import torch

from rewardsmith.adapters.mini.batching import Encoded
from rewardsmith.adapters.mini.dpo import dpo_loss, ipo_loss
from rewardsmith.adapters.mini.grpo import combine_rewards, completion_logps, group_advantages, grpo_loss
from rewardsmith.adapters.mini.kto import kl_estimate, kto_loss
from rewardsmith.adapters.mini.logprobs import per_token_logps, sequence_logps
from rewardsmith.adapters.mini.orpo import odds_ratio_term, orpo_loss
from tests.support.trl_helpers import tiny_config


def t(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def softplus(x: float) -> float:
    return math.log1p(math.exp(x))


# -- hand-computed values -------------------------------------------------------------------------
# (chosen, rejected, ref_chosen, ref_rejected, beta, smoothing, expected); margin h = (c - rc) - (r - rr)
DPO_TABLE = [
    (-1.0, -2.0, -1.5, -1.5, 0.5, 0.0, softplus(-0.5)),  # h = 1 -> -log s(0.5)
    (-1.0, -2.0, -1.5, -1.5, 0.5, 0.1, 0.9 * softplus(-0.5) + 0.1 * softplus(0.5)),
    (-3.0, -3.0, -3.0, -3.0, 0.1, 0.0, math.log(2)),  # policy == reference
    (-2.0, -1.0, -1.5, -1.5, 1.0, 0.0, softplus(1.0)),  # prefers the rejected answer
]


@pytest.mark.parametrize(("c", "r", "rc", "rr", "beta", "eps", "expected"), DPO_TABLE)
def test_dpo_loss_hand_values(c, r, rc, rr, beta, eps, expected):
    assert float(dpo_loss(t(c), t(r), t(rc), t(rr), beta, eps)) == pytest.approx(expected, abs=1e-9)


# (beta, chosen_len, rejected_len, expected) for h = 1 in sums (chosen ratio +0.5, rejected ratio -0.5)
IPO_TABLE = [
    (0.5, None, None, 0.0),  # (1 - 1/(2*0.5))^2
    (0.25, None, None, 1.0),  # (1 - 2)^2
    (0.5, 2.0, 4.0, (0.25 + 0.125 - 1.0) ** 2),  # per-token averages 0.5/2 and -0.5/4
]


@pytest.mark.parametrize(("beta", "lc", "lr", "expected"), IPO_TABLE)
def test_ipo_loss_hand_values(beta, lc, lr, expected):
    lengths = (t(lc), t(lr)) if lc is not None else (None, None)
    got = ipo_loss(t(-1.0), t(-2.0), t(-1.5), t(-1.5), beta, *lengths)
    assert float(got) == pytest.approx(expected, abs=1e-9)


def test_kto_loss_hand_values():
    # log-ratios +1 (desirable) and -1 (undesirable), z = 0.5, beta = 1
    losses = kto_loss(t(-1.0, -3.0), t(-2.0, -2.0), torch.tensor([True, False]), 0.5, beta=1.0)
    expected = [1 - 1 / (1 + math.exp(-0.5)), 1 - 1 / (1 + math.exp(-1.5))]
    assert losses.tolist() == pytest.approx(expected, abs=1e-9)
    weighted = kto_loss(t(-1.0, -3.0), t(-2.0, -2.0), torch.tensor([True, False]), 0.5, 1.0, 2.0, 0.5)
    assert weighted.tolist() == pytest.approx([2 * expected[0], 0.5 * expected[1]], abs=1e-9)


def test_kto_kl_estimate_is_clamped_and_detached():
    logps = t(-1.0, -2.0).requires_grad_()
    assert float(kl_estimate(logps, t(-1.5, -1.5))) == pytest.approx(0.0)  # mean 0
    assert float(kl_estimate(logps, t(-3.0, -3.0))) == pytest.approx(1.5)
    assert float(kl_estimate(logps, t(0.0, 0.0))) == 0.0  # negative mean clamped
    assert not kl_estimate(logps, t(-3.0, -3.0)).requires_grad


def test_orpo_loss_hand_values():
    a_w, a_l = -0.5, -1.0
    log_odds = (a_w - a_l) - (math.log(1 - math.exp(a_w)) - math.log(1 - math.exp(a_l)))
    term = -softplus(-log_odds)  # log sigmoid
    assert float(odds_ratio_term(t(a_w), t(a_l))) == pytest.approx(term, abs=1e-6)
    assert float(orpo_loss(torch.tensor(2.0), t(a_w), t(a_l), 0.1)) == pytest.approx(2.0 - 0.1 * term, abs=1e-6)
    # a chosen answer more likely than the rejected one lowers the loss
    nll = torch.tensor(2.0)
    assert float(orpo_loss(nll, t(-0.2), t(-3.0), 0.1)) < float(orpo_loss(nll, t(-3.0), t(-0.2), 0.1))


def test_combine_rewards_skips_unscorable_terms():
    table = torch.tensor([[1.0, math.nan], [math.nan, math.nan], [0.5, 1.0]])
    out = combine_rewards(table, [1.0, 0.5])
    assert out[0].item() == 1.0 and math.isnan(out[1].item()) and out[2].item() == pytest.approx(1.0)


def test_group_advantages_hand_values():
    adv = group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]), 4)
    std = math.sqrt(4 * 0.25 / 3)  # unbiased std of [1, 0, 0, 1]
    a = 0.5 / (std + 1e-4)
    assert adv[:4].tolist() == pytest.approx([a, -a, -a, a], abs=1e-6)
    assert adv[4:].tolist() == [0.0] * 4  # a group that agrees teaches nothing
    unscaled = group_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]), 4, scale="none")
    assert unscaled.tolist() == pytest.approx([0.5, -0.5, -0.5, 0.5])
    with_nan = group_advantages(torch.tensor([1.0, math.nan, 0.0, 0.5]), 4, scale="none")
    assert with_nan.tolist() == pytest.approx([0.5, 0.0, -0.5, 0.0])  # NaN: out of the baseline, advantage 0


def test_grpo_loss_aggregations_hand_values():
    mask = torch.tensor([[1.0, 0, 0], [1, 1, 1]])
    logps = torch.zeros(2, 3)
    adv = torch.tensor([1.0, -1.0])  # per-token losses: seq1 [-1], seq2 [1, 1, 1]
    seq, _ = grpo_loss(logps, logps, adv, mask, aggregation="sequence_mean")
    tok, _ = grpo_loss(logps, logps, adv, mask, aggregation="token_mean")
    dr, _ = grpo_loss(logps, logps, adv, mask, aggregation="dr_grpo", max_completion_length=4)
    assert (float(seq), float(tok), float(dr)) == pytest.approx((0.0, 0.5, 0.25))


def test_grpo_loss_clipping_and_kl_hand_values():
    mask = torch.ones(1, 1)
    old, new = torch.zeros(1, 1), torch.full((1, 1), math.log(1.5))  # ratio 1.5
    up, stats = grpo_loss(new, old, torch.tensor([1.0]), mask, epsilon_low=0.2, epsilon_high=0.2)
    assert float(up) == pytest.approx(-1.2) and stats["clip_ratio"] == 1.0  # gain capped at 1 + eps
    down, stats = grpo_loss(new, old, torch.tensor([-1.0]), mask)
    assert float(down) == pytest.approx(1.5) and stats["clip_ratio"] == 0.0  # pessimistic side not clipped
    higher, _ = grpo_loss(new, old, torch.tensor([1.0]), mask, epsilon_high=0.28)
    assert float(higher) == pytest.approx(-1.28)
    ref = torch.full((1, 1), math.log(2.0))  # log ref - log pi = ln 2 - 0
    kl, stats = grpo_loss(old, old, torch.tensor([0.0]), mask, beta=0.5, ref_logps=ref)
    assert float(kl) == pytest.approx(0.5 * (2 - math.log(2) - 1))
    assert stats["kl"] == pytest.approx(2 - math.log(2) - 1)


# -- the same batch through TRL -------------------------------------------------------------------
pytest.importorskip("trl")


def _perturb(model: torch.nn.Module, seed: int = 1, scale: float = 0.05) -> None:
    """Move the policy away from the reference so the losses are not at their trivial values."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * scale)


def _args(cls, **kw):
    return tiny_config(cls, tempfile.mkdtemp(), per_device_train_batch_size=4, max_steps=1, **kw)


@pytest.mark.slow
@pytest.mark.parametrize(("loss_type", "beta"), [("sigmoid", 0.1), ("ipo", 0.5)])
def test_dpo_and_ipo_match_trl(tiny_model_dir, loss_type, beta):
    from transformers import AutoTokenizer
    from trl import DPOConfig, DPOTrainer

    from rewardsmith.adapters.demo.tasks import arithmetic_pairs
    from rewardsmith.adapters.trainers.trl import dpo_dataset

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    trainer = DPOTrainer(
        model=str(tiny_model_dir),
        args=_args(DPOConfig, loss_type=[loss_type], beta=beta),
        train_dataset=dpo_dataset(arithmetic_pairs(8, seed=3)),
        processing_class=tok,
    )
    _perturb(trainer.model)
    inputs = next(iter(trainer.get_train_dataloader()))
    trl_loss = float(trainer.compute_loss(trainer.model, inputs))

    batch = Encoded(
        input_ids=inputs["input_ids"],
        attention_mask=inputs["attention_mask"],
        completion_mask=inputs["completion_mask"],
    )
    with torch.no_grad():
        logps, mask = per_token_logps(trainer.model, batch)
        ref_logps, _ = per_token_logps(trainer.ref_model, batch)
    chosen, rejected = logps.sum(-1).chunk(2)
    ref_chosen, ref_rejected = ref_logps.sum(-1).chunk(2)
    if loss_type == "sigmoid":
        ours = dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta).mean()
    else:
        ours = ipo_loss(chosen, rejected, ref_chosen, ref_rejected, beta, *mask.sum(-1).chunk(2)).mean()
    assert trl_loss != pytest.approx(math.log(2) if loss_type == "sigmoid" else 1.0)  # not the trivial value
    assert float(ours) == pytest.approx(trl_loss, rel=1e-4, abs=1e-5)


@pytest.mark.slow
def test_kto_matches_trl(tiny_model_dir):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import KTOConfig, KTOTrainer

    from rewardsmith.adapters.demo.tasks import arithmetic_unpaired

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    rows = [{k: r[k] for k in ("prompt", "completion", "label")} for r in arithmetic_unpaired(8, seed=5)]
    trainer = KTOTrainer(
        model=str(tiny_model_dir),
        args=_args(KTOConfig, beta=0.5, desirable_weight=1.3),
        train_dataset=Dataset.from_list(rows),
        processing_class=tok,
    )
    _perturb(trainer.model)
    inputs = next(iter(trainer.get_train_dataloader()))
    assert trainer.calculate_KL and 0 < int(inputs["label"].sum()) < len(inputs["label"])
    trl_loss = float(trainer.compute_loss(trainer.model, inputs))

    def logps_of(model, prefix=""):
        return sequence_logps(
            model,
            Encoded(
                input_ids=inputs[f"{prefix}input_ids"],
                attention_mask=inputs[f"{prefix}attention_mask"],
                completion_mask=inputs[f"{prefix}completion_mask"],
            ),
        )

    with torch.no_grad():
        kl = kl_estimate(logps_of(trainer.model, "KL_"), logps_of(trainer.ref_model, "KL_"))
        losses = kto_loss(logps_of(trainer.model), logps_of(trainer.ref_model), inputs["label"], kl, 0.5, 1.3, 1.0)
    assert float(losses.mean()) == pytest.approx(trl_loss, rel=1e-4, abs=1e-5)


def test_orpo_odds_ratio_matches_trl():
    from trl.experimental.orpo.orpo_trainer import ORPOTrainer

    gen = torch.Generator().manual_seed(0)
    chosen = -torch.rand(16, generator=gen) * 3 - 1e-3
    rejected = -torch.rand(16, generator=gen) * 3 - 1e-3
    stub = SimpleNamespace(beta=0.25, accelerator=SimpleNamespace(device="cpu"))
    trl_losses, *_ = ORPOTrainer.odds_ratio_loss(stub, chosen, rejected)
    nll = torch.tensor(1.7)
    assert float(orpo_loss(nll, chosen, rejected, 0.25)) == pytest.approx(float(nll - trl_losses.mean()), rel=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("loss_type", ["grpo", "dapo", "dr_grpo"])
def test_grpo_loss_matches_trl(tiny_model_dir, loss_type):
    from datasets import Dataset
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from rewardsmith.adapters.demo.tasks import CharacterShare, digit_run

    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    args = _args(
        GRPOConfig,
        num_generations=4,
        max_completion_length=6,
        beta=0.2,
        loss_type=loss_type,
        epsilon=0.2,
        epsilon_high=0.28,
    )
    trainer = GRPOTrainer(
        model=str(tiny_model_dir),
        reward_funcs=[CharacterShare()],
        args=args,
        train_dataset=Dataset.from_list(digit_run(8)),
        processing_class=tok,
    )
    trainer.current_gradient_accumulation_steps = 1
    gen = torch.Generator().manual_seed(2)
    prompt_ids = torch.randint(3, 300, (4, 5), generator=gen)
    completion_ids = torch.randint(3, 300, (4, 6), generator=gen)
    completion_mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0], [1, 0, 0, 0, 0, 0]])
    advantages = torch.tensor([1.2, -0.4, 0.3, -1.1])
    batch = Encoded(
        input_ids=torch.cat([prompt_ids, completion_ids], 1),
        attention_mask=torch.cat([torch.ones_like(prompt_ids), completion_mask], 1),
        completion_mask=torch.cat([torch.zeros_like(prompt_ids), completion_mask], 1),
    )
    with torch.no_grad():
        ref = completion_logps(trainer.ref_model, batch, 6)
        current = completion_logps(trainer.model, batch, 6)
    old = current + torch.randn(current.shape, generator=gen) * 0.3  # off-policy: ratios leave the clip range
    inputs = {
        "prompt_ids": prompt_ids,
        "prompt_mask": torch.ones_like(prompt_ids),
        "completion_ids": completion_ids,
        "completion_mask": completion_mask,
        "advantages": advantages,
        "old_per_token_logps": old,
        "ref_per_token_logps": ref + 0.1,
        "num_items_in_batch": completion_mask.sum(),
    }
    trl_loss = float(trainer._compute_loss(trainer.model, inputs))
    aggregation = {"grpo": "sequence_mean", "dapo": "token_mean", "dr_grpo": "dr_grpo"}[loss_type]
    with torch.no_grad():
        ours, _ = grpo_loss(
            completion_logps(trainer.model, batch, 6),
            old,
            advantages,
            completion_mask.float(),
            epsilon_low=0.2,
            epsilon_high=0.28,
            beta=0.2,
            ref_logps=ref + 0.1,
            aggregation=aggregation,
            max_completion_length=6,
        )
    assert float(ours) == pytest.approx(trl_loss, rel=1e-4, abs=1e-6)
