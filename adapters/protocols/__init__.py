"""rewardsmith on the wire protocols environments speak: one verdict per sample, written the way each reads it.

- :mod:`.verdict` — a sample scored by every term of a spec: the combined reward, each term's score, the reasons;
- :mod:`.harbor` — Harbor's verifier files (``/logs/verifier/reward.json`` and the reason beside it), written by
  ``rewardsmith grade`` from a task's ``tests/test.sh``;
- :mod:`.nemo_gym` — NeMo Gym's ``/verify`` request and response (``rewardsmith serve`` answers it);
- :mod:`.openenv` — a spec as an OpenEnv rubric (``spec_rubric``), scored inside an environment's ``step()``.
"""
