"""The mini trainer: GRPO, DPO, IPO, KTO and ORPO in plain PyTorch on ``transformers`` models."""
