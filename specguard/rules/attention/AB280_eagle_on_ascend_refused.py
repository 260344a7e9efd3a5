"""AB280 eagle-on-ascend-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.spec_params._shared import device
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import EAGLE_DRAFT_EXTEND_MAP, Change

BACKEND = "ascend"
# Until 0.5.2rc1 the EAGLE worker picked its draft backends from --attention-backend alone; from
# 0.5.2rc2 (EAGLE_DRAFT_EXTEND_MAP) it reads the per-phase backends (eagle_worker.py:222, 238), and
# from 0.5.3.post2 a single draft step builds no decode backend (draft_utils.py:34-36).
ONE_STEP_NO_DECODE_BACKEND = Change(
    "0.5.3.post2",
    "0.5.3.post2 speculative/draft_utils.py:34-36 returns None for one step (0.5.3.post1 eagle_worker.py builds it)",
)
TYPED = (
    "--attention-backend",
    "--prefill-attention-backend",
    "--decode-attention-backend",
)


def _attention_backend(ctx: CheckContext) -> str | None:
    """--attention-backend as typed, else ascend on an NPU: ModelRunner (0.4.9 model_executor/model_runner.py:379-380,
    :400-401) and later ServerArgs (0.5.4.post1 server_args.py:1080-1081, :1099-1100) pick it there."""
    typed = ctx.spec.get("attention_backend")
    if typed is not None:
        return typed
    return BACKEND if device(ctx) == "npu" else None


def _looked_up(ctx: CheckContext) -> set[str | None]:
    """The backend names the draft worker looks up: the draft extend's always, the multi-step decode's
    unless a single draft step skips it; each phase falls back to the attention backend."""
    attention = _attention_backend(ctx)
    if not EAGLE_DRAFT_EXTEND_MAP.present_in(ctx.version):
        return {attention}
    decode = ctx.spec.get("decode_attention_backend") or attention
    extend = (
        decode
        if ctx.spec.last_value("--speculative-attention-mode") == "decode"
        else (ctx.spec.get("prefill_attention_backend") or attention)
    )
    one_step = ctx.spec.get(
        "speculative_num_steps"
    ) == 1 and ONE_STEP_NO_DECODE_BACKEND.present_in(ctx.version)
    return {extend} if one_step else {extend, decode}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or BACKEND not in _looked_up(ctx):
        return
    typed = [flag for flag in TYPED if ctx.spec.last_value(flag) == BACKEND]
    named = (
        ", ".join(f"{ctx.flag(flag)} {BACKEND}" for flag in typed)
        if typed
        else f"{ctx.flag('--device')} npu (attention backend {BACKEND})"
    )
    yield RULE.finding(
        f"{named} with {ctx.algorithm}: SGLang {ctx.env.sglang_version}'s draft worker has no {BACKEND} draft "
        f"backend, so it raises ValueError 'EAGLE is not supported in (decode) attention backend {BACKEND}' while "
        "the server starts, after the target has loaded. SGLang 0.5.4.post3 adds the Ascend draft backends: "
        f"upgrade, or serve without {ctx.flag('--speculative-algorithm')} on this release",
        flags=(*(typed or ("--device",)), "--speculative-algorithm"),
    )


NPU_EAGLE3 = (
    "--model-path",
    "Qwen/Qwen3-8B",
    "--device",
    "npu",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "Tengyunw/qwen3_8b_eagle3",
)

RULE = Rule(
    check=check,
    code="AB280",
    category=Category.START,
    name="eagle-on-ascend-refused",
    summary="EAGLE/EAGLE3/NEXTN/STANDALONE on an Ascend NPU (attention backend ascend) is refused before SGLang 0.5.4.post3",
    severity=Severity.ERROR,
    sglang_versions=">=0.4.9,<0.5.4.post3",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE whose draft looks up the ascend attention backend: "
        "`--device npu` with no `--attention-backend` (SGLang picks ascend there), or ascend typed as "
        "`--attention-backend` or as the per-phase backend the draft reads, SGLang 0.4.9 through 0.5.4.post1.",
        why="0.4.9 added the ascend attention backend (layers/attention/ascend_backend.py, a `--attention-backend` "
        "choice at server_args.py:1133, the default on an NPU at model_executor/model_runner.py:379-380, 400-401), "
        "but the EAGLE worker's `init_attention_backend` knows flashinfer, triton, fa3 and flashmla only and raises "
        "`ValueError('EAGLE is not supported in attention backend ascend')` (0.4.9 speculative/eagle_worker.py:174-256). "
        "From 0.5.2rc2 the lookup reads the decode and draft-extend phases' backends (eagle_worker.py:222, 238; "
        "0.5.3 :201-259, then "
        "draft_utils.py `DraftBackendFactory`), still without ascend in either map (0.5.4.post1 draft_utils.py:22-32, "
        "38-58, 61-85: 'EAGLE is not supported in decode attention backend ascend'). 0.5.4.post3 adds "
        "`_create_ascend_decode_backend` / `_create_ascend_prefill_backend` to both maps (draft_utils.py:52, 76) with "
        "the Ascend multi-step draft backend (ascend_backend.py `AscendAttnMultiStepDraftBackend`, `forward_mtp`).",
        fix="Upgrade to SGLang 0.5.4.post3 or later, or serve without speculative decoding on the NPU.",
        fix_safety="No automatic fix: the device is the hardware and the release is the user's choice.",
    ),
    bad=Example(argv=NPU_EAGLE3, sglang_version="0.5.4.post1"),
    good=Example(argv=NPU_EAGLE3, sglang_version="0.5.4.post3"),
    sources=(
        "sglang 0.4.8.post1: python/sglang/srt/layers/attention/ (no ascend_backend.py)",
        "sglang 0.4.9: python/sglang/srt/speculative/eagle_worker.py:174-256; model_executor/model_runner.py:379-380,400-401",
        "sglang 0.5.2rc2: python/sglang/srt/speculative/eagle_worker.py:222,238 (per-phase lookup)",
        "sglang 0.5.3: python/sglang/srt/speculative/eagle_worker.py:201-259",
        "sglang 0.5.4.post1: python/sglang/srt/speculative/draft_utils.py:22-32,38-58,61-85; server_args.py:1080-1081,1099-1100",
        "sglang 0.5.4.post3: python/sglang/srt/speculative/draft_utils.py:52,76,178-186,233-236",
    ),
    log_signatures=(r"EAGLE is not supported in (decode )?attention backend ascend",),
)
