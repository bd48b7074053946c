"""Every command's ``--help`` ends with the documentation page that explains it (a page of docs/, the site's source).

The most specific entry wins: ``audit reward`` has a page of its own, the other ``audit`` commands share one.
``tests/docs/test_cli_docs_epilog.py`` checks that every command has a page and that the page exists.
"""

from __future__ import annotations

import argparse

#: Command path (space-separated, "" for ``rewardsmith`` itself) -> page under docs/.
DOC_PAGES: dict[str, str] = {
    "": "index.md",
    "rewards": "concepts.md",
    "score": "concepts.md",
    "samples": "concepts.md",
    "sandbox": "sandboxes.md",
    "judge": "judges.md",
    "constitutions": "rlaif.md",
    "rlaif": "rlaif.md",
    "audit": "audit.md",
    "audit reward": "reward-audit.md",
    "train": "trainer.md",
    "train rm": "rewards/judges.md",
    "serve": "scale.md",
    "grade": "integrations/harbor.md",
    "rescore": "rescore.md",
}


def doc_page(path: tuple[str, ...]) -> str | None:
    """The page for a command path: its own entry, else its nearest parent's."""
    for end in range(len(path), -1, -1):
        page = DOC_PAGES.get(" ".join(path[:end]))
        if page is not None:
            return page
    return None


def docs_line(page: str) -> str:
    return f"docs: docs/{page}"


def add_doc_epilogs(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> None:
    """Append the ``docs: docs/PAGE.md`` line to the epilog of ``parser`` and of every sub-command under it."""
    page = doc_page(path)
    if page is not None:
        parser.epilog = f"{parser.epilog}\n\n{docs_line(page)}" if parser.epilog else docs_line(page)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                add_doc_epilogs(child, (*path, name))
