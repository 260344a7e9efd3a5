"""AB402 dspark-triton-draft-verify-layout."""

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
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK

DRAFT_BACKEND = "--speculative-draft-attention-backend"
# 0.5.16 speculative/draft_worker_common.py:25: the backends a DSpark draft keeps; any other falls back
# to triton on ROCm and flashinfer elsewhere (:41-52).
DSPARK_DRAFT_BACKENDS = frozenset({"flashinfer", "fa3", "fa4", "triton", "ascend"})
# 0.5.16 configs/model_config.py:123-128 is_deepseek_v4: such a draft runs the dsv4 backend instead
# (dspark_worker_v2.py:101-103).
DEEPSEEK_V4_DRAFTS = frozenset(
    {
        "DeepseekV4ForCausalLM",
        "DeepseekV4ForCausalLMNextN",
        "DeepseekV4ForCausalLMDSpark",
    }
)
DSPARK_DRAFT = {"architectures": ("DSparkDraftModel",)}


def dspark_draft_backend(ctx: CheckContext) -> str | None:
    """The backend the DSpark draft runs (0.5.16 draft_worker_common.py:35-53); None when unknown."""
    chosen = (
        ctx.spec.get("speculative_draft_attention_backend")
        or ctx.spec.get("prefill_attention_backend")
        or ctx.resolution.attention_backend
    )
    if chosen in DSPARK_DRAFT_BACKENDS:
        return str(chosen)
    platform = ctx.env.gpu.platform if ctx.env.gpu is not None else None
    if platform is None:
        return None
    return "triton" if platform == "rocm" else "flashinfer"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or ctx.draft is None or ctx.draft.architecture is None:
        return
    if (
        ctx.draft.architecture in DEEPSEEK_V4_DRAFTS
        or dspark_draft_backend(ctx) != "triton"
    ):
        return
    yield RULE.finding(
        f"DSPARK with its draft on the triton attention backend in SGLang {ctx.version}: the draft proposes with a "
        "gamma-token TARGET_VERIFY forward, but the triton backend lays every verify batch out with the verify "
        "window (gamma + 1 tokens per request, --speculative-num-draft-tokens), so each request's draft attention "
        "reads and writes rows shifted by one per request before it and the last runs one row past the batch. The "
        "proposals are wrong and acceptance collapses (the target's verify keeps the output correct). 0.5.17 uses "
        f"the batch's own draft token count; on 0.5.16 give the draft another backend with {ctx.flag(DRAFT_BACKEND)}",
        flags=("--speculative-algorithm", "--attention-backend", DRAFT_BACKEND),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own attention backends
    check=check,
    code="AB402",
    category=Category.PERF,
    name="dspark-triton-draft-verify-layout",
    summary="A DSPARK draft on the triton attention backend lays its gamma-token propose out as a gamma + 1 verify "
    "(0.5.16)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` whose draft (not a DeepSeek-V4 draft, which runs dsv4) runs on the "
        "triton attention backend: `--speculative-draft-attention-backend triton`, or none typed and the target's "
        "prefill backend is triton, or (on ROCm) a backend the DSpark draft does not keep, SGLang 0.5.16.",
        why="0.5.16 builds the DSpark draft on `--speculative-draft-attention-backend`, else the target's prefill "
        "backend, falling back to triton on ROCm (speculative/draft_worker_common.py:25, :35-53). "
        "`_handle_dspark` sets `speculative_num_draft_tokens` to gamma + 1 (arg_groups/speculative_hook.py:370-381), "
        "which the draft's TritonAttnBackend keeps as `num_draft_tokens` (layers/attention/triton_backend.py:162), "
        "while the draft propose is a TARGET_VERIFY forward of gamma tokens per request "
        "(speculative/dspark_components/dspark_draft.py:350-390, spec_info draft_token_num gamma, "
        "dspark_worker_v2.py:138-140). The triton target-verify metadata stride qo_indptr and the mask by "
        "`self.num_draft_tokens` (triton_backend.py:784-795, :822-831; graphs :450-456, :491, :1063-1075). "
        "0.5.17 takes `spec_info.draft_token_num` (triton_backend.py:808-821, :856-865, :1104-1118). "
        "No DSPARK before 0.5.16.",
        fix="Give the draft another backend (`--speculative-draft-attention-backend flashinfer` or fa3), or upgrade "
        "to 0.5.17. No automatic fix: the backend must run on this GPU.",
        fix_safety="No fix: which backend runs on the GPU is the user's call.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, DRAFT_BACKEND, "triton"),
        draft=DSPARK_DRAFT,
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, DRAFT_BACKEND, "triton"),
        draft=DSPARK_DRAFT,
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no dspark_components; no DSPARK)",
        "sglang 0.5.16: python/sglang/srt/speculative/draft_worker_common.py:25,35-53; dspark_worker_v2.py:101-103,138-140",
        "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_draft.py:350-390; arg_groups/speculative_hook.py:370-381",
        "sglang 0.5.16: python/sglang/srt/layers/attention/triton_backend.py:162,450-456,784-795,822-831",
        "sglang 0.5.17: python/sglang/srt/layers/attention/triton_backend.py:808-821,856-865,1104-1118",
    ),
    sglang_versions="==0.5.16",
)
