"""Sandbox backends by name: one kind of the plugin registry (:mod:`rewardsmith.plugins`), each imported lazily so an
unused backend's dependencies are never needed. A new backend is its module plus one line below (or a
``rewardsmith.sandboxes`` entry point, or ``@SANDBOXES.decorator("name")`` on the class)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewardsmith.plugins import PluginKind
from rewardsmith.sandboxes.base import SandboxBackend

#: The sandbox backends. ``forwards``: it forwards programs to another server (so it is no backend to serve the
#: API on).
SANDBOXES: PluginKind[Any] = PluginKind("sandboxes", "sandbox backend", info_defaults={"forwards": False})
SANDBOXES.declare("local", "rewardsmith.sandboxes.local.backend:LocalSandbox")
SANDBOXES.declare("docker", "rewardsmith.sandboxes.docker.backend:DockerSandbox", extra="docker")
SANDBOXES.declare("remote", "rewardsmith.sandboxes.fusion.client:RemoteSandbox", forwards=True)

#: the type of a config field naming a sandbox backend
SandboxName = SANDBOXES.literal()


def open_backend(name: str, offered: Mapping[str, Any] | None = None, **options: Any) -> SandboxBackend:
    """Build the backend registered under ``name`` with ``options`` (e.g. ``base_url`` for ``remote``).

    ``offered`` holds options a caller has for any backend (the isolation it accepts, trusted modules worth
    preloading); each reaches the backend only when its class lists the name in ``accepts_offered`` and ``options``
    does not set it, so a caller never needs to know which backend takes what.

    >>> open_backend("local").name
    'local'
    """
    backend_class = SANDBOXES.load(name)
    accepted: frozenset[str] = getattr(backend_class, "accepts_offered", frozenset())
    for key, value in (offered or {}).items():
        if key in accepted:
            options.setdefault(key, value)
    backend: SandboxBackend = backend_class(**options)
    return backend
