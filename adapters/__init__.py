"""Adapters to trainers: TRL GRPO/DPO, verl, and the mini trainer."""
