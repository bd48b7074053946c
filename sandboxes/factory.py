"""Sandbox backends by name: the one table of them, imported lazily so an unused backend's dependencies are never
needed. A new backend is its module plus one line in :data:`SANDBOXES` (or a ``rewardsmith.sandboxes`` entry point)."""

from __future__ import annotations

from typing import Any

from rewardsmith.backends import Backend, BackendTable
from rewardsmith.sandboxes.base import SandboxBackend

SANDBOXES = BackendTable(
    "sandbox backend",
    "rewardsmith.sandboxes",
    [
        Backend("local", "rewardsmith.sandboxes.local.backend:LocalSandbox"),
        Backend(
            "docker",
            "rewardsmith.sandboxes.docker.backend:DockerSandbox",
            extra="docker",
        ),
        Backend("remote", "rewardsmith.sandboxes.fusion.client:RemoteSandbox", forwards=True),
    ],
)

#: the type of a config field naming a sandbox backend
SandboxName = SANDBOXES.literal()


def open_backend(name: str, **options: Any) -> SandboxBackend:
    """Build the backend registered under ``name`` with ``options`` (e.g. ``base_url`` for ``remote``).

    >>> open_backend("local").name
    'local'
    """
    return SANDBOXES.load(name)(**options)
