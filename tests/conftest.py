"""Shared fixtures. Tests never reach a hub: everything they load is built here or shipped in a package."""

from __future__ import annotations

import os
import tempfile

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# The host-wide math worker budget of this session's own: test runs side by side do not draw on each other's.
os.environ["REWARDSMITH_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="rewardsmith-test-runtime-")

# One llama.cpp judge server and one fault-injecting server for the whole session, shared by every module.
from tests.support.judge_fixtures import embedded_server, fault_server  # noqa: F401


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory):
    """A tiny Qwen2 chat model built offline (tokenizer + random weights), shared by the session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from rewardsmith.adapters.demo.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def tiny_rm_dir(tiny_model_dir, tmp_path_factory: pytest.TempPathFactory):
    """The tiny chat model's body with a one-output classification head (random), saved with its tokenizer."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp("tiny-rm")
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_model_dir, num_labels=1)
    model.config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny models on a small shared CPU train an order of magnitude faster on one thread than on all of them."""
    try:
        import torch
    except ImportError:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Hand host-harming modules to their PID-namespace wrapper when the session runs it (tests/support/pidns.py)."""
    from tests.sandboxes.test_hostile_in_pidns import HOST_HARMING_MODULES
    from tests.support.pidns import IN_OWN_PID_NAMESPACE, can_unshare_pid

    if IN_OWN_PID_NAMESPACE or not any(item.path.name == "test_hostile_in_pidns.py" for item in items):
        return
    if not can_unshare_pid():
        return
    harming = {module.rsplit("/", 1)[-1] for module in HOST_HARMING_MODULES}
    moved = [item for item in items if item.path.name in harming]
    if moved:
        config.hook.pytest_deselected(items=moved)
        items[:] = [item for item in items if item.path.name not in harming]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A test that fails because an optional extra is not installed is a skip that names the extra."""
    from tests.support.extras import extra_of_missing_module

    report = yield
    if report.failed and call.excinfo is not None:
        reason = extra_of_missing_module(call.excinfo.value)
        if reason:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {reason}")
    return report


@pytest.fixture(autouse=True, scope="session")
def _private_rewardsmith_cache(tmp_path_factory: pytest.TempPathFactory):
    """`rewardsmith audit` records audited sets in a user cache; the test suite keeps its own."""
    patch = pytest.MonkeyPatch()
    patch.setenv("REWARDSMITH_CACHE_DIR", str(tmp_path_factory.mktemp("rewardsmith-cache")))
    yield
    patch.undo()
