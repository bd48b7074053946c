"""Sandbox backends by name, imported lazily so that an unused backend's dependencies are never needed."""

from __future__ import annotations

import importlib
from typing import Any

from rewardkit.sandboxes.base import SandboxBackend

#: name -> (module, class); modules are imported only when their backend is opened.
BACKENDS = {
    "local": ("rewardkit.sandboxes.local.backend", "LocalSandbox"),
    "docker": ("rewardkit.sandboxes.docker.backend", "DockerSandbox"),
    "remote": ("rewardkit.sandboxes.fusion.client", "RemoteSandbox"),
}


def open_backend(name: str, **options: Any) -> SandboxBackend:
    """Build the backend registered under ``name`` with ``options`` (e.g. ``base_url`` for ``remote``).

    >>> open_backend("local").name
    'local'
    """
    try:
        module_name, class_name = BACKENDS[name]
    except KeyError:
        raise ValueError(f"unknown sandbox backend {name!r}; known: {', '.join(BACKENDS)}") from None
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise ValueError(f"sandbox backend {name!r} is unavailable: {exc}") from exc
    return getattr(module, class_name)(**options)
