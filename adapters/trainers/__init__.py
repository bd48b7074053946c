"""Integrations with other trainers: TRL, verl, verifiers (OpenRLHF calls ``rewardkit serve``)."""
