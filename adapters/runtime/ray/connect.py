"""Joining a Ray cluster from a process that must never hang or die on a missing one.

``ray.init`` against an address where nothing answers retries for minutes, so the address is resolved the way
Ray resolves it (``RAY_ADDRESS``, ``auto``) and probed with a plain TCP connect first: a cluster that is gone
becomes a one-line reason within ``connect_timeout_s`` instead of a stalled training step.
"""

from __future__ import annotations

import logging
import socket
import threading

logger = logging.getLogger(__name__)

_init_lock = threading.Lock()


class ClusterUnavailable(RuntimeError):
    """No Ray cluster to score on; the message is the reason each sample carries."""


def ray_missing_reason() -> str | None:
    """Why Ray cannot be used here (not installed), or ``None`` when it imports."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        return f"ray is not installed ({exc}); pip install 'rewardsmith[ray]'"
    return None


def connect(
    address: str | None,
    *,
    connect_timeout_s: float = 5.0,
    namespace: str | None = None,
) -> None:
    """Connect this process to the cluster at ``address`` unless it already is (Ray allows one per process).

    Raises :class:`ClusterUnavailable` with the reason when Ray is missing, the address resolves to nothing,
    or nothing answers there.
    """
    missing = ray_missing_reason()
    if missing:
        raise ClusterUnavailable(missing)
    import ray

    with _init_lock:
        if ray.is_initialized():
            return
        target = resolve_address(address)
        if target is not None:
            probe(target, connect_timeout_s, given=address)
        try:
            ray.init(
                address=address,
                namespace=namespace,
                log_to_driver=False,
                ignore_reinit_error=True,
                # A local cluster started here gets no dashboard; None (Ray's default) leaves a remote one alone.
                include_dashboard=None if target is not None else False,
            )
        except Exception as exc:  # a refused handshake, a Ray version mismatch
            raise ClusterUnavailable(f"ray.init({address!r}) failed: {type(exc).__name__}: {exc}") from None
        logger.info("connected to Ray at %s", address or "a local cluster")


def resolve_address(address: str | None) -> tuple[str, int] | None:
    """``(host, port)`` that ``ray.init(address)`` will dial, or ``None`` when it will start a local cluster.

    Raises :class:`ClusterUnavailable` when ``auto`` finds no running cluster or the address is malformed.
    """
    if address is not None and address.startswith("ray://"):
        return _host_port(address.removeprefix("ray://").split("/", 1)[0], address)
    try:
        from ray._private.services import canonicalize_bootstrap_address

        resolved = canonicalize_bootstrap_address(address)  # type: ignore[arg-type]  # Ray annotates str, handles None
    except ConnectionError as exc:  # "auto" with no cluster started on this machine
        raise ClusterUnavailable(f"no Ray cluster found for address {address!r}: {exc}") from None
    except Exception as exc:
        raise ClusterUnavailable(f"bad Ray address {address!r}: {type(exc).__name__}: {exc}") from None
    if resolved is None:
        return None
    return _host_port(resolved, address)


def probe(target: tuple[str, int], timeout_s: float, given: str | None = None) -> None:
    """A TCP connect to the cluster's GCS port; :class:`ClusterUnavailable` when nothing answers in time.

    The reason names the address Ray would dial and, when Ray resolved it from another (``auto``, or
    127.0.0.1 that Ray swaps for the node's own IP), the address as given.
    """
    host, port = target
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return
    except OSError as exc:
        where = f"{host}:{port}"
        if given and given.removeprefix("ray://") != where:
            where += f" (from {given!r})"
        raise ClusterUnavailable(f"Ray cluster unreachable at {where}: {exc}") from None


def _host_port(text: str, given: str | None) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ClusterUnavailable(f"bad Ray address {given!r}: expected HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)
