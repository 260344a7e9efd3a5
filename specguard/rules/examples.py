"""The launches that rule examples build from, each written once.

A rule's ``bad`` and ``good`` examples start from one of these and add only what the rule is about:
``Example(argv=(*LLAMA31_8B_EAGLE3, "--dtype", "float16"))``. Plain tuples: every check imports the
rule modules, so this module must cost nothing to import.
"""

from __future__ import annotations

# Target: Llama-3.1-8B-Instruct (LlamaForCausalLM), no speculative flags.
LLAMA31_8B = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct")

# Llama-3.1-8B-Instruct with its EAGLE3 draft head from LMSYS; steps, topk and draft tokens left to SGLang.
LLAMA31_8B_EAGLE3 = (
    *LLAMA31_8B, "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B",
)

# The same EAGLE3 launch drafting a chain: 3 steps, topk 1, 4 draft tokens.
LLAMA31_8B_EAGLE3_CHAIN = (
    *LLAMA31_8B_EAGLE3,
    "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
)

# Llama-3.1-8B-Instruct with the EAGLE (EAGLE-2) draft head from LMSYS (published for Llama-3-Instruct-8B).
LLAMA31_8B_EAGLE = (
    *LLAMA31_8B, "--speculative-algorithm", "EAGLE",
    "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
)

# The same EAGLE launch drafting a chain: 3 steps, topk 1, 4 draft tokens.
LLAMA31_8B_EAGLE_CHAIN = (
    *LLAMA31_8B_EAGLE,
    "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
)

# Llama-2-7b-chat with its EAGLE draft head from LMSYS.
LLAMA2_7B_EAGLE = (
    "--model-path", "meta-llama/Llama-2-7b-chat-hf", "--speculative-algorithm", "EAGLE",
    "--speculative-draft-model-path", "lmsys/sglang-EAGLE-llama2-chat-7B",
)

# Qwen3-8B with the z-lab DFlash block draft (its -b16 build).
QWEN3_8B_DFLASH = (
    "--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH",
    "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16",
)

# Qwen3-32B over 4 devices (tensor parallel) with the AngelSlim EAGLE3 draft: the sgl-jax rules' launch.
QWEN3_32B_TP4_EAGLE3 = (
    "--model-path", "Qwen/Qwen3-32B", "--tp-size", "4", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "AngelSlim/Qwen3-32B_eagle3",
)

# Qwen2.5-7B-Instruct with NGRAM speculation (no draft model).
QWEN25_7B_NGRAM = ("--model-path", "Qwen/Qwen2.5-7B-Instruct", "--speculative-algorithm", "NGRAM")

# GLM-5.2-FP8 over 8 devices (tensor parallel), no speculative flags, and the facts of its config.json
# (specguard/catalog/models/zai-org/GLM-5.2-FP8): a DSA target with one NextN (MTP) layer.
GLM52_FP8_TP8 = ("--model-path", "zai-org/GLM-5.2-FP8", "--tp", "8")
GLM52_FACTS = {"architectures": ("GlmMoeDsaForCausalLM",), "num_nextn_predict_layers": 1}
# DeepSeek-V3 as an MLA target: its architecture and its kv_lora_rank (deepseek-ai/DeepSeek-V3 config.json).
DEEPSEEK_V3_MLA_FACTS = {"architectures": ("DeepseekV3ForCausalLM",), "kv_lora_rank": 512}

# MiniMax-M3 (a MiniMax-M3 sparse target) over 8 devices with its EAGLE3 head as a chain of 3 steps.
MINIMAX_M3_TP8_EAGLE3 = (
    "--model-path", "MiniMaxAI/MiniMax-M3", "--tp", "8", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "Inferact/MiniMax-M3-EAGLE3", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
)

# DeepSeek-V3 over 8 devices with a separate DSPARK draft checkpoint (a local path, as below).
DEEPSEEK_V3_TP8_DSPARK = (
    "--model-path", "deepseek-ai/DeepSeek-V3", "--tp-size", "8", "--speculative-algorithm", "DSPARK",
    "--speculative-draft-model-path", "/ckpt/deepseek-v3-dspark",
)

# DeepSeek-V4-Flash with a separate DSPARK draft checkpoint (a local path: DSPARK drafts are trained
# per deployment).
DEEPSEEK_V4_FLASH_DSPARK = (
    "--model-path", "deepseek-ai/DeepSeek-V4-Flash", "--speculative-algorithm", "DSPARK",
    "--speculative-draft-model-path", "/ckpt/dspark-draft",
)
