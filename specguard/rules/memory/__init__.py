"""MM: GPU memory and CUDA graphs."""

RULES = ()
