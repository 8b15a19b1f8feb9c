"""The networks that generate runs: a GPT-style decoder (Flax) and word2vec (plain JAX)."""
