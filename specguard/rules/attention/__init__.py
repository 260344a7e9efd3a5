"""AB: attention backends and the hardware they need."""

RULES = ()
