"""The local backend: bubblewrap + seccomp + cgroups around a warm forkserver on this machine.

Host side: :mod:`.backend` (the ``LocalSandbox``), :mod:`.bwrap`, :mod:`.fallback`, :mod:`.forkserver_host`,
:mod:`.cgroups`, :mod:`.seccomp`. Inside the sandbox: ``forkserver_inside.py``, shipped as package data.
"""

from rewardsmith.sandboxes.local.backend import LocalSandbox

__all__ = ["LocalSandbox"]
