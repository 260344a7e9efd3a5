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
from specguard.rules.sgl_jax import JX230_target_lacks_draft_hooks as JX230
from specguard.rules.sgl_jax import JX231_multi_layer_mtp_steps as JX231
from specguard.rules.sgl_jax import JX232_dflash_qwen3_needs_target_layer_ids as JX232
from specguard.rules.sgl_jax import JX233_draft_runner_sampler_rng_missing as JX233
from specguard.rules.sgl_jax import JX234_eagle_verify_ignores_grammar as JX234
from specguard.rules.sgl_jax import JX235_eagle3_draft_aux_layers_ignored as JX235
from specguard.rules.sgl_jax import JX236_simulated_acceptance_in_serving as JX236
from specguard.rules.sgl_jax import JX237_dflash_block_beyond_trained as JX237
from specguard.rules.sgl_jax import JX238_aot_dispatch_dropped_with_speculation as JX238
from specguard.rules.sgl_jax import JX239_draft_class_not_registered as JX239

RULES = (JX001.RULE, JX002.RULE, JX003.RULE, JX004.RULE, JX005.RULE, JX006.RULE, JX007.RULE, JX008.RULE, JX080.RULE,
         JX230.RULE, JX231.RULE, JX232.RULE, JX233.RULE, JX234.RULE, JX235.RULE,
         JX236.RULE, JX237.RULE, JX238.RULE, JX239.RULE)
