"""Build the docker sandbox image offline: nothing is pulled from a registry.

A Debian root filesystem is made with ``debootstrap --variant=minbase`` (from the Debian mirror, an ordinary
package archive), an unprivileged user is added, and the tree is imported with ``docker import``. The root
filesystem tarball is cached (default ``/var/cache/rewardsmith``), keyed by suite and package list, so a rebuild
after ``docker rmi`` or on a fresh engine takes seconds instead of minutes.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

logger = logging.getLogger(__name__)

DEFAULT_IMAGE = "rewardsmith-sandbox:latest"
SANDBOX_USER = "sandbox"
SANDBOX_UID = 10001
SANDBOX_HOME = "/sandbox"

#: Interpreters and compilers for the languages ``code_tests`` speaks: Python, C++, JavaScript, Java, Go, Rust.
DEFAULT_PACKAGES = ("python3", "g++", "nodejs", "default-jdk-headless", "golang-go", "rustc")
#: Image label holding the spec's cache key, so an image built from another package list is rebuilt.
SPEC_LABEL = "io.rewardsmith.sandbox.spec"

# Removed from the tree before packing: they only make the image bigger.
_PRUNE = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info")


class ImageSpec(BaseModel):
    """What goes into the image. Changing any field changes the cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str = DEFAULT_IMAGE
    suite: str = "bookworm"
    mirror: str = "http://deb.debian.org/debian"
    packages: tuple[str, ...] = DEFAULT_PACKAGES
    cache_dir: Path = Field(default_factory=lambda: Path(os.environ.get("REWARDSMITH_CACHE", "/var/cache/rewardsmith")))

    @property
    def cache_key(self) -> str:
        text = "|".join([self.suite, self.mirror, *sorted(self.packages), str(SANDBOX_UID), "v1"])
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    @property
    def rootfs_tarball(self) -> Path:
        return self.cache_dir / f"rootfs-{self.suite}-{self.cache_key}.tar"


def import_changes(spec: ImageSpec | None = None) -> list[str]:
    """Dockerfile instructions applied at import: run as the unprivileged user in its home by default."""
    label = [f"LABEL {SPEC_LABEL}={spec.cache_key}"] if spec is not None else []
    return [
        *label,
        f"USER {SANDBOX_UID}:{SANDBOX_UID}",
        f"WORKDIR {SANDBOX_HOME}",
        "ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1",
        'CMD ["sleep", "infinity"]',
    ]


def debootstrap_rootfs(spec: ImageSpec, target: Path, timeout_s: float = 1800) -> None:
    """Run debootstrap into ``target`` (needs root and the ``debootstrap`` tool)."""
    if shutil.which("debootstrap") is None:
        raise RuntimeError("debootstrap is not installed (apt-get install debootstrap)")
    if os.geteuid() != 0:
        raise RuntimeError("debootstrap needs root")
    cmd = [
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(spec.packages)}",
        spec.suite,
        str(target),
        spec.mirror,
    ]
    logger.info("running %s", " ".join(cmd))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RuntimeError(f"debootstrap failed (exit {proc.returncode}):\n{tail}")


def add_sandbox_user(root: Path) -> None:
    """Append the unprivileged user and its group, and create its home owned by it."""
    with open(root / "etc/passwd", "a") as f:
        f.write(f"{SANDBOX_USER}:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:{SANDBOX_HOME}:/usr/sbin/nologin\n")
    with open(root / "etc/group", "a") as f:
        f.write(f"{SANDBOX_USER}:x:{SANDBOX_UID}:\n")
    home = root / SANDBOX_HOME.lstrip("/")
    home.mkdir(exist_ok=True)
    os.chown(home, SANDBOX_UID, SANDBOX_UID)


def prune_rootfs(root: Path) -> None:
    for rel in _PRUNE:
        path = root / rel
        if path.is_dir():
            for child in path.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)


def build_rootfs_tarball(spec: ImageSpec) -> Path:
    """The cached root filesystem tarball, made with debootstrap on a cache miss."""
    tarball = spec.rootfs_tarball
    if tarball.is_file():
        logger.info("using cached root filesystem %s", tarball)
        return tarball
    spec.cache_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rootfs-", dir=spec.cache_dir) as tmp:
        root = Path(tmp) / "root"
        root.mkdir()
        debootstrap_rootfs(spec, root)
        add_sandbox_user(root)
        prune_rootfs(root)
        partial = tarball.with_suffix(".tar.partial")
        with tarfile.open(partial, "w") as tar:
            for entry in sorted(os.listdir(root)):
                tar.add(root / entry, arcname=entry)
        partial.rename(tarball)
    return tarball


def import_image(spec: ImageSpec, tarball: Path, client=None) -> str:
    """``docker import`` the tarball as ``spec.image``; returns the image id."""
    import docker

    client = client or docker.from_env(version="auto")
    repository, _, tag = spec.image.rpartition(":") if ":" in spec.image.split("/")[-1] else (spec.image, "", "latest")
    client.api.import_image_from_file(
        str(tarball), repository=repository, tag=tag or "latest", changes=import_changes(spec)
    )
    return client.images.get(spec.image).id


def build_image(spec: ImageSpec | None = None, client=None, force: bool = False) -> str:
    """Make sure ``spec.image`` exists and was built from ``spec``; returns its id.

    An image of that name built from another package list (its label differs) is rebuilt; ``force`` rebuilds
    in any case (the cached root filesystem tarball stays).
    """
    import docker

    spec = spec or ImageSpec()
    client = client or docker.from_env(version="auto")
    if not force:
        try:
            image = client.images.get(spec.image)
            if (image.labels or {}).get(SPEC_LABEL) == spec.cache_key:
                return image.id
            logger.info("image %s was built from another spec: rebuilding", spec.image)
        except docker.errors.ImageNotFound:
            pass
    tarball = build_rootfs_tarball(spec)
    return import_image(spec, tarball, client)
