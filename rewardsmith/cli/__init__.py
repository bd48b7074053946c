"""The ``rewardsmith`` command: one module per command, each adding its parser with ``add_commands``.

:mod:`.main` builds the parser from :data:`~rewardsmith.cli.main.COMMAND_MODULES` and dispatches; the commands only
parse arguments and call library runners, so everything a command does is also a Python call.
"""

from rewardsmith.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
