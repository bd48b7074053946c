"""Mini trainer memory: next_token_logps gives TRL's selective_log_softmax values and gradients in less memory
than it or the plain form; the optimizer is fused AdamW.

The reference is TRL's own function on the same logits (its loop over rows, the form GRPOTrainer uses off GPU) and
``log_softmax`` + ``gather``; blocks are forced small so rows straddle block edges inside one sequence.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
trl_utils = pytest.importorskip("trl.trainer.utils")

from rewardsmith.adapters.mini import logprobs
from rewardsmith.adapters.mini.logprobs import next_token_logps


def plain(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return torch.gather(logits[..., :-1, :].float().log_softmax(-1), -1, labels.unsqueeze(-1)).squeeze(-1)


@pytest.fixture(params=[1 << 24, 7 * 11, 11], ids=["one-block", "rows-straddle", "one-row-blocks"])
def block(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Block sizes: whole sequences, 7 rows of 11 tokens (a block ends mid-sequence), one row at a time."""
    monkeypatch.setattr(logprobs, "BLOCK_ELEMENTS", request.param)
    return int(request.param)


@pytest.mark.parametrize("shape", [(3, 6, 11), (6, 11), (2, 2, 5, 11)], ids=["batch", "one-sequence", "nested"])
def test_values_and_gradients_match_trl(block: int, shape: tuple[int, ...]) -> None:
    gen = torch.Generator().manual_seed(sum(shape) + block)
    base = (torch.randn(shape, generator=gen, dtype=torch.float64) * 4).requires_grad_()
    labels = torch.randint(0, shape[-1], shape[:-1], generator=gen)[..., 1:]
    weights = torch.randn(labels.shape, generator=gen, dtype=torch.float64)

    mine = next_token_logps(base, labels)
    (grad_mine,) = torch.autograd.grad((mine * weights).sum(), base)
    theirs = trl_utils.selective_log_softmax(base[..., :-1, :], labels)
    (grad_theirs,) = torch.autograd.grad((theirs * weights).sum(), base)

    assert mine.dtype == torch.float64 and mine.shape == labels.shape
    torch.testing.assert_close(mine, theirs, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(grad_mine, grad_theirs, rtol=1e-12, atol=1e-12)
    assert bool((grad_mine[..., -1, :] == 0).all())  # the last position predicts nothing


def test_gradcheck_in_float64(block: int) -> None:
    gen = torch.Generator().manual_seed(5)
    logits = torch.randn(2, 4, 9, generator=gen, dtype=torch.float64, requires_grad=True)
    labels = torch.randint(0, 9, (2, 3), generator=gen)
    assert torch.autograd.gradcheck(lambda x: logprobs._NextTokenLogps.apply(x, labels), (logits,))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_logits_are_read_in_float32(dtype: torch.dtype) -> None:
    """Half-precision logits: the log-partition is taken in float32 (TRL's reason for its slower bf16 path)."""
    gen = torch.Generator().manual_seed(3)
    full = torch.randn(4, 9, 1000, generator=gen) * 8
    labels = torch.randint(0, 1000, (4, 8), generator=gen)
    low = full.to(dtype).requires_grad_()
    got = next_token_logps(low, labels)
    got.sum().backward()
    assert got.dtype == torch.float32
    reference = plain(low.detach().float(), labels)
    torch.testing.assert_close(got, reference, rtol=0, atol=1e-4)
    assert low.grad is not None and low.grad.dtype == dtype
    softmax_rows = low.grad[..., :-1, :].float().sum(-1)  # onehot - softmax sums to zero per row
    torch.testing.assert_close(softmax_rows, torch.zeros_like(softmax_rows), rtol=0, atol=2e-2)


def test_without_autograd_it_returns_plain_values() -> None:
    gen = torch.Generator().manual_seed(7)
    logits = torch.randn(2, 5, 13, generator=gen, requires_grad=True)
    labels = torch.randint(0, 13, (2, 4), generator=gen)
    with torch.no_grad():
        got = next_token_logps(logits, labels)
    assert not got.requires_grad and got.dtype == torch.float32
    torch.testing.assert_close(got, plain(logits.detach(), labels))


@pytest.mark.parametrize(
    ("logits_shape", "labels_shape"), [((2, 5, 13), (2, 5)), ((2, 5, 13), (3, 4)), ((5, 13), (2, 4))]
)
def test_logits_need_exactly_one_more_position(logits_shape: tuple[int, ...], labels_shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="one more position"):
        next_token_logps(torch.zeros(logits_shape), torch.zeros(labels_shape, dtype=torch.long))


PEAK_PROGRAM = textwrap.dedent(
    """
    import json, sys, torch
    from pathlib import Path

    def status_kb(field):
        line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith(field + ":"))
        return int(line.split()[1])
    from trl.trainer.utils import selective_log_softmax
    from rewardsmith.adapters.mini.logprobs import next_token_logps

    torch.set_num_threads(1)
    batch, positions, vocab, width = 8, 65, 32000, 32
    hidden = torch.randn(batch, positions, width, requires_grad=True)
    head = (torch.randn(vocab, width) * 0.05).requires_grad_()
    labels = torch.randint(0, vocab, (batch, positions - 1))
    way = sys.argv[1]
    if way == "trl":
        warm = selective_log_softmax(torch.zeros(1, 2, 4, requires_grad=True), torch.zeros(1, 2, dtype=torch.long))
    else:
        warm = next_token_logps(torch.zeros(1, 3, 4, requires_grad=True), torch.zeros(1, 2, dtype=torch.long))
    warm.sum().backward()
    # The high-water mark starts again here: the imports may have peaked above anything measured below.
    Path("/proc/self/clear_refs").write_text("5")
    before = status_kb("VmRSS")
    logits = torch.nn.functional.linear(hidden, head)  # an lm_head, as the model computes it
    if way == "mine":
        logps = next_token_logps(logits, labels)
    elif way == "trl":
        logps = selective_log_softmax(logits[:, :-1], labels)
    else:
        logps = torch.gather(logits[:, :-1].log_softmax(-1), -1, labels.unsqueeze(-1)).squeeze(-1)
    logps.sum().backward()
    peak = status_kb("VmHWM")
    in_logits = (peak - before) * 1024 / (batch * positions * vocab * 4)
    print(json.dumps({"before_kb": before, "peak_kb": peak, "in_logits": in_logits}))
    """
)


def peak_in_logits(way: str, folder: Path) -> float:
    """Peak resident growth of one forward and backward, in sizes of the logits, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", PEAK_PROGRAM, way], capture_output=True, text=True, timeout=300, check=True, cwd=folder
    )
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    assert measured["peak_kb"] > measured["before_kb"], f"{way}: no resident growth measured: {measured}"
    return float(measured["in_logits"])


@pytest.mark.slow
def test_backward_holds_two_logit_sized_tensors_where_the_others_hold_four_or_more(tmp_path: Path) -> None:
    """The logits and their gradient, plus blocks; TRL's row loop and the plain form peak at about four and five."""
    mine, theirs, plain_form = (peak_in_logits(way, tmp_path) for way in ("mine", "trl", "plain"))
    assert mine < 3.0, mine
    assert theirs > mine + 1.0 and plain_form > mine + 1.0, (mine, theirs, plain_form)


def test_the_optimizer_is_fused_adamw_as_trl_s_default() -> None:
    """The multi-tensor AdamW holds a square-root copy of every parameter at each step; the fused kernel none."""
    from transformers import TrainingArguments

    from rewardsmith.adapters.mini.config import MiniConfig
    from rewardsmith.adapters.mini.loop import make_optimizer

    policy, critic = torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)
    critic.bias.requires_grad_(False)
    optimizer = make_optimizer(MiniConfig(model="unused", learning_rate=1e-3), policy, critic)
    assert isinstance(optimizer, torch.optim.AdamW) and optimizer.defaults["fused"]
    assert sum(len(group["params"]) for group in optimizer.param_groups) == 3  # the frozen bias left out
    assert TrainingArguments(output_dir="unused", use_cpu=True).optim == "adamw_torch_fused"
