"""Everything that connects rewards and judges to something else, grouped by kind.

- :mod:`.spec` — the reward spec every trainer integration reads (weighted, gated, routed terms);
- :mod:`.trainers` — integrations with other trainers: TRL (``trl``, ``environments``), verl (``verl``,
  ``verl_calls``), verifiers; OpenRLHF needs no module, it calls ``rewardsmith serve`` (``/get_reward``);
- :mod:`.runtime` — where rewards run when one process is not enough: the reward server (``serve``), Ray
  (``ray``, imported through :mod:`rewardsmith.ray`), the ``remote`` reward that calls a server;
- :mod:`.mini` — rewardsmith's own trainer (GRPO, PPO, DPO, IPO, KTO, ORPO, reward models);
- :mod:`.demo` — the procedural tasks and tiny offline model of the quick start.

Modules that lived directly in this package before the grouping still import under their old names
(``rewardsmith.adapters.verl`` in a verl config keeps working), with a :class:`DeprecationWarning` naming the new one.
"""

from rewardsmith.adapters.moved import install_moved_names

install_moved_names()
