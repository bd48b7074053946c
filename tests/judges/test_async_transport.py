"""A transport writes only its async call; the sync face comes with the base and behaves the same everywhere."""

from __future__ import annotations

import asyncio
import threading

from rewardsmith.judges import AsyncTransport, ChatParams, ChatResult
from rewardsmith.judges.clients.factory import ManagedChatClient

ASK = [{"role": "user", "content": "a or b?"}]


class CountingTransport(AsyncTransport):
    """Answers with the loop and thread it ran on, and counts the loops' connections it was asked to close."""

    model = "counting"

    def __init__(self) -> None:
        self.closed = 0

    async def acomplete(self, messages, params):
        await asyncio.sleep(0)
        loop = id(asyncio.get_running_loop())
        return ChatResult(text=f"{messages[-1]['content']}|{loop}|{threading.get_ident()}", model=self.model)

    async def aclose(self) -> None:
        self.closed += 1


def test_the_sync_face_runs_the_async_call_on_the_threads_kept_loop():
    transport = CountingTransport()
    first = transport.complete(ASK, ChatParams()).text.split("|")
    second = transport.complete(ASK, ChatParams()).text.split("|")
    assert first[0] == "a or b?"
    assert first[1] == second[1]  # one kept loop: an HTTP transport reuses its connections between sync calls
    assert int(first[2]) == threading.get_ident()


def test_the_sync_face_works_inside_a_running_loop():
    transport = CountingTransport()

    async def caller() -> str:
        return transport.complete(ASK, ChatParams()).text  # a sync reward called from async code

    text = asyncio.run(caller())
    assert text.startswith("a or b?|") and int(text.split("|")[2]) != threading.get_ident()


def test_the_managed_client_caches_and_counts_what_an_async_only_transport_answers(tmp_path):
    from rewardsmith.judges.cache import RequestCache

    client = ManagedChatClient(CountingTransport(), cache=RequestCache(tmp_path))
    answered = client.complete(ASK, ChatParams())
    again = asyncio.run(client.acomplete(ASK, ChatParams()))
    assert again.cached and again.text == answered.text
    report = client.report()
    assert (report.requests, report.cache_hits) == (1, 1), report


def test_a_transport_without_acomplete_says_so():
    class Nothing(AsyncTransport):
        model = "nothing"

    try:
        Nothing().complete(ASK, ChatParams())
    except NotImplementedError as exc:
        assert "Nothing implements no acomplete" in str(exc)
    else:
        raise AssertionError("a transport without acomplete answered")
