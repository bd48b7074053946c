"""The optional extras: which modules each one brings, and the one wording of "this needs extra X".

``pyproject.toml``'s optional dependencies are the install side; this table is the import side, written once, so
the CLI's pre-flight check, the plugin registry (a plugin names its extra, :mod:`rewardsmith.plugins`) and the
library's own refusals all find a missing extra the same way (without importing it) and name the same install
command.
"""

from __future__ import annotations

import importlib.util

#: The modules each extra brings (pyproject.toml's optional dependencies), found without importing them.
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "sandbox": ("pyseccomp",),
    "docker": ("docker",),
    "judge": ("openai",),
    "judge-local": ("transformers", "torch"),
    "trl": ("trl", "transformers", "torch"),
    "audit": ("matplotlib",),
    "serve": ("fastapi", "uvicorn", "prometheus_client", "httpx"),
    "ray": ("ray",),
    "instructions": ("langdetect",),
    "skyrl": ("skyrl_gym",),
    "reasoning-gym": ("reasoning_gym",),
}


class MissingExtra(ValueError):
    """Something needs an optional extra that is not installed (the message names it and the install)."""


def importable(name: str) -> bool:
    """Whether module ``name`` can be imported here, found without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def install_command(extra: str) -> str:
    """``pip install 'rewardsmith[audit]'``."""
    return f"pip install 'rewardsmith[{extra}]'"


def absent_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (empty: the extra is installed)."""
    return [module for module in EXTRA_MODULES[extra] if not importable(module)]


def needs_text(extras: tuple[str, ...]) -> str:
    """What something that runs with any one of ``extras`` needs, and the install (of the first) that fixes it:
    ``"the 'judge-local' extra (torch missing) or the 'judge' extra: pip install 'rewardsmith[judge-local]'"``."""
    said = []
    for extra in extras:
        absent = absent_modules(extra)
        said.append(f"the '{extra}' extra" + (f" ({', '.join(absent)} missing)" if absent else ""))
    return f"{' or '.join(said)}: {install_command(extras[0])}"


def missing_extra(extra: str, what: str) -> str | None:
    """``"<what> needs the 'audit' extra (matplotlib missing): pip install 'rewardsmith[audit]'"``, or None."""
    if not absent_modules(extra):
        return None
    return f"{what} needs {needs_text((extra,))}"
