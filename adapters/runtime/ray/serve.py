"""The reward server as a Ray Serve deployment: N replicas of the same ASGI app behind Ray's HTTP proxy.

Ray Serve brings what one uvicorn process cannot: replicas on every node of the cluster, autoscaling on queue
length, replacement of a replica that dies, and a proxy that spreads requests over the live ones. Each replica
builds its own app (and so its own warm rewards) from a factory or from reward specs, on the node it lands on.

The reward-hacking monitor (``ServeSettings.monitor``, as ``rewardsmith serve --monitor-shadow`` sets it) reaches
the replicas with the specs form's settings; each replica monitors the samples it scores, so with several
replicas ``/monitor`` and ``/metrics`` answer for the replica the proxy picked. A factory builds its own app and
would drop the settings, so it is refused with them rather than served unmonitored.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rewardsmith.adapters.runtime.ray.connect import ClusterUnavailable, connect

logger = logging.getLogger(__name__)


class AppSource:
    """What a replica builds its ASGI app from; pickled to every replica, evaluated there (never in the driver).

    ``source`` is a zero-argument callable returning an ASGI app, or reward specs for
    ``rewardsmith.adapters.runtime.serve``: a spec file path, or a loaded spec document (one term, a list of terms, or a
    mapping with ``rewards:``), served with ``settings`` (a ``ServeSettings`` or its fields as a mapping).
    """

    def __init__(self, source: Any, settings: Any = None) -> None:
        self.source = source
        self.settings = settings

    def build(self) -> Any:
        if callable(self.source):
            return self.source()
        from rewardsmith.adapters.runtime.serve import ServeSettings, build_served, create_app, load_served

        served = load_served(self.source) if isinstance(self.source, (str, Path)) else build_served(self.source)
        settings = self.settings
        if isinstance(settings, Mapping):
            settings = ServeSettings(**settings)
        return create_app(served, settings)


class RewardIngress:
    """The deployment class: Ray Serve asks it for the app once the replica has started."""

    def __init__(self, source: AppSource) -> None:
        self.source = source

    def __serve_build_asgi_app__(self) -> Any:
        return self.source.build()


def serve_on_ray(
    app_factory_or_specs: Callable[[], Any] | str | Path | Mapping[str, Any] | list[Any],
    replicas: int = 1,
    autoscaling_config: Mapping[str, Any] | None = None,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    settings: Any = None,
    address: str | None = None,
    name: str = "rewardsmith",
    route_prefix: str = "/",
    ray_actor_options: Mapping[str, Any] | None = None,
    proxy_location: str | None = None,
    ready_timeout_s: float = 300.0,
    blocking: bool = False,
    monitor: Any = None,
) -> str:
    """Deploy the reward server on the Ray cluster at ``address`` and return its base URL.

    Args:
        app_factory_or_specs: a zero-argument callable returning an ASGI app (e.g. ``lambda:
            create_app(...)``; it is pickled and called on each replica), or reward specs — a YAML/JSON spec file
            path or a loaded spec document — which each replica turns into
            ``rewardsmith.adapters.runtime.serve.create_app(build_served(specs), settings)``.
        replicas: fixed number of replicas (ignored when ``autoscaling_config`` is given).
        autoscaling_config: passed to Ray Serve unchanged (``min_replicas``, ``max_replicas``,
            ``target_ongoing_requests``, ...); replaces ``replicas``.
        host, port: where Ray Serve's HTTP proxies listen (one per node by default; see ``proxy_location``).
        settings: ``ServeSettings`` (or a mapping of its fields) for the specs form; its host/port are not used.
        address: the Ray cluster (``auto``, ``HOST:PORT``, ``ray://...``); ``None``: ``ray.init``'s default,
            which starts a local cluster when none is running.
        name, route_prefix: the Serve application's name and URL prefix.
        ray_actor_options: per-replica resources, e.g. ``{"num_cpus": 2}``.
        proxy_location: ``"EveryNode"`` (Ray's default), ``"HeadOnly"`` or ``"Disabled"``.
        ready_timeout_s: how long to wait for the application to be RUNNING before raising.
        blocking: keep serving until interrupted (Ctrl-C, SIGTERM), then delete the application.
        monitor: the reward-hacking monitor (a ``MonitorConfig`` or its fields, e.g. ``{"shadow":
            "math_equivalence", "sample": 64}``): ``settings.monitor`` for short; ``GET /monitor`` on each replica.

    Returns the base URL, e.g. ``http://127.0.0.1:8000/``. Raises ``ClusterUnavailable`` when there is no cluster
    and ``RuntimeError`` when the application does not become RUNNING in time (with Ray Serve's message).
    ``ValueError`` before anything is deployed for settings (or ``monitor``) given with a factory, which would
    drop them, and for settings that do not validate.
    """
    if replicas < 1 and autoscaling_config is None:
        raise ValueError("replicas must be at least 1")
    settings = replica_settings(app_factory_or_specs, settings, monitor)
    if getattr(settings, "monitor", None) is not None and (autoscaling_config is not None or replicas > 1):
        logger.warning(
            "serve_on_ray: each replica monitors only the samples it scores; /monitor and /metrics answer for the "
            "replica the proxy picked (one replica, replicas=1, sees the whole stream)"
        )
    connect(address)
    from ray import serve

    start_options: dict[str, Any] = {"http_options": {"host": host, "port": port}}
    if proxy_location is not None:
        start_options["proxy_location"] = proxy_location
    serve.start(**start_options)

    options: dict[str, Any] = {"name": f"{name}-ingress"}
    if autoscaling_config is not None:
        options["autoscaling_config"] = dict(autoscaling_config)
    else:
        options["num_replicas"] = replicas
    if ray_actor_options is not None:
        options["ray_actor_options"] = dict(ray_actor_options)
    # ``deployment()(cls)`` is ``deployment(cls)``; Ray's annotation covers only the decorator-factory form.
    deployment = serve.deployment()(serve.ingress()(RewardIngress)).options(**options)
    application = deployment.bind(AppSource(app_factory_or_specs, settings))
    serve.run(application, name=name, route_prefix=route_prefix, blocking=False)
    wait_running(name, ready_timeout_s)
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}{route_prefix}"
    if blocking:
        serve_until_interrupted(name)
    return url


def replica_settings(source: Any, settings: Any, monitor: Any = None) -> Any:
    """The ``ServeSettings`` every replica gets, validated in the driver (a bad option fails before deploying).

    ``monitor`` goes into ``settings.monitor``. A factory builds its own app, so settings given with one are
    refused (naming the two ways that do serve them) instead of being dropped, the monitor with them.
    """
    if callable(source):
        if settings is not None or monitor is not None:
            raise ValueError(
                "serve_on_ray: settings (and monitor) apply to reward specs; a factory builds its own app and would "
                "serve without them. Pass the specs (a spec file or document) with settings=..., or build them into "
                "the factory: lambda: create_app(build_served(specs), ServeSettings(monitor=...))"
            )
        return None
    if settings is None and monitor is None:
        return None
    from rewardsmith.adapters.runtime.serve.settings import ServeSettings

    if isinstance(settings, ServeSettings):
        if monitor is None:
            return settings
        values = settings.model_dump(exclude_unset=True)
    else:
        values = dict(settings or {})
    if monitor is not None:
        if values.get("monitor") is not None:
            raise ValueError("serve_on_ray: the monitor is given twice (monitor= and settings.monitor); give one")
        values["monitor"] = monitor
    return ServeSettings.model_validate(values)


def wait_running(name: str, timeout_s: float) -> None:
    """Block until the application is RUNNING; raise with Ray Serve's own message if it fails or stalls."""
    from ray import serve

    deadline = time.monotonic() + timeout_s
    status = ""
    while time.monotonic() < deadline:
        app = serve.status().applications.get(name)
        if app is None:
            status = "NOT_STARTED"
        else:
            status = str(app.status)
            if status.endswith("RUNNING"):
                return
            if status.endswith("DEPLOY_FAILED"):
                raise RuntimeError(f"Ray Serve application {name!r} failed to deploy: {app.message}")
        time.sleep(0.5)
    raise RuntimeError(f"Ray Serve application {name!r} not RUNNING after {timeout_s:g}s (status {status})")


def replica_count(name: str) -> int:
    """Running replicas of the application's ingress deployment (0 when it is not deployed)."""
    from ray import serve

    app = serve.status().applications.get(name)
    deployment = app.deployments.get(f"{name}-ingress") if app is not None else None
    if deployment is None:
        return 0
    return sum(count for state, count in deployment.replica_states.items() if str(state).endswith("RUNNING"))


def serve_until_interrupted(name: str) -> None:
    """Keep the application up until Ctrl-C or SIGTERM, then delete it from the cluster."""
    import signal
    import threading

    from ray import serve

    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(1.0):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        try:
            serve.delete(name)
        except Exception:
            logger.debug("deleting Ray Serve application %s failed", name, exc_info=True)


__all__ = [
    "AppSource",
    "ClusterUnavailable",
    "replica_count",
    "replica_settings",
    "serve_on_ray",
    "serve_until_interrupted",
    "wait_running",
]
