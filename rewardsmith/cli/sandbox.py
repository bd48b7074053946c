"""``rewardsmith sandbox …``: serve the SandboxFusion API, build the docker image, run one program."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rewardsmith.sandboxes.base import Limits, RunRequest
from rewardsmith.sandboxes.factory import SANDBOXES, open_backend


def add_commands(subparsers) -> None:
    sandbox = subparsers.add_parser("sandbox", help="run untrusted programs: serve, build-image, run")
    sub = sandbox.add_subparsers(metavar="ACTION")

    serve = sub.add_parser("serve", help="serve the SandboxFusion /run_code API on top of a backend")
    serve.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: local only)")
    serve.add_argument("--port", type=int, default=8080, help="port (0 picks a free one; the chosen one is printed)")
    serve.add_argument("--backend", default="local", choices=served_backends(), help="where programs run")
    serve.add_argument("--concurrency", type=int, default=4, help="programs running at once")
    serve.add_argument("--max-run-timeout", type=float, default=60.0, help="ceiling on a request's run_timeout (s)")
    serve.add_argument("--max-memory-mb", type=int, default=4096, help="ceiling on a request's memory_limit_MB")
    add_isolation_argument(serve)
    serve.set_defaults(func=cmd_serve, needs=backend_extras)

    build = sub.add_parser("build-image", help="build the docker sandbox image offline (debootstrap + docker import)")
    build.add_argument("--image", default=None, help="image name (default rewardsmith-sandbox:latest)")
    build.add_argument(
        "--packages",
        default=None,
        help="comma-separated Debian packages (default python3,g++,nodejs,default-jdk-headless,golang-go,rustc)",
    )
    build.add_argument("--force", action="store_true", help="re-import even if the image exists")
    build.set_defaults(func=cmd_build_image, needs=("docker",))

    run = sub.add_parser("run", help="run one program through a backend and print the result as JSON")
    run.add_argument("file", help="source file; its suffix picks the language unless --language is given")
    run.add_argument("--language", default=None, help="python, cpp, nodejs, java, go or rust (SandboxFusion names)")
    run.add_argument("--backend", default="local", choices=SANDBOXES.names())
    run.add_argument("--url", default=None, help="server URL for --backend remote")
    run.add_argument("--stdin", default=None, help="file whose content is the program's stdin")
    run.add_argument("--timeout", type=float, default=10.0, help="wall-clock limit in seconds")
    run.add_argument("--memory-mb", type=int, default=512)
    add_isolation_argument(run)
    run.set_defaults(func=cmd_run, needs=backend_extras)


def served_backends() -> list[str]:
    """The backends ``sandbox serve`` can put behind the API: every one that runs programs itself."""
    return [name for name in SANDBOXES.names() if not SANDBOXES.get(name).forwards]


def backend_extras(args: argparse.Namespace) -> tuple[str, ...]:
    """The extra the chosen ``--backend`` needs (checked before the command starts)."""
    extra = SANDBOXES.get(args.backend).extra
    return (extra,) if extra else ()


def make_backend(name: str, url: str | None = None, concurrency: int = 2, isolation: str = "strong"):
    """A backend by name through the sandbox table (imported lazily: a light install needs only what it uses)."""
    if name == "remote":
        if not url:
            raise ValueError("--backend remote needs --url (e.g. http://127.0.0.1:8080)")
        return open_backend("remote", base_url=url, concurrency=concurrency)
    return open_backend(name, offered={"isolation": isolation}, concurrency=concurrency)


def add_isolation_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--isolation",
        default="strong",
        choices=["strong", "weak"],
        help="local backend: 'strong' (default) refuses to run without bubblewrap; 'weak' opts in to running "
        "programs as plain subprocesses with rlimits and seccomp only",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from rewardsmith.sandboxes.fusion.server import ServerPolicy, make_server

    policy = ServerPolicy(max_run_timeout_s=args.max_run_timeout, max_memory_mb=args.max_memory_mb)
    backend = make_backend(args.backend, concurrency=args.concurrency, isolation=args.isolation)
    server = make_server(backend, host=args.host, port=args.port, concurrency=args.concurrency, policy=policy)
    host, port = server.server_address[:2]
    print(f"serving SandboxFusion API on http://{host!s}:{port} (backend {backend.name})", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
        backend.close()
    return 0


def cmd_build_image(args: argparse.Namespace) -> int:
    from rewardsmith.sandboxes.docker.image import DEFAULT_IMAGE, ImageSpec, build_image

    fields = {"image": args.image or DEFAULT_IMAGE}
    if args.packages:
        fields["packages"] = tuple(p.strip() for p in args.packages.split(",") if p.strip())
    spec = ImageSpec(**fields)
    image_id = build_image(spec, force=args.force)
    print(f"{spec.image} {image_id} (root filesystem cache {spec.rootfs_tarball})")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from rewardsmith.sandboxes.fusion.wire import language_for_suffix, program_request

    path = Path(args.file)
    language = args.language or language_for_suffix(path.suffix)
    stdin = Path(args.stdin).read_bytes() if args.stdin else b""
    limits = Limits(wall_time_s=args.timeout, cpu_time_s=args.timeout, memory_mb=args.memory_mb)
    request: RunRequest = program_request(path.read_text(), language, stdin=stdin, limits=limits)
    backend = make_backend(args.backend, args.url, isolation=args.isolation)
    try:
        result = backend.run(request)
    finally:
        backend.close()
    payload = result.model_dump(mode="json", exclude={"files", "stdout", "stderr"})
    payload["stdout"] = result.stdout.decode("utf-8", "replace")
    payload["stderr"] = result.stderr.decode("utf-8", "replace")
    json.dump(payload, sys.stdout, indent=2)
    print()
    return 0 if result.ok else 1
