"""RS: what SGLang's own argument resolution will set or change, shown before launch."""

from specguard.rules.resolution import RS001_sglang_will_set_values as RS001

RULES = (RS001.RULE,)
