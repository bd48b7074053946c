"""LLM judges: clients (OpenAI-compatible, local transformers, embedded llama.cpp) and judging strategies."""
