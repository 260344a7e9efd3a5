"""JX: sgl-jax (TPU) speculative decoding."""

from specguard.rules.sgl_jax import JX001_paged_kv_needs_fa as JX001
from specguard.rules.sgl_jax import JX002_overlap_scheduler_speculative as JX002
from specguard.rules.sgl_jax import JX003_sglang_only_attention_backend as JX003
from specguard.rules.sgl_jax import JX004_chain_draft_tokens_not_rewritten as JX004
from specguard.rules.sgl_jax import JX005_sgl_jax_dflash_constraints as JX005
from specguard.rules.sgl_jax import JX006_tree_draft_unusable_on_tpu as JX006
from specguard.rules.sgl_jax import JX007_algorithm_not_in_sgl_jax as JX007
from specguard.rules.sgl_jax import JX008_sgl_jax_feature_refuses_speculation as JX008
from specguard.rules.sgl_jax import JX080_dflash_grammar_backend_default as JX080

RULES = (JX001.RULE, JX002.RULE, JX003.RULE, JX004.RULE, JX005.RULE, JX006.RULE, JX007.RULE, JX008.RULE, JX080.RULE)
