"""JX: sgl-jax (TPU) speculative decoding."""

RULES = ()
