"""AB431 trtllm-mla-draft-extend-misaligned-query."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.AB390_trtllm_mla_draft_extend_unpadded_query import (
    DRAFT,
    default_trtllm_mla,
)
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    is_mla_target,
    typed_phase_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The switches that run the EAGLE family on the V2 worker in 0.5.4-0.5.4.post1 (0.5.4 server_args.py:1296-1302
# --enable-beta-spec; 0.5.4.post1 environ.py SGLANG_ENABLE_SPEC_V2), whose draft extend runs every draft token
# of every request, so the padded rows are full and line up with their KV.
BETA = "--enable-beta-spec"
SPEC_V2_ENV = "SGLANG_ENABLE_SPEC_V2"
# The only architecture 0.5.4-0.5.4.post1 default to trtllm_mla on SM100 (0.5.4 server_args.py:879;
# 0.5.4.post1 :861); AB390's table holds the later, longer list.
DEFAULT_TRTLLM_MLA_ARCHITECTURE = "DeepseekV3ForCausalLM"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or not is_mla_target(ctx):
        return
    if ctx.spec.has(BETA) or ctx.spec.env_flag(SPEC_V2_ENV):
        return
    backend, flag = typed_phase_backend(ctx, DRAFT)
    if (
        backend is None
        and default_trtllm_mla(ctx)
        and ctx.target is not None
        and ctx.target.architecture == DEFAULT_TRTLLM_MLA_ARCHITECTURE
    ):
        backend = "trtllm_mla"
    if backend != "trtllm_mla":
        return
    how = (
        f"{ctx.flag(flag)} trtllm_mla"
        if flag
        else "SGLang's SM100 default for this target (trtllm_mla)"
    )
    edited = flag or "--attention-backend"
    yield RULE.finding(
        f"{how} runs the {ctx.algorithm} draft extend, and SGLang {ctx.env.sglang_version} pads each request's "
        "accepted tokens to the longest row but hands the decode kernel the request's own KV length, so every "
        "request that accepted fewer tokens than the row holds attends under a causal mask shifted by the "
        "difference: its draft tokens are computed from the wrong context and acceptance drops (the target "
        f"still verifies the output). Use SGLang 0.5.4.post3 or later, or run the draft extend on flashinfer "
        f"({ctx.flag(edited)} flashinfer)",
        flags=tuple(f for f in (flag, "--speculative-algorithm") if f),
        fix=fix_of(
            "run the draft extend on flashinfer MLA",
            Applicability.UNSAFE,
            Edit(name=edited, value="flashinfer"),
        ),
    )


_DEEPSEEK_V3_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="AB431",
    category=Category.PERF,
    name="trtllm-mla-draft-extend-misaligned-query",
    summary="EAGLE/MTP draft extend on trtllm_mla in 0.5.4-0.5.4.post1 pads queries to the longest request "
    "without padding the KV length: shorter requests attend with a shifted mask and acceptance drops",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 or NEXTN on the V1 worker (no `--enable-beta-spec`, no `SGLANG_ENABLE_SPEC_V2`) with "
        "an MLA target whose draft extend runs on trtllm_mla (the prefill backend, or with "
        "`--speculative-attention-mode decode` the decode backend, else `--attention-backend`, else SGLang's SM100 "
        "default for DeepseekV3ForCausalLM without DeepSeek sparse attention), SGLang 0.5.4 to 0.5.4.post1.",
        why="0.5.4 moved the draft extend from the FlashInfer-MLA parent (0.5.3.post3 "
        "layers/attention/trtllm_mla_backend.py:574-575) onto the trtllm-gen decode kernel: the packed query is "
        "padded per request to max_seq_len_q with pad_draft_extend_query and the kernel gets "
        "`seq_lens=forward_batch.seq_lens` (prefix + accepted tokens) (0.5.4.post1 trtllm_mla_backend.py:914-984). "
        "The kernel places a row's queries at the last max_seq_len_q positions of each sequence, so a request with "
        "fewer tokens than the row is shifted against its KV; in the draft-extend CUDA graph the row is always the "
        "captured width, and replay also sets max_seq_len_q to max(accept_length_cpu) while each request runs "
        "accept_length + 1 tokens (:482-493; speculative/eagle_info.py:678). 0.5.4.post3 adds 'NOTE(draft_extend "
        "seq_len handling)' and gives the kernel seq_lens - seq_lens_q + max_seq_len_q in init_forward_metadata, "
        "capture and replay (trtllm_mla_backend.py:446-455, 526-528, 600), and counts the +1 token. The target's "
        "verify is unaffected, so output stays correct; the drafts are wrong more often.",
        fix="Upgrade to 0.5.4.post3, or run the draft extend on flashinfer (FlashInfer MLA).",
        fix_safety="Unsafe: another attention kernel runs the draft extend (and, through --attention-backend, the target).",
    ),
    bad=Example(
        argv=_DEEPSEEK_V3_MTP,
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.4",
    ),
    good=Example(
        argv=(*_DEEPSEEK_V3_MTP, "--attention-backend", "flashinfer"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="B200",
        sglang_version="0.5.4",
    ),
    sources=(
        "sglang 0.5.3.post3: python/sglang/srt/layers/attention/trtllm_mla_backend.py:574-575 (draft extend on the FlashInfer-MLA parent)",
        "sglang 0.5.4: python/sglang/srt/server_args.py:878-889 (trtllm_mla default on SM100 for DeepseekV3ForCausalLM only)",
        "sglang 0.5.4.post1: python/sglang/srt/server_args.py:860-861 (the same single architecture)",
        "sglang 0.5.4.post1: python/sglang/srt/layers/attention/trtllm_mla_backend.py:482-493, 914-984; python/sglang/srt/speculative/eagle_info.py:678",
        "sglang 0.5.4.post3: python/sglang/srt/layers/attention/trtllm_mla_backend.py:446-455, 526-528, 600",
    ),
    sglang_versions=">=0.5.4,<0.5.4.post3",
)
