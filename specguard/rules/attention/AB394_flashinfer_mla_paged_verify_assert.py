"""AB394 flashinfer-mla-paged-verify-assert."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.AB332_deepseek_mtp_flashinfer_paged_refused import (
    MTP_ARCHITECTURES,
)
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    is_mla_target,
    runtime_backends,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or not is_mla_target(ctx)
        or ctx.spec.has("--disable-mla")
    ):
        return
    if ctx.target is None or ctx.target.architecture in MTP_ARCHITECTURES:
        return  # refused earlier, at argument time (AB332)
    if ctx.spec.get("attention_backend") != "flashinfer" or runtime_backends(ctx) != {
        "flashinfer"
    }:
        return
    pages = ctx.spec.get("page_size")
    if pages is None or pages == 1:
        return
    when = (
        "at the first verify"
        if ctx.spec.get("disable_cuda_graph")
        else "while the target's verify CUDA graphs are captured, before the server is up"
    )
    yield RULE.finding(
        f"{ctx.flag('--attention-backend')} flashinfer on this MLA target ({ctx.target.architecture}) with "
        f"{ctx.flag('--page-size')} {pages} and {ctx.algorithm}: SGLang {ctx.env.sglang_version}'s flashinfer MLA "
        'backend plans a verify or draft extend only for page size 1 and fails the assertion "Only page_size=1 is '
        f'supported for flashinfer backend with speculative decoding" {when}. Use page size 1, or SGLang '
        "0.5.1.post2 or later",
        flags=("--attention-backend", "--page-size", "--speculative-algorithm"),
        fix=set_flags("use page size 1", Applicability.UNSAFE, page_size=1),
    )


DEEPSEEK_V2_EAGLE = (
    "--model-path",
    "deepseek-ai/DeepSeek-V2-Lite-Chat",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-draft-model-path",
    "d",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--attention-backend",
    "flashinfer",
)
DEEPSEEK_V2 = {"architectures": ("DeepseekV2ForCausalLM",), "kv_lora_rank": 512}

RULE = Rule(
    check=check,
    code="AB394",
    category=Category.START,
    name="flashinfer-mla-paged-verify-assert",
    summary="EAGLE on an MLA target with flashinfer and a page size above 1 in 0.5.1-0.5.1.post1, whose flashinfer "
    "MLA verify asserts page size 1",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE on an MLA target (config.json kv_lora_rank, no `--disable-mla`) other "
        "than DeepseekV3ForCausalLM and Glm4MoeForCausalLM (AB332's refusal comes first for those), with "
        "`--attention-backend flashinfer` on both phases and a `--page-size` above 1, on 0.5.1 or 0.5.1.post1.",
        why="0.5.1 gave flashinfer MLA paged KV (page-count indptr, layers/attention/flashinfer_mla_backend.py:820-842) "
        "but its prefill indices updater, which plans target verify and draft extend with the EAGLE spec info "
        "(:286-298, capture :385-396, replay :467-478), asserts `self.page_size == 1` with 'Only page_size=1 is "
        "supported for flashinfer backend with speculative decoding' (:868-873). The verify CUDA-graph capture runs "
        "it at start-up; with `--disable-cuda-graph` the first verify does. 0.5.1.post1 is the same (:873). "
        "0.5.0rc2's prefill updater has neither paged indexing nor the assert (flashinfer_mla_backend.py:664-740), "
        "and 0.5.1.post2 reverts to it, assert gone (:795-870).",
        fix="Use page size 1 (or another backend), or SGLang 0.5.1.post2 or later.",
        fix_safety="Unsafe: the KV cache's page size changes.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V2_EAGLE, "--page-size", "16"),
        target=DEEPSEEK_V2,
        gpu="H100",
        sglang_version="0.5.1",
    ),
    good=Example(
        argv=(*DEEPSEEK_V2_EAGLE, "--page-size", "1"),
        target=DEEPSEEK_V2,
        gpu="H100",
        sglang_version="0.5.1",
    ),
    sources=(
        "sglang 0.5.0rc2: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:664-740 (per-token indices, no assert)",
        "sglang 0.5.1: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:286-298, 385-396, 467-478, 820-842, 868-873",
        "sglang 0.5.1.post1: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:873",
        "sglang 0.5.1.post2: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:795-870 (reverted, no assert)",
    ),
    sglang_versions=">=0.5.1,<0.5.1.post2",
    log_signatures=(
        r"Only page_size=1 is supported for flashinfer backend with speculative decoding",
    ),
)
