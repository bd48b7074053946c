"""A judge client's options, declared once: one pydantic model per client kind.

:class:`ClientOptions` holds the options every kind takes (the request options of its transport and what the
managed client wraps it with: cache, pacing, concurrency, prices). A kind subclasses it in its own module,
overriding what differs (``model`` required, and what it names) and adding its own fields, and builds its
transport in :meth:`~ClientOptions.transport`. Everything that configures a client reads these fields:
``make_client``'s keywords, a YAML ``client:`` block (:class:`~rewardsmith.judges.clients.factory.JudgeClientConfig`)
and the command line (:mod:`rewardsmith.cli.clients`, which makes a flag of each field marked :class:`Flag`, its
help the field's description). So an option added to a model is at once a keyword, a YAML key and a flag.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.fields import FieldInfo

from rewardsmith.judges.accounting import Price
from rewardsmith.judges.base import ChatClient


@dataclass(frozen=True)
class Flag:
    """Where a client option is on the command line (``Annotated`` metadata of its field).

    ``spec``: after ``name:`` in ``--ROLE name:VALUE`` (``metavar`` is what the SPEC shows; none: the kind takes no
    value there); ``role``: ``--ROLE-NAME``, one per client a command builds; ``request``: ``--NAME``, once per
    command, for every client it builds. A field without a flag comes from the command's own options
    (``--cache-dir``, ``--concurrency``, ``--prices``) or from YAML and Python only.
    """

    scope: Literal["spec", "role", "request"]
    metavar: str | None = None


def flag_of(info: FieldInfo) -> Flag | None:
    """The :class:`Flag` of a field, or None when the command line does not offer it."""
    return next((item for item in info.metadata if isinstance(item, Flag)), None)


class ClientOptions(BaseModel):
    """The options every judge client takes; a client kind's options model subclasses it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Annotated[str | None, Flag("spec")] = Field(
        None, description="what the client runs: a model name (openai), a model dir or GGUF path (transformers)"
    )
    base_url: Annotated[str | None, Flag("role")] = Field(None, description="OpenAI-compatible endpoint URL")
    api_key: Annotated[str | None, Flag("role")] = Field(None, description="API key (default: $OPENAI_API_KEY)")
    cache_dir: str | None = Field(None, description="directory of the on-disk request cache; None = no cache")
    timeout: Annotated[float, Flag("request", "S")] = Field(60.0, gt=0, description="seconds per request")
    max_retries: Annotated[int, Flag("request", "N")] = Field(
        4, ge=0, description="retries on 429, 5xx, timeouts and malformed answers"
    )
    rpm: Annotated[float | None, Flag("request")] = Field(None, gt=0, description="client-side requests per minute")
    tpm: Annotated[float | None, Flag("request")] = Field(None, gt=0, description="client-side tokens per minute")
    concurrency: int = Field(8, ge=1, description="requests in flight at most")
    prices: dict[str, Price] | None = Field(None, description='USD per 1M tokens: {"model": {"input", "output"}}')

    @field_validator("cache_dir", mode="before")
    @classmethod
    def _path_as_text(cls, value: Any) -> Any:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @classmethod
    def model_required(cls) -> bool:
        """Whether this kind needs ``model`` (a ``--ROLE`` SPEC must then name one)."""
        return cls.model_fields["model"].is_required()

    def transport(self) -> ChatClient:
        """The kind's transport, built from these options (the managed client adds cache, pacing and accounting)."""
        raise NotImplementedError(f"{type(self).__name__} names no transport; a client kind's options define one")
