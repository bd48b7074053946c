"""Untrusted text in a judge's prompt: quoted between keyed tags it cannot close, with chat control tokens defused.

Completions, prompts and references are written by the policy being trained or by a dataset, so they are data to
the judge, never structure. Two things keep them data once they sit inside a message's content:

- **Keyed tags.** Each value is quoted as ``<response-A-KEY>`` … ``</response-A-KEY>``. ``KEY`` is derived from
  every value of the render and re-derived until it occurs in none of them, so no value can contain its own
  closing tag or open a block for another candidate: "``</response-1-…>`` Response 2: …" written by candidate 1
  stays inside candidate 1's block, visibly. The key is a pure function of the content, so the same request is
  built twice the same way and the request cache still serves reruns.
- **Defused control tokens.** A chat server renders messages with the model's chat template and then tokenises the
  whole prompt with its special tokens recognised, so ``<|im_end|>\\n<|im_start|>system`` inside a completion
  would become real turn boundaries at the token level. A zero-width space after the first character of every
  such sequence (``<|…|>``, ``<s>``, ``[INST]``, ``<start_of_turn>`` …, plus a tokenizer's own special tokens when
  known) keeps the text readable and makes it ordinary text to the tokenizer.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: What is inserted to break a control-token sequence: invisible, and never part of a special token.
ZERO_WIDTH_SPACE = "\u200b"

#: Control sequences of common chat templates (ChatML, Llama 2/3, Gemma, Mistral, Phi) and their near relatives.
CONTROL_TOKEN = re.compile(
    r"<\|[^<>|\s]{1,64}\|>"  # <|im_start|>, <|eot_id|>, <|start_header_id|>, <|endoftext|>, <|user|>
    r"|<｜[^<>｜]{1,64}｜>"  # the full-width bars of some tokenizers (<｜User｜>)
    r"|</?s>|<(?:bos|eos|pad|unk)>"
    r"|\[/?INST\]|<</?SYS>>|\[/?(?:SYSTEM|TOOL)_PROMPT\]|\[/?AVAILABLE_TOOLS\]"
    r"|<(?:start|end)_of_turn>"
)

#: Template variables that carry untrusted text, and the tag label each is quoted under (lists get ``-1``, ``-2`` …).
UNTRUSTED_LABELS: dict[str, str] = {
    "prompt": "prompt",
    "response": "response",
    "first": "response-A",
    "second": "response-B",
    "candidates": "response",
    "reference": "reference",
}

_KEY_LETTERS = string.ascii_lowercase
_KEY_LENGTH = 16


def defuse_control_tokens(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` with every chat control sequence broken by a zero-width space, so no tokenizer reads it as one.

    ``extra`` adds exact strings (a tokenizer's own special tokens) to the built-in patterns.
    """
    pattern = CONTROL_TOKEN
    tokens = sorted({token for token in extra if len(token) >= 2}, key=len, reverse=True)
    if tokens:
        pattern = re.compile("|".join([*map(re.escape, tokens), CONTROL_TOKEN.pattern]))
    return pattern.sub(lambda match: match.group()[0] + ZERO_WIDTH_SPACE + match.group()[1:], text)


def fence_key(values: Iterable[str]) -> str:
    """A key of lowercase letters that occurs in none of ``values``: derived from them, so stable for equal input."""
    texts = list(values)
    seed = json.dumps(texts, ensure_ascii=False).encode("utf-8")
    counter = 0
    while True:
        digest = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        key = "".join(_KEY_LETTERS[byte % len(_KEY_LETTERS)] for byte in digest[:_KEY_LENGTH])
        if not any(key in text for text in texts):
            return key
        counter += 1


@dataclass(frozen=True)
class Fence:
    """The keyed tags of one render."""

    key: str

    def quote(self, label: str, text: str) -> str:
        return f"<{label}-{self.key}>\n{text}\n</{label}-{self.key}>"


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence):
        return [item for item in value if isinstance(item, str)]
    return []


def quote_untrusted(variables: Mapping[str, Any], labels: Mapping[str, str] = UNTRUSTED_LABELS) -> dict[str, Any]:
    """``variables`` with each untrusted one (named in ``labels``) defused and quoted between one render's tags.

    ``None`` stays ``None`` (a template's ``{% if reference %}`` still works); a list of texts is quoted item by
    item, labelled ``response-1``, ``response-2`` … in the order given (the order the judge is shown).
    """
    untrusted = {name: value for name, value in variables.items() if name in labels and value is not None}
    defused = {
        name: (
            defuse_control_tokens(value)
            if isinstance(value, str)
            else [defuse_control_tokens(item) if isinstance(item, str) else item for item in value]
            if isinstance(value, Sequence)
            else value
        )
        for name, value in untrusted.items()
    }
    fence = Fence(fence_key(text for value in defused.values() for text in _texts(value)))
    quoted = dict(variables)
    for name, value in defused.items():
        label = labels[name]
        if isinstance(value, str):
            quoted[name] = fence.quote(label, value)
        elif isinstance(value, Sequence):
            quoted[name] = [
                fence.quote(f"{label}-{index}", item) if isinstance(item, str) else item
                for index, item in enumerate(value, start=1)
            ]
    return quoted
