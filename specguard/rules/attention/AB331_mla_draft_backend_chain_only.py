"""AB331 mla-draft-backend-chain-only."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    attention_backend,
    effective_topk,
    is_mla_target,
    page_size,
    page_tree_backends,
    topk_origin,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import DEEPSEEK_V3_MLA_FACTS
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import (
    DEFAULT_BACKEND_PICKED_BEFORE_SPEC,
    EAGLE_DRAFT_EXTEND_MAP,
    FLASHINFER_ON_MLA_DRAFT,
    FLASHMLA_EAGLE_DRAFT,
    MLA_SWITCHES_REFUSED,
    PAGE_SIZE_KEEPS_TOPK,
    PAGE_SIZE_RESETS_TOPK,
)

ATTENTION = "--attention-backend"
DECODE = "--decode-attention-backend"
FLASHINFER_MLA = "Flashinfer MLA"
FLASHMLA = "FlashMLA"
FLASHMLA_PAGE = 64  # flashmla forces page size 64 before the speculative settings (0.4.6.post5 server_args.py:285-289)


def _draft_is_mla(ctx: CheckContext) -> bool:
    """The draft runs MLA too: its own config says so, or it is the target's MTP layer (no draft path)."""
    if ctx.spec.get("speculative_draft_model_path") is None:
        return ctx.algorithm == "EAGLE"
    return ctx.draft is not None and ctx.draft.kv_lora_rank is not None


def _decode_backend(ctx: CheckContext) -> tuple[str | None, tuple[str, ...]]:
    """The backend the multi-step draft decode runs on: (name, flags that set it)."""
    if not FLASHINFER_ON_MLA_DRAFT.present_in(ctx.version):
        # 0.4.4-0.4.4.post2: --enable-flashinfer-mla gives an MLA target the flashinfer_mla backend.
        return (
            ("flashinfer_mla", ("--enable-flashinfer-mla",))
            if ctx.spec.has("--enable-flashinfer-mla")
            else (None, ())
        )
    decode = (
        ctx.spec.last_value(DECODE)
        if EAGLE_DRAFT_EXTEND_MAP.present_in(ctx.version)
        else None
    )
    if decode is not None:
        return decode, (DECODE,)
    backend, given = attention_backend(ctx)
    if given:
        return backend, (ATTENTION,)
    if ctx.spec.has("--enable-flashinfer-mla") and not MLA_SWITCHES_REFUSED.present_in(
        ctx.version
    ):
        return "flashinfer", ("--enable-flashinfer-mla",)
    # SGLang's own choice (flashinfer for some MLA targets on SM100), as predicted where specguard models it.
    return (
        (backend, ())
        if DEFAULT_BACKEND_PICKED_BEFORE_SPEC.present_in(ctx.version)
        else (None, ())
    )


def _chain_only_kernel(ctx: CheckContext, backend: str | None) -> str | None:
    if backend in ("flashinfer", "flashinfer_mla"):
        return FLASHINFER_MLA
    if backend == "flashmla" and FLASHMLA_EAGLE_DRAFT.present_in(ctx.version):
        return FLASHMLA
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.spec.get("speculative_draft_attention_backend") is not None
    ):
        return
    if (
        not is_mla_target(ctx)
        or ctx.spec.has("--disable-mla")
        or not _draft_is_mla(ctx)
    ):
        return
    topk = effective_topk(ctx)
    steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps
    if (
        topk is None or topk <= 1 or steps is None or steps == 1
    ):  # one step: no multi-step draft backend (0.5.3.post2 draft_utils.py:35); no steps: SGLang refuses first
        return
    backend, flags = _decode_backend(ctx)
    kernel = _chain_only_kernel(ctx, backend)
    if kernel is None:
        return
    pages = FLASHMLA_PAGE if kernel == FLASHMLA else page_size(ctx)
    if (
        pages > 1
        and PAGE_SIZE_RESETS_TOPK.present_in(ctx.version)
        and not PAGE_SIZE_KEEPS_TOPK.present_in(ctx.version)
    ):
        return  # SGLang sets topk 1 itself here
    allowed = page_tree_backends(ctx)
    main_backend, _ = attention_backend(ctx)
    refused_at_args = pages > 1 and allowed is not None and main_backend not in allowed
    if refused_at_args and page_size(ctx) > 1:
        return  # AB002 reports the typed page size
    auto = topk_origin(ctx, topk)
    named = (
        f"{', '.join(ctx.flag(flag) for flag in flags)} {backend}"
        if flags
        else f"SGLang's default backend ({backend})"
    )
    if refused_at_args:
        failure = (
            f"flashmla forces page size {FLASHMLA_PAGE}, and SGLang {ctx.env.sglang_version} accepts topk > 1 "
            f"with page size > 1 only on {', '.join(allowed or ())}: argument resolution raises ValueError before "
            f"anything loads (without that check the draft worker would raise 'Currently {kernel} only supports "
            "topk=1 for speculative decoding')"
        )
    else:
        failure = (
            f"its multi-step draft backend raises ValueError 'Currently {kernel} only supports topk=1 for "
            "speculative decoding' when the draft worker starts, after the target weights load"
        )
    yield RULE.finding(
        f"{named} on this MLA target drafts with {kernel}, and topk is {topk}{auto}: {failure}. "
        f"Draft a chain ({ctx.flag('--speculative-eagle-topk')} 1) or use another backend",
        flags=(*flags, "--speculative-eagle-topk"),
        fix=set_flags(
            f"run a chain: topk 1, {steps} steps, {steps + 1} draft tokens",
            Applicability.UNSAFE,
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        ),
    )


NEXTN_TREE = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "2",
    "--speculative-num-draft-tokens",
    "6",
)
NEXTN_CHAIN = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="AB331",
    category=Category.START,
    name="mla-draft-backend-chain-only",
    summary="A tree draft (topk > 1) on the flashinfer MLA or FlashMLA draft backend, which run chains only",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE on an MLA target whose draft is MLA too (its MTP layer, or a draft "
        "whose config.json has kv_lora_rank), a topk above 1 (typed or automatic), more than one draft step, and a "
        "multi-step draft decode on flashinfer (from 0.4.4.post4; in 0.4.4-0.4.4.post2 the flashinfer_mla backend "
        "that `--enable-flashinfer-mla` sets) or flashmla (from 0.4.6.post5): typed, `--decode-attention-backend` "
        "from 0.5.2rc2, `--enable-flashinfer-mla` up to 0.4.5.post1 (refused as deprecated from 0.4.5.post2), or SGLang's default where specguard predicts it.",
        why="`FlashInferMLAMultiStepDraftBackend.__init__` raises `ValueError('Currently Flashinfer MLA only supports "
        "topk=1 for speculative decoding')` (0.4.4 `layers/attention/flashinfer_mla_backend.py:663-666`, built for "
        "the flashinfer_mla name at `speculative/eagle_worker.py:126`; from 0.4.4.post4 for flashinfer on an MLA "
        "target, `eagle_worker.py:152-172`; unchanged in 0.5.23 `flashinfer_mla_backend.py:1196-1198`, "
        "`speculative/draft_utils.py:226-245`). `FlashMLAMultiStepDraftBackend.__init__` raises 'Currently FlashMLA "
        "only supports topk=1 for speculative decoding' (0.4.6.post5 `flashmla_backend.py:469-472`; 0.5.23 "
        "`:608-611`). No argument check refuses this before the draft worker starts, except that "
        "0.4.4.post4-0.4.8.post1 set topk to 1 whenever the page size is above 1 (0.4.4.post4 `server_args.py:353-355`, "
        "0.4.8.post1 `:488-491`; gone in 0.4.9), which flashmla's forced page size 64 always triggers "
        "(0.4.6.post5 `server_args.py:285-289`), and that from 0.5.2rc0 a tree over pages is refused at argument "
        "time off the listed backends (0.5.2rc0 `server_args.py:536-537, 753-758`, rule AB002), which flashmla's "
        "page size 64 triggers as well. With one draft step no multi-step backend is built (0.5.3.post2 "
        "`draft_utils.py:35`), so the rule stays quiet there.",
        fix="Draft a chain (topk 1, draft tokens = steps + 1), or run the draft on a backend that builds trees (fa3, "
        "triton).",
        fix_safety="Unsafe: a chain drafts fewer candidates than the tree asked for.",
    ),
    bad=Example(
        argv=(*NEXTN_TREE, ATTENTION, "flashinfer"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="H100",
        sglang_version="0.4.4.post4",
    ),
    good=Example(
        argv=(*NEXTN_CHAIN, ATTENTION, "flashinfer"),
        target=DEEPSEEK_V3_MLA_FACTS,
        gpu="H100",
        sglang_version="0.4.4.post4",
    ),
    sources=(
        "sglang 0.4.3.post4: python/sglang/srt/speculative/eagle_worker.py:105-127 (no flashinfer_mla draft)",
        "sglang 0.4.4: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:663-666; python/sglang/srt/speculative/eagle_worker.py:126",
        "sglang 0.4.4.post4: python/sglang/srt/speculative/eagle_worker.py:152-172; python/sglang/srt/server_args.py:353-355",
        "sglang 0.4.6.post5: python/sglang/srt/layers/attention/flashmla_backend.py:469-472; python/sglang/srt/server_args.py:285-289, 414-418",
        "sglang 0.4.9: python/sglang/srt/server_args.py:358-362, 496-510 (page 64 for flashmla, no topk reset)",
        "sglang 0.5.2rc0: python/sglang/srt/server_args.py:536-537, 753-758",
        "sglang 0.5.23: python/sglang/srt/layers/attention/flashinfer_mla_backend.py:1196-1198; python/sglang/srt/layers/attention/flashmla_backend.py:608-611; python/sglang/srt/speculative/draft_utils.py:226-245, 334-344",
    ),
    sglang_versions=">=0.4.4",
    log_signatures=(
        r"Currently (Flashinfer MLA|FlashMLA) only supports topk=1 for speculative decoding",
    ),
)
