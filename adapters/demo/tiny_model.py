"""A tiny Qwen2-architecture chat model built offline, for tests, demos and benchmarks.

No hub access: a byte-level BPE tokenizer is trained on a few sentences and a randomly initialised
``Qwen2ForCausalLM`` is saved next to it. It builds in about a second on a CPU.

For benchmarks on a GPU machine, ``shape`` gives the weights a released model's dimensions (``qwen2.5-0.5b``,
``qwen2.5-1.5b``: layers, widths, heads and the 151,936-token vocabulary), still random and still with the tiny
tokenizer: memory and speed depend on the shapes, not the values. Ids past the tokenizer's vocabulary decode to
nothing, as the padding rows of the released models' own embeddings do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

_CORPUS = [
    "The answer is 42. Let me think step by step.",
    "<think>2 + 2 = 4</think> The answer is \\boxed{4}.",
    "What is 3 + 5? Compute the sum and give the final answer.",
    "def f(x):\n    return x + 1\n",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
    "A helpful, honest and harmless assistant answers clearly and concisely.",
    "+ - * / = ( ) { } [ ] < > , . : ; ! ?",
]


#: Released models' dimensions (their ``config.json``), for random-weight models of a real size.
SHAPES: dict[str, dict[str, Any]] = {
    "qwen2.5-0.5b": {
        "vocab_size": 151_936,
        "hidden_size": 896,
        "intermediate_size": 4864,
        "num_hidden_layers": 24,
        "num_attention_heads": 14,
        "num_key_value_heads": 2,
    },
    "qwen2.5-1.5b": {
        "vocab_size": 151_936,
        "hidden_size": 1536,
        "intermediate_size": 8960,
        "num_hidden_layers": 28,
        "num_attention_heads": 12,
        "num_key_value_heads": 2,
    },
}


def build_tiny_model(
    directory: str | Path, *, seed: int = 0, vocab_size: int = 512, hidden_size: int = 64, shape: str = "tiny"
) -> Path:
    """Write a tiny chat model (tokenizer + weights) to ``directory`` and return the path.

    ``shape`` other than ``tiny`` is a name of :data:`SHAPES`: the weights take that model's dimensions.
    """
    if shape != "tiny" and shape not in SHAPES:
        raise ValueError(f"unknown model shape {shape!r}: tiny or one of {', '.join(SHAPES)}")
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    specials = ["<|im_start|>", "<|im_end|>", "<pad>"]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(_CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<pad>",
        unk_token=None,
    )
    fast.chat_template = CHATML_TEMPLATE
    fast.save_pretrained(directory)

    torch.manual_seed(seed)
    dimensions: dict[str, Any] = SHAPES.get(shape) or {
        "vocab_size": len(fast),
        "hidden_size": hidden_size,
        "intermediate_size": hidden_size * 2,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
    }
    config = Qwen2Config(
        **dimensions,
        max_position_embeddings=512 if shape == "tiny" else 32_768,
        tie_word_embeddings=True,
        eos_token_id=fast.eos_token_id,
        pad_token_id=fast.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = fast.eos_token_id
    model.generation_config.pad_token_id = fast.pad_token_id
    model.save_pretrained(directory)
    return directory
