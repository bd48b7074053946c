"""Every fenced example of README.md and docs/ runs as its info string says, with its printed values compared.

One test per fence, in page order: the examples of a page share a scratch directory (files one writes, the next
reads) and ``python continue`` shares the previous example's namespace.
"""

from __future__ import annotations

import pytest

from tests.docs.fences import EXAMPLES, Fence, pages, problems
from tests.docs.runner import PageState, check_output, run_python, run_shell, server, unmet_need, write_file

PAGES = pages()
FENCES = [fence for page in PAGES for fence in page.fences]
RUNNABLE = [f for f in FENCES if f.is_example() or "file" in f.options or "output" in f.options]
_states: dict[str, PageState] = {}
_failed: set[str] = set()


def test_the_docs_have_examples():
    assert len(PAGES) > 20 and sum(f.language == "python" for f in FENCES) > 15


def test_every_example_script_is_shown_and_run_by_a_page():
    """A script in docs/examples/ is written out by a page's ``file=`` fence (which a ``bash run`` fence runs)."""
    shown = {f.options["file"] for f in FENCES if "file" in f.options and f.body.strip()}
    scripts = sorted(p.name for p in EXAMPLES.glob("*.py"))
    assert scripts and set(scripts) <= shown, f"not shown by any page: {sorted(set(scripts) - shown)}"


@pytest.mark.parametrize("fence", FENCES, ids=[f.id for f in FENCES])
def test_fence_info_string_is_valid(fence: Fence):
    assert not problems(fence), f"{fence.id}: {'; '.join(problems(fence))}"


def slow_fences(fences: list[Fence]) -> set[str]:
    """Commands, servers, models and engines take seconds to minutes; plain python examples and files do not.
    An output block is as slow as the example it shows."""
    slow: set[str] = set()
    previous_slow = False
    for fence in fences:
        if "output" in fence.options:
            is_slow = previous_slow
        else:
            is_slow = fence.is_example() and (
                fence.language != "python" or bool(fence.needs()) or "server" in fence.options
            )
            previous_slow = is_slow
        if is_slow:
            slow.add(fence.id)
    return slow


SLOW = slow_fences(RUNNABLE)


@pytest.mark.parametrize(
    "fence", [pytest.param(f, marks=[pytest.mark.slow] if f.id in SLOW else [], id=f.id) for f in RUNNABLE]
)
def test_example_runs(fence: Fence, tmp_path_factory):
    if "skip" in fence.options:
        pytest.skip(f"{fence.id}: {fence.options['skip']}")
    for need in fence.needs():
        reason = unmet_need(need)
        if reason:
            _failed.add(fence.page)  # later `continue`/output fences of the page depend on this one
            pytest.skip(f"{fence.id}: {reason}")
    if fence.page in _failed and ("continue" in fence.options or "output" in fence.options):
        pytest.skip(f"{fence.id}: the example it continues did not run")
    state = _states.get(fence.page)
    if state is None:
        state = _states[fence.page] = PageState(tmp_path_factory.mktemp(fence.page.replace("/", "_")))
    try:
        if "file" in fence.options:
            write_file(fence, state)
        elif "output" in fence.options:
            check_output(fence, state)
        else:
            with server(fence.options.get("server"), state.workdir):
                if fence.language == "python":
                    run_python(fence, state)
                else:
                    note = run_shell(fence, state)
                    if note:
                        print(f"{fence.id}: {note}")
    except BaseException:
        _failed.add(fence.page)
        raise
    else:
        _failed.discard(fence.page)
