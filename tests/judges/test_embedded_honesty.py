"""The embedded judge says what it is worth: once per process, with its measured accuracy and how to point at a
real judge; its fallback warning names the install command once; a judge that cannot flip reports no flip rate."""

from __future__ import annotations

import logging

import pytest

from rewardsmith.constitutions.pairs import PairsSummary
from rewardsmith.judges.clients import embedded
from rewardsmith.judges.clients.embedded import (
    INSTALL_SERVER_HINT,
    MEASURED_ACCURACY,
    EmbeddedOptions,
    embedded_transport,
)


@pytest.fixture
def fresh_note(monkeypatch):
    monkeypatch.setattr(embedded, "_said", type(embedded._said)())


def test_the_plumbing_note_is_said_once_per_process_with_the_measured_figure(fresh_note, caplog):
    caplog.set_level(logging.WARNING, logger=embedded.__name__)
    for port in (1, 2):  # two clients, as an audit's judge and an RLAIF policy would build
        EmbeddedOptions(base_url=f"http://127.0.0.1:{port}/v1").transport()
    notes = [r.getMessage() for r in caplog.records if "plumbing default" in r.getMessage()]
    assert len(notes) == 1
    assert MEASURED_ACCURACY in notes[0] and "at chance" in notes[0]
    assert "--judge openai:MODEL" in notes[0] and "make_client('openai'" in notes[0]


def test_the_fallback_warning_names_the_install_command_once(monkeypatch, caplog):
    pytest.importorskip("transformers")
    missing = f"llama_cpp is not installed ({INSTALL_SERVER_HINT})"  # what llama_server_missing says without it
    monkeypatch.setattr(embedded, "llama_server_missing", lambda: missing)
    caplog.set_level(logging.WARNING, logger=embedded.__name__)
    embedded_transport()  # the in-process client loads lazily: nothing is loaded here
    (warning,) = [r.getMessage() for r in caplog.records if "in-process" in r.getMessage()]
    assert warning.count("pip install") == 1 and "llama-cpp-python[server]" in warning


@pytest.mark.parametrize(
    ("order_free", "flipped", "says", "never"),
    [
        (True, 0, "not measurable", "0/20"),
        (False, 0, "position flips: 0/20 (0%)", "not measurable"),
        (False, 15, "mostly follows the position", "not measurable"),
    ],
)
def test_a_judge_that_cannot_flip_reports_no_flip_rate(order_free, flipped, says, never):
    text = PairsSummary(pairs_total=20, judged=20, flipped=flipped, order_free=order_free).describe()
    assert says in text and never not in text
