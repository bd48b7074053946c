"""Names the registry and CLI tests share."""

#: The rewards every install registers (no optional extra needed).
CORE_REWARD_NAMES = (
    "think_format",
    "tag_count",
    "regex_match",
    "json_schema",
    "soft_overlong",
    "cosine_length",
    "repetition_penalty",
    "weighted_sum",
    "gate",
    "route",
)
