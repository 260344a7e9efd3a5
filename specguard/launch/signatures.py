"""Known failure signatures in a runtime's log: what the line means, the rule that explains it, the fix.

One table, data only, read by the one matcher (specguard/diagnosis.py) next to the rules' own
``log_signatures``. Each signature names the SGLang issue or pull request whose log holds
the line (``source``); ``tests/launch/fixtures/sglang_log_excerpts.json`` quotes those lines
and the tests match every pattern against them.

``rules`` lists the rules that explain the failure, most specific first. When one of them
fired for this launch, its own fix is the one to try; otherwise ``fallback`` (flag edits that
get the server up at some cost) is offered. ``rules`` is empty where no rule applies (a port
already in use is about the machine, not the configuration).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from specguard.models import Edit


@dataclass(frozen=True)
class Signature:
    key: str
    pattern: re.Pattern[str]
    meaning: str
    rules: tuple[str, ...]
    advice: str
    source: str
    fallback: tuple[Edit, ...] = field(default=())


def _re(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


# Most specific first: a log often holds several of these lines (a capture failure *caused by*
# a dtype mismatch prints both), and the first match leads the diagnosis.
SIGNATURES: tuple[Signature, ...] = (
    Signature(
        key="dtype-mismatch",
        pattern=_re(r"mat1 and mat2 (must have|to have) the same dtype"),
        meaning="the draft and the target run in different dtypes (e.g. float16 draft, bfloat16 target)",
        rules=("DM001",),
        advice="pass one --dtype for both models (the draft's dtype, or one both were trained in)",
        source="https://github.com/sgl-project/sglang/pull/3431",
    ),
    Signature(
        key="mamba-no-buffer-radix-speculative",
        pattern=_re(r"not compatible with radix cache when using --mamba-scheduler-strategy no_buffer"),
        meaning="a hybrid mamba target (Qwen3-Next, Qwen3.5, ...) with speculative decoding and the radix cache under the no_buffer strategy, which SGLang 0.5.10-0.5.13 refuses",
        rules=("HY020",),
        advice="add --disable-radix-cache, or use --mamba-scheduler-strategy extra_buffer with SGLANG_ENABLE_SPEC_V2=1",
        source="https://github.com/sgl-project/sglang/pull/22908",
        fallback=(Edit(name="--disable-radix-cache", value=True),),
    ),
    Signature(
        key="mamba-extra-buffer-verify-none-track",
        # The frame above the TypeError line, as a traceback prints it (`in set_mamba_...`) or a
        # report retells the call chain (`-> set_mamba_track_indices_from_reqs()`).
        pattern=_re(r"\bset_mamba_track_indices_from_reqs\b"),
        meaning="a hybrid mamba target under speculative decoding with the extra_buffer strategy met a request with no mamba track index on the verify path (SGLang 0.5.13-0.5.15)",
        rules=("HY024",),
        advice="upgrade to SGLang 0.5.16 or later; on this release use --mamba-scheduler-strategy no_buffer with --disable-radix-cache",
        source="https://github.com/sgl-project/sglang/issues/27325",
    ),
    Signature(
        key="fa3-kernel-off-hopper",
        pattern=_re(r"hopper/flash_fwd_launch_template\.h.*no kernel image is available"),
        meaning="a FlashAttention 3 (Hopper) kernel ran on a GPU it has no image for: fa3 chosen, or built by a worker that ignores the backend choice (multi-layer EAGLE's V2 draft extend in 0.5.7-0.5.10)",
        rules=("AB021", "AB001"),
        advice="pick an --attention-backend this GPU runs; for multi-layer EAGLE on 0.5.7-0.5.10 add --disable-overlap-schedule or upgrade to 0.5.11",
        source="https://github.com/sgl-project/sglang/pull/19125",
    ),
    Signature(
        key="mla-only-backend-for-mha-draft",
        pattern=_re(r"trtllm_mla backend (can only be used with|requires) MLA model"),
        meaning="an MHA draft (a Llama-style EAGLE3 head) inherited the MLA target's trtllm_mla backend",
        rules=("AB020",),
        advice="give the draft its own backend: --speculative-draft-attention-backend trtllm_mha (topk 1, Blackwell) or flashinfer",
        source="https://github.com/sgl-project/sglang/pull/20298",
        fallback=(Edit(name="--speculative-draft-attention-backend", value="flashinfer"),),
    ),
    Signature(
        key="mha-draft-cleared-mla-chunked-prefix-cache",
        pattern=_re(r"assert not get_global_server_args\(\)\.disable_chunked_prefix_cache"),
        meaning="an MHA EAGLE head turned chunked prefix caching off for the whole process after the MLA target was set up to use it, and fa3's MLA prefill over a cached prefix asserted (SGLang 0.5.5-0.5.15)",
        rules=("AB080",),
        advice="add --disable-chunked-prefix-cache, or upgrade to SGLang 0.5.16",
        source="https://github.com/sgl-project/sglang/issues/22780",
        fallback=(Edit(name="--disable-chunked-prefix-cache", value=True),),
    ),
    Signature(
        key="multi-layer-eagle-not-a-chain",
        pattern=_re(r"multi-layer EAGLE requires speculative_num_draft_tokens == speculative_num_steps \+ 1"),
        meaning="multi-layer EAGLE drafts a chain, but the draft tokens are not steps + 1 (often SGLang's automatic tree)",
        rules=("SP020",),
        advice="set --speculative-eagle-topk 1 and --speculative-num-draft-tokens to --speculative-num-steps + 1",
        source="https://github.com/sgl-project/sglang/issues/36536",
    ),
    Signature(
        key="sliding-window-eagle-metadata",
        pattern=_re(r"unsupported operand type\(s\) for -: 'Tensor' and 'NoneType'"),
        meaning="EAGLE's verify/draft-extend pass on a sliding-window target found no sliding-window metadata (flashinfer, triton)",
        rules=("HY021",),
        advice="use --attention-backend fa3 on Hopper; elsewhere serve this target without EAGLE",
        source="https://github.com/sgl-project/sglang/issues/22679",
    ),
    Signature(
        key="draft-kv-pool-without-layers",
        pattern=_re(r"MLATokenToKVPool\.set_mla_kv_buffer|in set_mla_kv_buffer"),
        meaning="the draft's KV pool has no layers: its config.json says num_nextn_predict_layers: 0, which SGLang before 0.5.13 reads as an MTP module with zero layers",
        rules=("DM020",),
        advice="remove num_nextn_predict_layers from the draft's config.json, or run SGLang 0.5.13 or later",
        source="https://github.com/sgl-project/sglang/pull/26726",
    ),
    Signature(
        key="aiter-max-split-per-batch",
        pattern=_re(r"'AiterAttnBackend' object has no attribute 'max_split_per_batch'"),
        meaning="the aiter backend's speculative CUDA-graph path read an MLA-only attribute on a non-MLA target (0.5.6.post2-0.5.9)",
        rules=("AB061",),
        advice="use --attention-backend triton, or SGLang 0.5.10+",
        source="https://github.com/sgl-project/sglang/issues/16027",
    ),
    Signature(
        key="ngram-trie-squeeze-abort",
        pattern=_re(r"sglang::ngram::Trie::squeeze"),
        meaning="the NGRAM trie ran out of nodes to evict: its capacity is not above its max trie depth",
        rules=("SP060",),
        advice="raise --speculative-ngram-capacity above --speculative-ngram-max-trie-depth (or drop it: the default is 10,000,000)",
        source="https://github.com/sgl-project/sglang/issues/36495",
    ),
    Signature(
        key="rocm-ngram-tree-op-missing",
        pattern=_re(r"has no attribute 'reconstruct_indices_from_tree_mask'"),
        meaning="NGRAM's verify called an sgl_kernel op the ROCm build does not register (before 0.5.23)",
        rules=("PL004",),
        advice="on AMD GPUs use SGLang 0.5.23+ for NGRAM, or another speculative algorithm",
        source="https://github.com/sgl-project/sglang/pull/29346",
    ),
    Signature(
        key="trtllm-bf16-draft-moe-gemm",
        pattern=_re(r"trtllm_bf16_moe|bmm_Bfloat16_Bfloat16Bfloat16"),
        meaning="a BF16 MoE ran on flashinfer_trtllm's batched GEMM and failed on Blackwell; with a DeepSeek-family FP4 target (GLM-5.x, DeepSeek V3) that MoE is the BF16 NextN draft, which inherits the target's runner on CUDA",
        rules=("AB063",),
        advice="run the draft MoE on triton: --speculative-moe-runner-backend triton",
        source="https://github.com/sgl-project/sglang/issues/32377",
        fallback=(Edit(name="--speculative-moe-runner-backend", value="triton"),),
    ),
    Signature(
        key="dflash-pd-decode-no-draft-input",
        pattern=_re(r"'NoneType' object has no attribute 'prepare_for_decode'"),
        meaning="a PD decode node got a request from the prefill node without a DFLASH-family draft input (SGLang before 0.5.20 builds none for DFLASH)",
        rules=("PL063",),
        advice="serve DFLASH without PD disaggregation, use EAGLE or DSPARK on the decode node, or upgrade to SGLang 0.5.20+",
        source="https://github.com/sgl-project/sglang/issues/36140",
    ),
    Signature(
        key="spec-v2-eagle3-logprob-aux-states",
        # 0.5.7-0.5.8 leave the variable unbound; 0.5.9-0.5.10 start it at None and torch.cat rejects it.
        pattern=_re(r"local variable 'aux_pruned_states'|cat\(\) received an invalid combination of arguments - got \(NoneType, dim=int\)"),
        meaning="EAGLE3 on the SpecV2 worker met a request that returns logprobs; the input-logprob branch of the logits processor never fills the aux hidden states (SGLang 0.5.5-0.5.10)",
        rules=("FX088",),
        advice="upgrade to 0.5.11, or add --disable-overlap-schedule to run the V1 EAGLE worker",
        source="https://github.com/sgl-project/sglang/issues/17349",
        fallback=(Edit(name="--disable-overlap-schedule", value=True),),
    ),
    Signature(
        key="spec-grammar-token-not-accepted",
        pattern=_re(r"Tokens not accepted: \d+"),
        meaning="a speculative token reached the grammar matcher after the grammar had already taken it or forbids it; on a PD decode server with the SpecV2 overlap loop before 0.5.14 every constrained request can abort",
        rules=("FX093", "FX092"),
        advice="upgrade to 0.5.14 (0.5.16 for multi-layer EAGLE), or set --grammar-backend none",
        source="https://github.com/sgl-project/sglang/issues/25388",
    ),
    Signature(
        key="host-sync-inside-graph-capture",
        # CUDA's own error, raised by torch where a captured forward syncs with the host; before
        # the capture-failed line it follows, so the cause leads.
        pattern=_re(r"operation not permitted when stream is capturing"),
        meaning="an operation CUDA graphs cannot capture (a GPU-to-CPU sync such as .item()) ran inside CUDA-graph "
        "capture; with --enable-expert-distribution-metrics and a multi-step EAGLE draft it is "
        "the expert-distribution recorder's pass boundary, run by each draft step",
        rules=("FX080",),
        advice="drop --enable-expert-distribution-metrics, or draft one step (--speculative-num-steps 1), or disable CUDA graphs",
        source="https://github.com/sgl-project/sglang/issues/32105",
    ),
    Signature(
        key="cuda-graph-capture-failed",
        pattern=_re(r"Capture (draft )?cuda graph failed"),
        meaning="CUDA graph capture failed at start-up (memory for the captured batch sizes, or an error inside the captured forward)",
        rules=("DM001",),
        # SGLang's own advice for it (PR #3430): "Consider reducing the CUDA graph max batch size".
        advice="reduce --cuda-graph-max-bs, or start with --disable-cuda-graph to see the underlying error",
        source="https://github.com/sgl-project/sglang/pull/3431",
        fallback=(Edit(name="--disable-cuda-graph", value=True),),
    ),
    Signature(
        key="dflash-selector-sampler-batch-above-graph",
        pattern=_re(r"\bstage_sampling_params\b"),
        meaning="a DFLASH selector draft staged a batch larger than its largest decode CUDA graph into the "
        "graph-folded sampler's buffers (more running requests than the graph batch size)",
        rules=("PL091",),
        advice="cap --max-running-requests at the largest decode CUDA-graph batch size, or raise --cuda-graph-max-bs-decode",
        source="https://github.com/sgl-project/sglang/pull/37531",
    ),
    Signature(
        key="dsa-draft-extend-metadata-none",
        pattern=_re(r"All of them must not be None"),
        meaning="the DSA backend's draft-extend metadata lacks the CPU extend lengths: EAGLE/MTP on a DSA target "
        "under the overlap scheduler on ROCm (0.5.14)",
        rules=("SP080",),
        advice="add --disable-overlap-schedule",
        source="https://github.com/sgl-project/sglang/issues/29785",
        fallback=(Edit(name="--disable-overlap-schedule", value=True),),
    ),
    Signature(
        key="target-missing-eagle-hook",
        pattern=_re(r"object has no attribute '(get_embed_and_head|set_eagle3_layers_to_capture)'"),
        meaning="the target's model class in this release lacks a hook the EAGLE/EAGLE3 worker calls on it",
        rules=("DM040",),
        advice="upgrade to a release whose model class has the hook, or serve without EAGLE (NGRAM needs none)",
        source="https://github.com/sgl-project/sglang/issues/31236",
    ),
    Signature(
        key="eagle3-one-layer-only",
        pattern=_re(r"eagle3 (currently )?only supports (1|one) layer"),
        meaning="the EAGLE3 head has more than one decoder layer; SGLang before 0.5.12 builds only one",
        rules=("DM041",),
        advice="use a one-layer EAGLE3 head, or SGLang 0.5.12 or later",
        source="https://github.com/sgl-project/SpecForge/issues/129",
    ),
    Signature(
        key="eagle3-head-loaded-as-plain-class",
        pattern=_re(r"KeyError: 'midlayer\."),
        meaning="an EAGLE3 head (midlayer.* weights) was built as an ordinary model class: its config.json "
        "architectures name the target's class instead of LlamaForCausalLMEagle3",
        rules=("DM008",),
        advice="set architectures to [\"LlamaForCausalLMEagle3\"] in the draft's config.json",
        source="https://github.com/sgl-project/sglang/issues/9135",
    ),
    Signature(
        key="eagle3-head-logits-under-eagle",
        pattern=_re(r"logits_buffer\.copy_\(logits\[:, : self\.config\.vocab_size\]\)"),
        meaning="the draft-extend graph copies logits narrower than vocab_size: a reduced-vocabulary (EAGLE3) "
        "head is running under --speculative-algorithm EAGLE",
        rules=("DM008",),
        advice="use --speculative-algorithm EAGLE3 for an EAGLE3 head",
        source="https://github.com/sgl-project/sglang/issues/12421",
        fallback=(Edit(name="--speculative-algorithm", value="EAGLE3"),),
    ),
    Signature(
        key="draft-quant-config-missing",
        pattern=_re(r"Cannot find the config file for \w+"),
        meaning="the draft inherited the target's --quantization and has no config file for that method",
        rules=("QT040",),
        advice="add --speculative-draft-model-quantization unquant (0.5.7+), or drop --quantization",
        source="https://github.com/sgl-project/sglang/pull/35629",
        fallback=(Edit(name="--speculative-draft-model-quantization", value="unquant"),),
    ),
    Signature(
        key="kv-index-out-of-bounds",
        pattern=_re(r"scatter gather kernel index out of bounds"),
        meaning="a KV-cache index ran past the draft's buffers: the draft's context is shorter than the target's",
        rules=("DM002",),
        advice="cap --context-length at the draft's max_position_embeddings",
        source="https://github.com/sgl-project/sglang/pull/9388",
    ),
    Signature(
        key="illegal-memory-access",
        pattern=_re(r"illegal memory access|cudaErrorIllegalAddress"),
        meaning="a CUDA kernel read or wrote out of bounds; with speculation this is most often a draft context shorter than the target's, or CUDA-graph padding in the attention backend",
        # Then the other rules whose failure is an illegal memory access, so the one that fires on
        # the launch ranks first: a draft vocabulary differing from the target's, a draft KV pool
        # sized before the sliding-window split, an FP4 NextN draft's MoE on trtllm on Blackwell.
        rules=("DM002", "VB001", "DM003", "HY350", "AB063"),
        advice="check the draft's context length; otherwise retry with --disable-cuda-graph-padding or --disable-cuda-graph",
        source="https://github.com/sgl-project/sglang/issues/6309",
        fallback=(Edit(name="--disable-cuda-graph", value=True),),
    ),
    Signature(
        key="not-enough-memory-for-kv-cache",
        pattern=_re(r"Not enough memory\. Please try to increase --mem-fraction-static"),
        meaning="after the weights (the target's; from 0.5.14 the draft's too) there is too little memory left for the KV cache",
        rules=("MM002", "MM001"),
        advice="raise --mem-fraction-static, or free GPU memory; a smaller draft tree needs less",
        source="https://github.com/sgl-project/sglang/issues/4330",
    ),
    Signature(
        key="cuda-out-of-memory",
        pattern=_re(r"CUDA out of memory|OutOfMemoryError"),
        meaning="the GPU ran out of memory (CUDA graphs and the draft tree take memory beyond the KV cache)",
        rules=("MM001", "MM002"),
        advice="lower --mem-fraction-static or --cuda-graph-max-bs, or use fewer draft tokens",
        source="https://github.com/sgl-project/sglang/issues/4330",
        fallback=(Edit(name="--cuda-graph-max-bs", value=8),),
    ),
    Signature(
        key="port-in-use",
        pattern=_re(r"address already in use|Errno 98"),
        meaning="another process already listens on the port the server wanted",
        rules=(),
        advice="choose another --port, or stop the process that holds it",
        # SGLang serves over uvicorn; this is uvicorn's bind error, quoted from a uvicorn-served engine.
        source="https://github.com/dphnAI/sonar/issues/621",
    ),
)
