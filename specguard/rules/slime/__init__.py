"""SL: slime rollouts (--sglang-* flags) on SGLang."""

RULES = ()
