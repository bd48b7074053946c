"""Random-weight models of a released model's shape: the dimensions give its published parameter count."""

from __future__ import annotations

import pytest

from tests.support.extras import require_extras

require_extras("trl")

import torch
from transformers import Qwen2Config, Qwen2ForCausalLM

from rewardsmith.adapters.demo.tiny_model import SHAPES, build_tiny_model

#: Parameter counts on the released models' cards ("Number of Parameters"), in billions.
PUBLISHED = {"qwen2.5-0.5b": 0.49, "qwen2.5-1.5b": 1.54}


@pytest.mark.parametrize("shape", sorted(PUBLISHED))
def test_shape_has_the_released_models_parameter_count(shape: str) -> None:
    with torch.device("meta"):
        model = Qwen2ForCausalLM(Qwen2Config(**SHAPES[shape], tie_word_embeddings=True))
    assert round(sum(p.numel() for p in model.parameters()) / 1e9, 2) == PUBLISHED[shape]


def test_an_unknown_shape_is_refused_naming_the_known_ones(tmp_path) -> None:
    with pytest.raises(ValueError, match=r"qwen2\.5-0\.5b"):
        build_tiny_model(tmp_path, shape="qwen3-235b")
    assert not any(tmp_path.iterdir())  # refused before anything was written
