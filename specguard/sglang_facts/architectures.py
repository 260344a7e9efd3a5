"""SGLang's model families by architecture (``config.json`` ``architectures[0]``): the sets of
target classes that share an attention backend, a KV pool or a model hook, one table each, so
every rule that reads a family reads the same classes. Each set cites where SGLang names them."""

from __future__ import annotations

# The target classes whose KV pool is sized by DSV4PoolConfigurator (is_deepseek_v4, 0.5.18
# configs/model_config.py:137-142, on the hybrid-SWA path).
DSV4_ARCHITECTURES = frozenset(
    {
        "DeepseekV4ForCausalLM",
        "DeepseekV4ForCausalLMNextN",
        "DeepseekV4ForCausalLMDSpark",
    }
)

# The DSA (sparse-attention indexer) classes SGLang's is_deepseek_dsa() names whose config always carries
# index_topk (0.5.17 configs/model_config.py:106-121); DeepseekV3ForCausalLM counts only with index_topk,
# which specguard does not read, so it stays out.
DSA_ARCHITECTURES = frozenset({"DeepseekV32ForCausalLM", "GlmMoeDsaForCausalLM"})

# SGLang's is_deepseek_nsa: architectures[0] is one of these and config.json carries index_topk
# (0.5.3rc2 and 0.5.3.post3 configs/model_config.py:52-58).
NSA_ARCHITECTURES = frozenset({"DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM"})

# The targets whose linear-attention layers run SGLang's GDNAttnBackend: the architectures of the
# configs `ModelRunner.hybrid_gdn_config` accepts (0.5.15.post1 model_runner.py:2341-2353; Qwen3.5's
# text configs subclass Qwen3NextConfig; InternS2Preview joined in 0.5.12).
GDN_ARCHITECTURES = frozenset(
    {
        "Qwen3NextForCausalLM",
        "Qwen3_5ForConditionalGeneration",
        "Qwen3_5MoeForConditionalGeneration",
        "InternS2PreviewForConditionalGeneration",
        "JetNemotronForCausalLM",
        "JetVLMForConditionalGeneration",
    }
)

# The targets whose config SGLang reads as kimi_linear and gives the KDA linear-attention backend
# (0.5.16 attention_registry.py:399-400); the same two get the Kimi speculative hook from 0.5.17.
KDA_ARCHITECTURES = frozenset(
    {"KimiLinearForCausalLM", "KimiK3ForConditionalGeneration"}
)

# The MiniMax-M3 entry classes whose attention runs on minimax_sparse_backend (0.5.21 models/minimax_m3.py,
# models/minimax_m3_vl.py).
MINIMAX_M3_SPARSE_ARCHITECTURES = frozenset(
    {"MiniMaxM3SparseForCausalLM", "MiniMaxM3SparseForConditionalGeneration"}
)

# The targets whose model class defines get_attention_sliding_window_size, which the model runner reads
# into sliding_window_size and fa3 into has_swa (0.5.1.post3 and 0.5.6 models/gemma2.py, gemma3_causal.py,
# gemma3_mm.py, gemma3n_causal.py, gemma3n_mm.py, gpt_oss.py; the same in 0.5.23).
SWA_METHOD_ARCHITECTURES = frozenset(
    {
        "Gemma2ForCausalLM",
        "Gemma3ForCausalLM",
        "Gemma3ForConditionalGeneration",
        "Gemma3nForCausalLM",
        "Gemma3nForConditionalGeneration",
        "GptOssForCausalLM",
    }
)
