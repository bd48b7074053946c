"""Judge transports behind one ``ChatClient`` protocol: an OpenAI-compatible endpoint, an in-process
``transformers`` model, and the embedded llama.cpp server; :mod:`.factory` picks one from a config."""
