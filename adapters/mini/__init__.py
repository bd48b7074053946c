"""The mini trainer: GRPO, PPO, DPO, IPO, KTO, ORPO and a reward model in plain PyTorch on ``transformers`` models."""
