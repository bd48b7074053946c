"""Reward-model clients by name: one kind of the plugin registry (:mod:`rewardsmith.plugins`).

A client scores (prompt, response) pairs (:class:`~rewardsmith.judges.reward_model.RewardModelScorer`): ``local``
runs a sequence classifier in-process, the others speak a server's wire format (``openrlhf``, ``vllm-classify``,
``vllm-pooling``). A line's ``options`` are the keywords its class takes from a reward-model config, and its
``endpoint``, when set, is passed as is. A package adds a client through the ``rewardsmith.reward_models``
entry-point group (a class built as ``Client(path_or_url, **options)``).
"""

from __future__ import annotations

import inspect
import urllib.parse
from typing import Any

from rewardsmith.plugins import PluginKind

_REMOTE = ("timeout", "max_retries")

REWARD_MODELS: PluginKind[Any] = PluginKind("reward_models", "reward model client", info_defaults={"remote": True})
REWARD_MODELS.declare(
    "local",
    "rewardsmith.judges.reward_model:LocalRewardModel",
    extra="judge-local",
    remote=False,
    options=("batch_size", "max_length", "device", "use_chat_template"),
)
REWARD_MODELS.declare("openrlhf", "rewardsmith.judges.reward_model:RemoteRewardModel", options=_REMOTE)
for _endpoint in ("classify", "pooling"):
    REWARD_MODELS.declare(
        f"vllm-{_endpoint}",
        "rewardsmith.judges.reward_model:VLLMRewardModel",
        endpoint=_endpoint,
        options=(*_REMOTE, "use_chat_template", "served_model"),
    )


def remote_protocols() -> tuple[str, ...]:
    """The clients that talk to a server (the choices of a ``protocol`` option besides ``auto``)."""
    return tuple(name for name in REWARD_MODELS.names() if REWARD_MODELS.get(name).remote)


def remote_protocol(url: str, protocol: str = "auto") -> str:
    """The wire format of a reward server: ``protocol`` when given, else the URL's last path segment decides."""
    if protocol != "auto":
        return protocol
    last = urllib.parse.urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
    return {"classify": "vllm-classify", "pooling": "vllm-pooling"}.get(last, "openrlhf")


def open_reward_model(path_or_url: str, *, protocol: str = "auto", **options: Any) -> Any:
    """The client for ``path_or_url``: ``local`` for a directory, else ``protocol`` (``auto``: the URL decides,
    :func:`remote_protocol`), built with the options its line takes."""
    remote = path_or_url.startswith(("http://", "https://"))
    if not remote and protocol != "auto":
        raise ValueError(f"protocol {protocol!r} needs an http(s):// URL, not {path_or_url!r}")
    name = remote_protocol(path_or_url, protocol) if remote else "local"
    line = REWARD_MODELS.get(name)
    client = REWARD_MODELS.load(name)
    taken = line.info.get("options")
    if taken is None:  # a plugin's class: the keywords its constructor names
        taken = tuple(inspect.signature(client).parameters)
    given = {key: value for key, value in options.items() if key in taken}
    if "endpoint" in line.info:
        given["endpoint"] = line.endpoint
    return client(path_or_url, **given)
