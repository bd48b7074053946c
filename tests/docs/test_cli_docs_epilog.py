"""``rewardsmith --help`` and every command's ``--help`` end with the docs page that explains the command."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from rewardsmith.cli.docs_pages import DOC_PAGES, doc_page
from rewardsmith.cli.main import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs"


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, (*path, name))


COMMANDS = list(commands(build_parser()))


def test_every_mapped_page_exists():
    assert all((DOCS / page).is_file() for page in DOC_PAGES.values()), DOC_PAGES


@pytest.mark.parametrize("path,parser", COMMANDS, ids=[" ".join(p) or "rewardsmith" for p, _ in COMMANDS])
def test_help_ends_with_its_docs_page(path, parser):
    page = doc_page(path)
    assert page is not None and (DOCS / page).is_file()
    assert parser.format_help().rstrip().endswith(f"docs: docs/{page}")


def test_the_page_explains_the_command():
    """Each page named for a command mentions it (``rewardsmith audit reward`` on reward-audit.md, ...)."""
    for path, _ in COMMANDS:
        if len(path) >= 1:
            text = (DOCS / doc_page(path)).read_text()
            assert f"rewardsmith {path[0]}" in text or f"`{path[0]}`" in text, (path, doc_page(path))


@pytest.mark.parametrize("argv", [[], ["audit", "reward"], ["train", "ppo"], ["sandbox", "serve"]])
def test_python_dash_m_help_prints_the_page(argv):
    done = subprocess.run(
        [sys.executable, "-m", "rewardsmith", *argv, "--help"], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.rstrip().endswith(f"docs: docs/{doc_page(tuple(argv))}")
