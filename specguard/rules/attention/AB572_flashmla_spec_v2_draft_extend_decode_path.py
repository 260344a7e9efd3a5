"""AB572 flashmla-spec-v2-draft-extend-decode-path."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Fix, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS
from specguard.rules.spec_params._spec_v2 import (
    back_to_v1,
    beta_spec_flag,
    runs_overlapped_spec_v2,
    v2_switch,
)
from specguard.sglang_facts.changes import SPEC_V2_DEFAULT_ON

# The V2 worker's draft extend (ForwardMode.DRAFT_EXTEND_V2) runs on the draft runner's own backend
# (eagle_info_v2.prepare_for_extend_to_fill_draft_kvcache). FlashMLABackend.init_forward_metadata leaves
# that mode to its FlashInfer-MLA parent (PrefillMetadata), but forward_extend sends only EXTEND and
# DRAFT_EXTEND to the parent and every other mode to flash_mla_with_kvcache, which reads
# self.forward_metadata.block_kv_indices: "'PrefillMetadata' object has no attribute 'block_kv_indices'".
BACKEND = "flashmla"
DRAFT_BACKEND = "--speculative-draft-attention-backend"
OVERLAP_OFF = "--disable-overlap-schedule"
_DEEPSEEK_V3_NEXTN = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--speculative-algorithm",
    "NEXTN",
    "--attention-backend",
    BACKEND,
)


def _draft_extend_backend(ctx: CheckContext) -> str | None:
    """The draft runner's backend: the draft's own flag, else the prefill backend (a split runner's hybrid gives
    DRAFT_EXTEND_V2 to it in 0.5.12.post1, hybrid_attn_backend.py:42-51), else the target's backend as resolved;
    None for split backends in decode mode, where releases before it may route the mode to the decode backend."""
    draft = ctx.spec.get("speculative_draft_attention_backend")
    if draft is not None:
        return draft
    prefill = ctx.spec.get("prefill_attention_backend")
    decode = ctx.spec.get("decode_attention_backend")
    if (
        prefill != decode
        and ctx.spec.last_value("--speculative-attention-mode") == "decode"
    ):
        return None
    return prefill or ctx.resolution.attention_backend


def _to_v1(ctx: CheckContext) -> Fix:
    """Run the V1 worker: drop what opted into V2, or (V2 on by default) turn the overlap scheduler off."""
    if beta_spec_flag(ctx) or not SPEC_V2_DEFAULT_ON.present_in(ctx.version):
        return back_to_v1(ctx)
    return fix_of(
        "turn the overlap scheduler off (the V1 worker)",
        Applicability.UNSAFE,
        Edit(name=OVERLAP_OFF, value=True),
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not runs_overlapped_spec_v2(ctx) or _draft_extend_backend(ctx) != BACKEND:
        return
    yield RULE.finding(
        f"{ctx.algorithm} on the V2 (overlap) worker ({v2_switch(ctx)}) with the draft on {BACKEND}: the V2 draft "
        f"extend (DRAFT_EXTEND_V2) gets FlashInfer-MLA prefill metadata but {BACKEND}'s forward_extend sends it to "
        "the FlashMLA decode kernel, so the first decode step fails with \"AttributeError: 'PrefillMetadata' object "
        f"has no attribute 'block_kv_indices'\". Run the V1 worker, give the draft another backend "
        f"({ctx.flag(DRAFT_BACKEND)}), or upgrade to 0.5.13+",
        flags=("--attention-backend", "--speculative-algorithm"),
        fix=_to_v1(ctx),
    )


RULE = Rule(
    check=check,
    code="AB572",
    category=Category.CRASH,
    name="flashmla-spec-v2-draft-extend-decode-path",
    summary="EAGLE/NEXTN on the SpecV2 worker with the draft on flashmla fails at the first draft extend "
    "(0.5.3.post2-0.5.12.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="The EAGLE family on the V2 (overlap) worker (`--enable-beta-spec`, `SGLANG_ENABLE_SPEC_V2`, or "
        "SGLang's default from 0.5.11 with the overlap scheduler on) whose draft runner uses flashmla "
        "(`--speculative-draft-attention-backend`, else `--prefill-attention-backend`, else `--attention-backend`); "
        "SGLang 0.5.3.post2 to 0.5.12.post1.",
        why="The V2 worker runs the draft extend as `ForwardMode.DRAFT_EXTEND_V2` on the draft runner's own backend "
        "and initialises that backend's metadata itself (0.5.3.post2 speculative/eagle_info_v2.py:130-132; "
        "0.5.12.post1 :245-253). `FlashMLABackend.init_forward_metadata` hands every mode but decode and target "
        "verify to its FlashInfer-MLA parent, which stores a `PrefillMetadata` (0.5.12.post1 "
        "layers/attention/flashmla_backend.py:87-150; flashinfer_mla_backend.py:60-63, 320-341), while "
        "`forward_extend` sends only EXTEND and DRAFT_EXTEND to the parent and runs every other mode through "
        "`flash_mla_with_kvcache` with `self.forward_metadata.block_kv_indices` (flashmla_backend.py:471-544; "
        "0.5.3.post2 :398-400). The FlashMLA draft-extend factory returns None (speculative/draft_utils.py:312-316) "
        "and the V2 draft-extend CUDA graph covers Triton and TRTLLM-MLA only (eagle_worker_v2.py:313-323), so the "
        "eager path runs. 0.5.13 adds DRAFT_EXTEND_V2 to the parent branch (flashmla_backend.py:385-390; PR 24640, "
        "whose test had forced FlashMLA MTP back to V1).",
        fix="Run the V1 worker (turn the overlap scheduler off, or drop the V2 opt-in), give the draft another "
        "backend, or upgrade to SGLang 0.5.13+.",
        fix_safety="Unsafe: the V1 worker gives up the overlap scheduler (slower).",
    ),
    bad=Example(
        argv=_DEEPSEEK_V3_NEXTN,
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="H100",
        sglang_version="0.5.12.post1",
    ),
    good=Example(
        argv=(*_DEEPSEEK_V3_NEXTN, OVERLAP_OFF),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="H100",
        sglang_version="0.5.12.post1",
    ),
    sources=(
        "sglang 0.5.3.post2: python/sglang/srt/speculative/eagle_info_v2.py:125-132",
        "sglang 0.5.3.post2: python/sglang/srt/layers/attention/flashmla_backend.py:396-402",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/flashmla_backend.py:87-150, 471-544",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:60-63, 288-341",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/eagle_info_v2.py:245-253",
        "sglang 0.5.12.post1: python/sglang/srt/speculative/eagle_worker_v2.py:313-323, 583-616",
        "sglang 0.5.12.post1: python/sglang/srt/model_executor/model_runner.py:2410-2460",
        "sglang 0.5.13: python/sglang/srt/layers/attention/flashmla_backend.py:385-390",
        "https://github.com/sgl-project/sglang/pull/24640",
    ),
    sglang_versions=">=0.5.3.post2,<0.5.13",
    log_signatures=(r"'PrefillMetadata' object has no attribute 'block_kv_indices'",),
)
