"""VB: known bugs and renamed flags of specific SGLang versions."""

RULES = ()
