"""DM: the draft and the target as a pair (dtype, context, vocabulary, architecture, MTP)."""

from specguard.rules.draft_model import DM001_draft_dtype_differs_from_target as DM001
from specguard.rules.draft_model import DM002_draft_context_shorter_than_target as DM002

RULES = (DM001.RULE, DM002.RULE)
