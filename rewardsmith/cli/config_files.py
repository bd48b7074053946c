"""Config files read by the CLI (``--config @FILE``, ``train --config FILE``): a YAML mistake is one line.

The reading itself is :mod:`rewardsmith.yaml_files` (the one YAML reader, shared with specs and constitutions);
these names stay for the CLI modules that import them from here.
"""

from __future__ import annotations

from rewardsmith.yaml_files import read_yaml_file, yaml_problem

__all__ = ["read_yaml_file", "yaml_problem"]
