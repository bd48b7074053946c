"""Integrations with other trainers: TRL, verl, verifiers (OpenRLHF calls ``rewardsmith serve``)."""
