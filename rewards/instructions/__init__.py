"""Verifiable instruction following: IFEval's 25 instruction types and RLVR ground truths, strict and loose."""

from rewardsmith.rewards.instructions.reward import InstructionFollowing  # noqa: F401  (registers on import)
