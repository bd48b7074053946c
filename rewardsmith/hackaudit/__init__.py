"""Reward hackability audit: adversarial completions against a reward spec, scored on the user's own rows.

``rewardsmith audit reward`` (:func:`rewardsmith.hackaudit.runner.run_reward_audit`) builds the spec, infers which
kinds of reward it holds (:mod:`.spec_kinds`), generates every applicable attack's completions for every row
(:mod:`.attacks`, extensible through the ``rewardsmith.attacks`` entry-point group), scores them together with
honest controls (:mod:`.controls`) and writes metrics, examples and the report (:mod:`.report`).
"""
