"""PL285 pp-draft-embedding-load-format."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE
from specguard.rules.parallel.PL002_pipeline_parallel_speculative import (
    reason as pp_speculation_refused,
)
from specguard.sglang_facts.changes import Change, as_of

LOAD_FORMAT = "--load-format"
# The load formats whose weight files the draft may re-open (speculative/pp_draft_embedding.py
# _REOPENABLE_LOAD_FORMATS), newest first; dummy returns before the check.
REOPENABLE: tuple[tuple[Change, frozenset[str]], ...] = (
    (
        Change(
            "0.5.22",
            "0.5.22 speculative/pp_draft_embedding.py:50-58 adds instanttensor",
        ),
        frozenset(
            {
                "auto",
                "safetensors",
                "fastsafetensors",
                "instanttensor",
                "mistral",
                "pt",
                "npcache",
                "dummy",
            }
        ),
    ),
    (
        Change("0.5.21", "0.5.21 speculative/pp_draft_embedding.py:50-57, 205-206"),
        frozenset(
            {
                "auto",
                "safetensors",
                "fastsafetensors",
                "mistral",
                "pt",
                "npcache",
                "dummy",
            }
        ),
    ),
)
# Target classes whose model keeps the input embedding on the first pipeline stage only, in
# 0.5.21-0.5.23 (llama.py, qwen2.py, qwen2_moe.py, glm4_moe.py: `if self.pp_group.is_first_rank`), so
# the draft on the last stage must load its own. The DeepSeek-V2 model family keeps it on the last
# stage too when speculating (deepseek_v2.py `pp_stage_needs_embedding`); other classes were not read.
EMBEDDING_ON_FIRST_STAGE_ONLY = frozenset(
    {
        "LlamaForCausalLM",
        "Qwen2ForCausalLM",
        "Qwen3ForCausalLM",
        "Qwen3MoeForCausalLM",
        "Glm4MoeForCausalLM",
    }
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    pp = ctx.spec.get("pp_size") or 1
    load_format = ctx.spec.last_value(LOAD_FORMAT)
    reopenable = as_of(REOPENABLE, ctx.version, before=None)
    if (
        pp <= 1
        or ctx.algorithm != "EAGLE"
        or load_format is None
        or reopenable is None
        or load_format in reopenable
    ):
        return
    if pp_speculation_refused(ctx) is not None:
        return  # PL002: the launch fails before the draft loads
    architecture = ctx.target.architecture if ctx.target else None
    if architecture not in EMBEDDING_ON_FIRST_STAGE_ONLY:
        return
    yield RULE.finding(
        f"{ctx.flag('--pp-size')} {pp} with {ctx.algorithm} and {ctx.flag(LOAD_FORMAT)} {load_format} in SGLang "
        f"{ctx.version}: {architecture} keeps its input embedding on the first pipeline stage only, so the draft on "
        "the last stage re-reads it from the target checkpoint, which this load format does not allow: the draft "
        "worker raises ValueError 'Pipeline-parallel speculative decoding needs to re-open the target checkpoint for "
        f"the draft embedding, which load format ... does not allow; use a disk-backed format.' at start. Use "
        f"{ctx.flag(LOAD_FORMAT)} auto (or safetensors), or serve without pipeline parallelism",
        flags=(LOAD_FORMAT, "--pp-size"),
    )


PP_EAGLE_PREFILL = (
    *LLAMA31_8B_EAGLE,
    "--pp-size",
    "2",
    "--disaggregation-mode",
    "prefill",
)
LLAMA_FACTS = {"architectures": ("LlamaForCausalLM",)}

RULE = Rule(
    check=check,
    code="PL285",
    category=Category.START,
    name="pp-draft-embedding-load-format",
    summary="Pipeline-parallel EAGLE/NEXTN with a --load-format the draft cannot re-open fails at start (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--pp-size` above 1 with EAGLE or NEXTN where SGLang lets it run (a PD prefill node, or "
        "`SGLANG_ENABLE_PP_SPEC=1`: PL002), a `--load-format` other than auto, safetensors, fastsafetensors, "
        "mistral, pt, npcache or dummy (0.5.22+ also instanttensor), and a target class that keeps its input "
        "embedding on the first stage only (Llama, Qwen2, Qwen3, Qwen3-MoE, GLM-4-MoE). Other targets stay quiet.",
        why="0.5.21 added pipeline-parallel speculation: the draft runs on the last stage, where such targets hold a "
        "`PPMissingLayer` embedding (0.5.21 models/llama.py:382-390, qwen2.py:333-347, qwen2_moe.py:1122, "
        "glm4_moe.py:1029), so `EagleDraftWorker.init_lm_head` -> `resolve_draft_embed_and_head` loads the draft's "
        "embedding from the target checkpoint (speculative/eagle_worker_v2.py:328, 370-378; pp_draft_embedding.py:"
        "226-241). `prepare_checkpoint_files` re-opens it only for the formats of `_REOPENABLE_LOAD_FORMATS` and "
        'otherwise raises "Pipeline-parallel speculative decoding needs to re-open the target checkpoint for the '
        'draft embedding, which load format ... does not allow; use a disk-backed format." (:50-57, 139-154; dummy '
        "returns first, :205-206). 0.5.22 adds instanttensor (:50-58); 0.5.23 keeps the check (:164-179). The "
        "DeepSeek-V2 family keeps the embedding on the last stage while speculating (deepseek_v2.py "
        "`pp_stage_needs_embedding`) and never reaches it. 0.5.20 refuses PP with speculation (PL002).",
        fix="Load the target with a disk-backed format (`--load-format auto`), or serve without pipeline parallelism.",
        fix_safety="No automatic fix: the load format may be how the weights reach this server.",
    ),
    bad=Example(
        argv=(*PP_EAGLE_PREFILL, LOAD_FORMAT, "gguf"),
        target=LLAMA_FACTS,
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=(*PP_EAGLE_PREFILL, LOAD_FORMAT, "safetensors"),
        target=LLAMA_FACTS,
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/speculative/ (no pp_draft_embedding.py); arg_groups/validation_hook.py:80-84",
        "sglang 0.5.21: python/sglang/srt/speculative/pp_draft_embedding.py:50-57,139-154,205-206,226-241; eagle_worker_v2.py:328,370-378",
        "sglang 0.5.21: python/sglang/srt/models/llama.py:382-390; qwen2.py:333-347; qwen2_moe.py:1122; glm4_moe.py:1029; deepseek_v2.py:2837-2841",
        "sglang 0.5.22: python/sglang/srt/speculative/pp_draft_embedding.py:50-58",
        "sglang 0.5.23: python/sglang/srt/speculative/pp_draft_embedding.py:50-58,164-179",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"Pipeline-parallel speculative decoding needs to re-open the target checkpoint for the draft embedding",
    ),
)
