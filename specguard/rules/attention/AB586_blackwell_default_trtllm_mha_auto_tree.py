"""AB586 blackwell-default-trtllm-mha-auto-tree."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import mla_of
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

BLACKWELL = 10
# Targets whose model adjustments pick their own backend before the default (0.5.6.post2
# server_args.py:973-1349: GPT-OSS, Llama 4, Olmo 2, Qwen3-Next); their launches take another path.
OWN_DEFAULT_ARCHITECTURES = frozenset(
    {
        "GptOssForCausalLM",
        "Llama4ForConditionalGeneration",
        "Olmo2ForCausalLM",
        "Qwen3NextForCausalLM",
    }
)

# What SGLang raises (0.5.6.post2 server_args.py:1801-1808):
#   ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.


def check(ctx: CheckContext) -> Iterator[Finding]:
    gpu, target = ctx.env.gpu, ctx.target
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or gpu is None
        or gpu.platform != "cuda"
    ):
        return
    if gpu.compute_capability is None or gpu.compute_capability[0] != BLACKWELL:
        return
    if ctx.spec.has("--attention-backend") or mla_of(target) is not False:
        return
    if target is None or target.architecture in OWN_DEFAULT_ARCHITECTURES:
        return
    if (
        ctx.spec.get("speculative_eagle_topk") is not None
        or ctx.spec.get("speculative_num_steps") is not None
    ):
        return  # a typed topk 1 keeps trtllm_mha working; a typed topk above 1 gets flashinfer
    topk = ctx.resolution.eagle_topk
    if topk is None or topk <= 1:
        return
    yield RULE.finding(
        f"{ctx.algorithm} on {gpu.name} with no {ctx.flag('--attention-backend')} and no topk in SGLang "
        f"{ctx.version}: the default backend for an MHA target on Blackwell is trtllm_mha whenever topk is unset, "
        f"and SGLang then picks topk {topk} for this target, so argument handling raises 'ValueError: trtllm_mha "
        f"backend only supports topk = 1 for speculative decoding.' Set {ctx.flag('--attention-backend')} "
        f"flashinfer to keep the tree, or draft a chain (topk 1), or use SGLang 0.5.7",
        flags=("--speculative-algorithm",),
        fix=set_flags(
            "run the tree on flashinfer (SGLang's choice from 0.5.7)",
            Applicability.UNSAFE,
            attention_backend="flashinfer",
        ),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB586",
    category=Category.START,
    name="blackwell-default-trtllm-mha-auto-tree",
    summary="EAGLE with no backend and no topk on SM100 defaults to trtllm_mha, then refuses SGLang's automatic tree (0.5.6.post1-0.5.6.post2)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN on an SM100/SM103 GPU with an MHA target (no config.json `kv_lora_rank`; not GPT-OSS, "
        "Llama 4, Olmo 2 or Qwen3-Next, which pick their own backend), no `--attention-backend`, and neither "
        "`--speculative-eagle-topk` nor `--speculative-num-steps`, where SGLang's automatic choice is a tree "
        "(topk above 1, e.g. 5/4/8 for a Llama target); SGLang 0.5.6.post1 and 0.5.6.post2. On SM120 the same "
        "default is refused outright ('TRTLLM MHA backend is only supported on Blackwell GPUs (SM100)'); specguard "
        "has no SM120 GPU in its table, so that case is not checked.",
        why="0.5.6.post1 makes trtllm_mha the MHA default on any Blackwell (`is_blackwell()`, capability 10 or 12) "
        "while `is_no_spec_infer_or_topk_one` holds, which an unset topk satisfies (server_args.py:1345-1353; "
        "utils/common.py:2724-2728). The default is picked before the speculative hook, which then fills in "
        "`auto_choose_speculative_params` (Llama: 5/4/8, :4649-4662) and raises on trtllm_mha with topk above 1 "
        "(0.5.6.post2 server_args.py:1382, 1790-1808; 0.5.6.post1 :1352, :1774). 0.5.6 has no Blackwell MHA default "
        "(flashinfer, server_args.py:1293-1307). 0.5.7 picks trtllm_mha on SM100 only, and under speculation only "
        "with an explicit topk (server_args.py:1534-1545), so such a launch gets flashinfer.",
        fix="`--attention-backend flashinfer` (what 0.5.7 picks), or an explicit chain (`--speculative-eagle-topk 1`).",
        fix_safety="Unsafe: it names the attention backend, which SGLang would have chosen otherwise.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.6.post2",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",)},
        gpu="B200",
        sglang_version="0.5.7",
    ),
    sources=(
        "sglang 0.5.6: python/sglang/srt/server_args.py:1293-1307 (no Blackwell MHA default)",
        "sglang 0.5.6.post1: python/sglang/srt/server_args.py:1345-1353,1774",
        "sglang 0.5.6.post2: python/sglang/srt/server_args.py:1382,1466-1473,1790-1808,4649-4662; utils/common.py:221-224,2724-2728",
        "sglang 0.5.7: python/sglang/srt/server_args.py:1518,1534-1545",
    ),
    sglang_versions=">=0.5.6.post1,<0.5.7",
    log_signatures=(
        r"trtllm_mha backend only supports topk = 1 for speculative decoding",
    ),
)
