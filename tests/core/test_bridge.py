"""The one sync/async bridge: each judge strategy's sync face works from plain code, from inside a running event loop
(where ``asyncio.run`` refuses) and from many threads at once, against a real OpenAI-compatible server on 127.0.0.1;
each thread keeps its loop, so sync calls reuse the client's connections, and closing a loop closes them."""

from __future__ import annotations

import asyncio
import contextvars
import multiprocessing
import subprocess
import sys
import threading

import pytest

from rewardsmith.bridge import close_thread_loop, run_inline, run_sync, to_async
from rewardsmith.judges.clients.factory import make_client
from rewardsmith.judges.criteria import CriteriaJudge, Criterion, Rubric
from rewardsmith.judges.group import GroupJudge
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.rank import RankJudge
from rewardsmith.judges.scale import ScaleJudge
from tests.support.fault_server import FaultServer

RUBRIC = Rubric(criteria=(Criterion(id="correct", description="The answer is right.", required=True),))


def _pairwise(client):
    return lambda: PairwiseJudge(client).judge("What is 2+2?", "4", "5").prob_a


def _rubric(client):
    return lambda: ScaleJudge(client, scale=5).judge("What is 2+2?", "4").normalized


def _rank(client):
    return lambda: RankJudge(client).judge("What is 2+2?", ["4", "5", "four"]).order


def _criteria(client):
    return lambda: CriteriaJudge(client, RUBRIC, structured=False).judge("What is 2+2?", "4").score


def _group(client):
    return lambda: GroupJudge(client, permutations=2, structured=False).judge("What is 2+2?", ["4", "5"]).scores


# (strategy, the server's answer to every request, the verdict every face must give)
STRATEGIES = [
    # "A" at P=0.7 in both orders: 0.7 A-first, 1 - 0.7 B-first, averaged
    (_pairwise, "A", pytest.approx(0.5)),
    # " 4" at 0.7, " 3" at 0.3: expected score 3.7 on 1..5
    (_rubric, "Score: 4", pytest.approx((3.7 - 1) / 4)),
    (_rank, "A", [0, 1, 2]),  # every pair ties (position-driven), so the given order stands
    (_criteria, '{"criteria": {"correct": {"met": true, "reason": "right"}}}', 1.0),
    (_group, '{"scores": {"1": 9, "2": 3}}', [pytest.approx(0.6)] * 2),  # (9 + 3) / 2 / 10: reversed order swaps them
]


@pytest.fixture
def server_answering():
    servers: list[FaultServer] = []

    def start(answer: str) -> FaultServer:
        server = FaultServer(default_answer=answer)
        servers.append(server.__enter__())
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def _client(server: FaultServer):
    # retries: 8 threads open dozens of connections at once against a listen backlog of 5
    return make_client("openai", model="fault-judge", base_url=server.base_url, timeout=10.0, max_retries=3)


@pytest.mark.parametrize(("strategy", "answer", "expected"), STRATEGIES, ids=lambda v: getattr(v, "__name__", None))
def test_sync_face_from_plain_code_and_inside_a_running_loop(server_answering, strategy, answer, expected):
    client = _client(server_answering(answer))
    call = strategy(client)
    assert call() == expected
    assert call() == expected

    async def inside_a_loop():
        return call()  # a sync face called by a coroutine: asyncio.run would refuse here

    assert asyncio.run(inside_a_loop()) == expected
    assert asyncio.run(inside_a_loop()) == expected
    # one SDK client per kept loop (this thread's and its worker's), not one per call
    assert len(client.transport._async_clients) == 2
    close_thread_loop()
    assert client.transport._async_clients == {}  # closing the kept loops closed their connections


@pytest.mark.parametrize(("strategy", "answer", "expected"), STRATEGIES, ids=lambda v: getattr(v, "__name__", None))
def test_sync_face_from_eight_threads_at_once(server_answering, strategy, answer, expected):
    server = server_answering(answer)
    client = _client(server)
    call = strategy(client)
    barrier = threading.Barrier(8)
    results: list[object] = [None] * 8
    errors: list[BaseException] = []

    def work(i: int) -> None:
        barrier.wait()
        try:
            results[i] = call()
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert results == [expected] * 8
    assert len(client.transport._async_clients) == 8  # each thread's own loop, none shared
    close_thread_loop()  # closes the loops of the threads that have ended
    assert client.transport._async_clients == {}


def test_sync_calls_reuse_the_connection_of_the_kept_loop(server_answering):
    server = server_answering("Score: 4")
    client = _client(server)
    judge = ScaleJudge(client, scale=5)
    close_thread_loop()
    for _ in range(5):
        assert judge.judge("What is 2+2?", "4").normalized == pytest.approx((3.7 - 1) / 4)
    assert (len(server.requests), server.connections) == (5, 1)

    async def inside_a_loop():
        return judge.judge("What is 2+2?", "4").normalized

    for _ in range(3):
        assert asyncio.run(inside_a_loop()) == pytest.approx((3.7 - 1) / 4)
    assert (len(server.requests), server.connections) == (8, 2)  # the worker thread's loop: one more
    close_thread_loop()
    judge.judge("What is 2+2?", "4")
    assert server.connections == 3  # a closed loop's connections are gone: the next loop opens its own
    close_thread_loop()


def test_run_sync_keeps_context_variables_and_raises_what_the_coroutine_raised():
    who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")

    async def read():
        return who.get()

    async def fail():
        raise KeyError("lost")

    async def outer():
        who.set("caller")
        return run_sync(read())

    assert asyncio.run(outer()) == "caller"
    with pytest.raises(KeyError, match="lost"):
        run_sync(fail())
    with pytest.raises(KeyError, match="lost"):
        asyncio.run(_inside(fail))


async def _inside(make):
    return run_sync(make())


class _Client:
    """Records the loops it was closed on."""

    def __init__(self, closed: list[int]) -> None:
        self.closed = closed

    async def aclose(self) -> None:
        self.closed.append(id(asyncio.get_running_loop()))


async def _loop_id() -> int:
    return id(asyncio.get_running_loop())


async def _fail():
    raise RuntimeError("boom")


def test_close_thread_loop_closes_the_client_on_its_loop_even_when_the_coroutine_failed():
    closed: list[int] = []
    client = _Client(closed)
    close_thread_loop()
    with pytest.raises(RuntimeError):
        run_sync(_fail(), close=client)
    loop = run_sync(_loop_id(), close=client)
    assert closed == []  # kept open between calls
    close_thread_loop()
    assert closed == [loop]  # once, on the loop that ran both calls


def test_a_client_that_cannot_be_weakly_referenced_is_closed_after_each_call():
    closed: list[int] = []

    class Slotted:
        __slots__ = ()

        async def aclose(self) -> None:
            closed.append(id(asyncio.get_running_loop()))

    loop = run_sync(_loop_id(), close=Slotted())
    assert closed == [loop]
    with pytest.raises(RuntimeError):
        run_sync(_fail(), close=Slotted())
    assert closed == [loop, loop]


def test_an_ended_threads_loop_is_closed_with_its_clients():
    closed: list[int] = []
    loops: list[int] = []
    client = _Client(closed)  # the bridge holds clients weakly: one nobody holds has no connections left to close
    worker = threading.Thread(target=lambda: loops.append(run_sync(_loop_id(), close=client)))
    worker.start()
    worker.join()
    assert closed == []
    close_thread_loop()  # the thread has ended: its loop is closed by the next crossing that looks
    assert closed == loops


def test_tasks_left_behind_are_cancelled_when_the_coroutine_returns():
    events: list[str] = []

    async def background():
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise

    async def leave_one():
        asyncio.get_running_loop().create_task(background())
        await asyncio.sleep(0)
        return 1

    assert run_sync(leave_one()) == 1
    assert events == ["cancelled"]


def test_the_loops_are_closed_at_interpreter_exit():
    program = (
        "import asyncio\n"
        "from rewardsmith.bridge import run_sync\n"
        "class C:\n"
        "    async def aclose(self):\n"
        "        print('closed', flush=True)\n"
        "async def one():\n"
        "    return 1\n"
        "client = C()\n"
        "async def inside():\n"
        "    return run_sync(one(), close=client)\n"
        "print(run_sync(one(), close=client), asyncio.run(inside()), flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split("\n") == ["1 1", "closed", "closed", ""]  # this thread's loop and its worker's
    assert done.stderr == ""


def _child_loop(queue) -> None:
    queue.put(run_sync(_loop_id()))


@pytest.mark.skipif(sys.platform != "linux", reason="fork start method")
def test_a_forked_child_opens_its_own_loop():
    parent = run_sync(_loop_id())
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_loop, args=(queue,))
    child.start()
    in_child = queue.get(timeout=30)
    child.join(30)
    assert child.exitcode == 0
    assert in_child != parent  # the parent's loop object exists in the child's memory, unused
    assert run_sync(_loop_id()) == parent  # and the parent goes on with its own


def test_run_inline_needs_no_loop_and_refuses_real_io():
    async def never_suspends():
        return 7

    async def suspends():
        await asyncio.sleep(0)
        return 7

    assert run_inline(never_suspends()) == 7
    with pytest.raises(RuntimeError, match="awaited real I/O"):
        run_inline(suspends())


def test_to_async_runs_a_blocking_call_off_the_loop():
    loop_thread: list[int] = []

    async def main():
        loop_thread.append(threading.get_ident())
        return await to_async(threading.get_ident)

    worker = asyncio.run(main())
    assert worker != loop_thread[0]
