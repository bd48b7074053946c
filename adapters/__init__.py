"""Everything that connects rewards and judges to something else, grouped by kind.

- :mod:`.spec` — the reward spec every trainer integration reads (weighted, gated, routed terms);
- :mod:`.trainers` — integrations with other trainers: TRL (``trl``, ``environments``), verl (``verl``,
  ``verl_calls``), verifiers; OpenRLHF needs no module, it calls ``rewardsmith serve`` (``/get_reward``);
- :mod:`.protocols` — the environment protocols: Harbor's verifier files (``rewardsmith grade``), NeMo Gym's
  ``/verify`` (``rewardsmith serve``), OpenEnv rubrics;
- :mod:`.runtime` — where rewards run when one process is not enough: the reward server (``serve``), Ray
  (``ray``, imported through :mod:`rewardsmith.ray`), the ``remote`` reward that calls a server;
- :mod:`.mini` — rewardsmith's own trainer (GRPO, PPO, DPO, IPO, KTO, ORPO, reward models);
- :mod:`.demo` — the procedural tasks and tiny offline model of the quick start.
"""
