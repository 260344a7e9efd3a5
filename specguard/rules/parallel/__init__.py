"""PL: parallelism and per-algorithm constraints (DP attention, PP, NGRAM, DFLASH)."""

RULES = ()
