"""AB330 eagle-draft-backend-missing."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import (
    SGLANG_DIALECTS,
    is_mla_target,
    proposed_backend,
)
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import (
    AITER_BACKEND_CHOICE,
    AITER_EAGLE_DRAFT,
    EAGLE_DRAFT_BACKEND_CHECKED,
    EAGLE_DRAFT_EXTEND_MAP,
    ENABLE_FLASHMLA_READ,
    FA3_BACKEND_CHOICE,
    FA3_EAGLE_DRAFT,
    FA4_BACKEND_CHOICE,
    FA4_DECODE_ALLOWED,
    FA4_EAGLE_DRAFT,
    FA4_PREFILL_ONLY,
    FLASHINFER_MLA_BACKEND_NAME,
    FLASHINFER_MLA_DRAFT_CHAIN_ONLY,
    FLASHINFER_ON_MLA_DRAFT,
    FLASHMLA_BACKEND_CHOICE,
    FLASHMLA_DRAFT_EXTEND,
    FLASHMLA_EAGLE_DRAFT,
    MLA_SWITCHES_REFUSED,
    MLA_TYPED_BACKEND_KEPT,
    Change,
)

ATTENTION = "--attention-backend"
PREFILL = "--prefill-attention-backend"
DECODE = "--decode-attention-backend"
ENABLE_FLASHMLA = "--enable-flashmla"
ENABLE_FLASHINFER_MLA = "--enable-flashinfer-mla"
ALWAYS_LISTED = (
    "flashinfer",
    "triton",
)  # in the draft worker's list in every release from 0.4.3
FALLBACK = "triton"  # runs on CUDA and ROCm

# The backends this rule speaks of: (the release a launch can first run it, the release the EAGLE
# worker's multi-step draft list took it; None: never). intel_amx is AB110's, flex_attention AB005's
# (refused at argument time) and trtllm_mla/trtllm_mha AB261's (refused at argument time until the
# release that added them to the list).
DRAFT_LIST: dict[str, tuple[Change, Change | None]] = {
    "torch_native": (EAGLE_DRAFT_BACKEND_CHECKED, None),
    "fa3": (FA3_BACKEND_CHOICE, FA3_EAGLE_DRAFT),
    "flashmla": (ENABLE_FLASHMLA_READ, FLASHMLA_EAGLE_DRAFT),
    "flashinfer_mla": (FLASHINFER_MLA_BACKEND_NAME, FLASHINFER_MLA_DRAFT_CHAIN_ONLY),
    "aiter": (AITER_BACKEND_CHOICE, AITER_EAGLE_DRAFT),
    "fa4": (FA4_BACKEND_CHOICE, FA4_EAGLE_DRAFT),
}
# The separate draft-extend list (from 0.5.2rc2): the backends missing from it, until the release that added them.
EXTEND_LIST_GAPS: dict[str, tuple[Change, Change | None]] = {
    "torch_native": (EAGLE_DRAFT_EXTEND_MAP, None),
    "flashmla": (EAGLE_DRAFT_EXTEND_MAP, FLASHMLA_DRAFT_EXTEND),
    "fa4": (FA4_BACKEND_CHOICE, FA4_EAGLE_DRAFT),
}
DRAFT = "--speculative-draft-attention-backend"


def _refused(
    table: dict[str, tuple[Change, Change | None]],
    backend: str | None,
    ctx: CheckContext,
) -> bool:
    if backend not in table:
        return False
    first, accepted = table[backend]
    return first.present_in(ctx.version) and (
        accepted is None or not accepted.present_in(ctx.version)
    )


def _replacement(ctx: CheckContext, backend: str) -> str:
    """The backend specguard proposes for this GPU (as AB002 does), if the draft worker builds it here; else triton."""
    proposed = proposed_backend(ctx, avoid=frozenset({backend}))
    if proposed is None:
        return FALLBACK
    if proposed in ALWAYS_LISTED:
        return proposed
    accepted = DRAFT_LIST[proposed][1] if proposed in DRAFT_LIST else None
    return (
        proposed
        if accepted is not None and accepted.present_in(ctx.version)
        else FALLBACK
    )


def _known_non_mla(ctx: CheckContext) -> bool:
    return (
        ctx.target is not None
        and ctx.target.architectures is not None
        and not is_mla_target(ctx)
    )


def _single_backend(ctx: CheckContext) -> tuple[str | None, tuple[str, ...]]:
    """Up to 0.5.2rc1 the worker reads only the resolved ``--attention-backend``: (backend, flags that set it)."""
    # The deprecated MLA switches set the backend of an MLA target (0.4.4.post2 model_runner.py:218-234).
    mla_switch = is_mla_target(ctx) and not ctx.spec.has("--disable-mla")
    if (
        mla_switch
        and ctx.spec.has(ENABLE_FLASHINFER_MLA)
        and FLASHINFER_MLA_BACKEND_NAME.present_in(ctx.version)
        and not FLASHINFER_ON_MLA_DRAFT.present_in(ctx.version)
    ):
        return "flashinfer_mla", (ENABLE_FLASHINFER_MLA,)
    if (
        mla_switch
        and ctx.spec.has(ENABLE_FLASHMLA)
        and not ctx.spec.has(ENABLE_FLASHINFER_MLA)
        and ENABLE_FLASHMLA_READ.present_in(ctx.version)
        and not MLA_SWITCHES_REFUSED.present_in(ctx.version)
    ):
        return "flashmla", (ENABLE_FLASHMLA,)
    typed = ctx.spec.get("attention_backend")
    if typed is not None:
        if typed == "flashmla" and not FLASHMLA_BACKEND_CHOICE.present_in(ctx.version):
            return None, ()  # not a choice yet: argparse refuses it
        if not MLA_TYPED_BACKEND_KEPT.present_in(ctx.version) and not _known_non_mla(
            ctx
        ):
            return (
                None,
                (),
            )  # an MLA target's backend was overridden (flashinfer or triton)
        return typed, (ATTENTION,)
    gpu = ctx.env.gpu
    if (
        gpu is not None
        and gpu.platform == "rocm"
        and AITER_BACKEND_CHOICE.present_in(ctx.version)
        and _known_non_mla(ctx)
    ):
        return "aiter", ()
    return None, ()


def _phase_backend(
    ctx: CheckContext, phase_flag: str
) -> tuple[str | None, tuple[str, ...]]:
    """From 0.5.2rc2: the draft's own backend (from 0.5.7, draft_utils.py:21), a phase flag, else
    ``--attention-backend`` (the defaults are all in the lists)."""
    draft = ctx.spec.last_value(DRAFT)
    if draft is not None:
        return draft, (DRAFT,)
    phase = ctx.spec.last_value(phase_flag)
    if phase is not None:
        return phase, (phase_flag,)
    typed = ctx.spec.get("attention_backend")
    return (typed, (ATTENTION,)) if typed is not None else (None, ())


def _refused_at_arguments(
    ctx: CheckContext, backend: str, flags: tuple[str, ...]
) -> bool:
    """0.5.4-0.5.7 refuse fa4 on --attention-backend/--decode-attention-backend before any worker starts
    ('FA4 backend is only supported for prefill', 0.5.4 server_args.py:1143-1146): not this rule's failure."""
    prefill_only = FA4_PREFILL_ONLY.present_in(
        ctx.version
    ) and not FA4_DECODE_ALLOWED.present_in(ctx.version)
    return (
        backend == "fa4"
        and prefill_only
        and bool(flags)
        and flags[0] in (ATTENTION, DECODE)
    )


def _refusal(ctx: CheckContext) -> tuple[str, str, tuple[str, ...]] | None:
    """(what SGLang calls the backend, backend, flags that set it) for the first lookup that fails."""
    if not EAGLE_DRAFT_EXTEND_MAP.present_in(ctx.version):
        backend, flags = _single_backend(ctx)
        return (
            ("attention backend", backend, flags)
            if backend and _refused(DRAFT_LIST, backend, ctx)
            else None
        )
    steps = ctx.spec.get("speculative_num_steps") or ctx.resolution.num_steps
    # From 0.5.3.post2 a one-step draft builds no multi-step decode backend (draft_utils.py:35-36); before, the
    # decode lookup of a one-step draft is not checked here (quiet rather than a guess).
    if steps != 1:
        backend, flags = _phase_backend(ctx, DECODE)
        if (
            backend
            and _refused(DRAFT_LIST, backend, ctx)
            and not _refused_at_arguments(ctx, backend, flags)
        ):
            return "decode attention backend", backend, flags
    extend_flag = (
        DECODE
        if ctx.spec.last_value("--speculative-attention-mode") == "decode"
        else PREFILL
    )
    backend, flags = _phase_backend(ctx, extend_flag)
    if (
        backend
        and _refused(EXTEND_LIST_GAPS, backend, ctx)
        and not _refused_at_arguments(ctx, backend, flags)
    ):
        return "attention backend", backend, flags
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.spec.last_value(DRAFT)
    # A draft backend of its own: only fa4 here, which AB006 accepts as a draft choice (AB006 has the rest).
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or draft not in (None, "fa4"):
        return
    refusal = _refusal(ctx)
    if refusal is None:
        return
    what, backend, flags = refusal
    replacement = _replacement(ctx, backend)
    if not flags:
        how = f"no {ctx.flag(ATTENTION)} on ROCm gives this non-MLA target {backend}"
        edits: tuple[Edit, ...] = (Edit(name=ATTENTION, value=replacement),)
    elif flags[0] in (ENABLE_FLASHMLA, ENABLE_FLASHINFER_MLA):
        how = f"{ctx.flag(flags[0])} runs this MLA target on {backend}"
        edits = (Edit(name=flags[0], value=None),)
    else:
        how = f"{', '.join(ctx.flag(flag) for flag in flags)} {backend}"
        edits = tuple(Edit(name=flag, value=replacement) for flag in flags)
    _, accepted = (
        EXTEND_LIST_GAPS
        if what == "attention backend"
        and EAGLE_DRAFT_EXTEND_MAP.present_in(ctx.version)
        else DRAFT_LIST
    )[backend]
    upgrade = (
        f", or SGLang {accepted.first_release} or later" if accepted is not None else ""
    )
    yield RULE.finding(
        f"{how} with {ctx.algorithm}: SGLang {ctx.env.sglang_version}'s EAGLE draft worker has no draft backend for "
        f"{backend} and raises ValueError 'EAGLE is not supported in {what} {backend}' when it starts, after the "
        f"target weights load. Use {replacement} (or another backend the draft worker builds){upgrade}",
        flags=(*flags, "--speculative-algorithm"),
        fix=fix_of(f"run the draft on {replacement}", Applicability.UNSAFE, *edits),
    )


ROCM_EAGLE3 = (
    *LLAMA31_8B_EAGLE3,
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    check=check,
    code="AB330",
    category=Category.START,
    name="eagle-draft-backend-missing",
    summary="EAGLE-family draft on an attention backend the EAGLE draft worker cannot build (torch_native; "
    "flashinfer_mla, fa3, flashmla, aiter, fa4 before they were added)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE, no `--speculative-draft-attention-backend`, and a draft attention "
        "backend missing from the EAGLE worker's list in that release: torch_native (every release from 0.4.3); "
        "flashinfer_mla (what `--enable-flashinfer-mla` sets on an MLA target) in 0.4.3.post4; fa3 in 0.4.4.post2; flashmla (`--attention-backend flashmla`, or `--enable-flashmla` on an MLA target in "
        "0.4.4.post2-0.4.5.post1) up to 0.4.6.post4, and for the draft-extend backend in 0.5.2rc2-0.5.3rc0; aiter "
        "(typed, or SGLang's ROCm default for a non-MLA target) in 0.4.6.post5-0.5.0rc0; fa4 (typed on any backend flag "
        "or as `--speculative-draft-attention-backend`) in 0.5.3rc2-0.5.10rc0, except where 0.5.4-0.5.7 refuse fa4 "
        "outside prefill at argument time.",
        why="The EAGLE worker builds its multi-step draft backend from the attention backend's name and raises for a "
        "name it has no branch for: 0.4.3 `speculative/eagle_worker.py:68-91` (flashinfer, triton; 'EAGLE is not "
        "supportted in attention backend', spelled so up to 0.4.6.post3; 0.4.3.post4 `:105-127` the same two, while "
        "`model_executor/model_runner.py:214-218` now sets flashinfer_mla for `--enable-flashinfer-mla` on an MLA "
        "target), 0.4.4 `:126` (+flashinfer_mla), 0.4.4.post2 `:147-188` (the same three; "
        "fa3 is a choice from this release, server_args.py:778), 0.4.4.post4 `:189` (+fa3), 0.4.6.post4 `:152-205` "
        "(no flashmla; 'EAGLE is not supported in attention backend'), 0.4.6.post5 `:203-214` (+flashmla), 0.5.0rc0 "
        "`:176-257` (no aiter, although 0.4.6.post5-0.5.0rc0 `model_executor/model_runner.py:337-338`/`:403-404` "
        "pick aiter on HIP for a non-MLA target), 0.5.0rc1 `:229-244` (+aiter). From 0.5.2rc2 two maps: the decode "
        "map ('EAGLE is not supported in decode attention backend', `:211-227`) and a draft-extend map "
        "(`:227-241`, 'EAGLE is not supported in prefill attention backend'; 0.5.2 `:229-248` 'EAGLE is not "
        "supported in attention backend') without flashmla until 0.5.3rc2 (`:247`; 0.5.3rc0 `:236-259` still "
        "without). torch_native is in none of them up to 0.5.23 (`speculative/draft_utils.py:96-118, 126-154`). "
        "fa4 is a choice from 0.5.3rc2 (server_args.py:98) and joins both maps only in 0.5.10 (`draft_utils.py:58, 83`; "
        "0.5.10rc0 `:43-91` without it); the draft's own `--speculative-draft-attention-backend` is looked up in the "
        "same maps from 0.5.7 (`draft_utils.py:21`); 0.5.4-0.5.7 raise 'FA4 backend is only supported for prefill' "
        "for fa4 on `--attention-backend`/`--decode-attention-backend` first (0.5.4 `server_args.py:1143-1146`), "
        "so there only a prefill or draft fa4 reaches the draft worker. "
        "Before 0.4.4.post4 the model runner replaced a typed backend on an MLA target (0.4.4.post2 "
        "`model_runner.py:218-234`), so there the rule needs a known non-MLA target. In the log: 'EAGLE is not "
        "supportted in attention backend torch_native' (0.4.3-0.4.6.post3), 'EAGLE is not supported in attention "
        "backend aiter', 'EAGLE is not supported in prefill attention backend flashmla' (0.5.2rc2), 'EAGLE is not "
        "supported in decode attention backend fa4'.",
        fix="Run the draft on a backend the worker builds (the GPU's usual choice where the list has it, else triton, which every list has), or upgrade past the window.",
        fix_safety="Unsafe: another attention kernel runs.",
    ),
    bad=Example(
        argv=ROCM_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",)},
        gpu="MI300X",
        sglang_version="0.5.0rc0",
    ),
    good=Example(
        argv=ROCM_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",)},
        gpu="MI300X",
        sglang_version="0.5.0rc1",
    ),
    sources=(
        "sglang 0.4.2.post4: python/sglang/srt/speculative/eagle_worker.py:72 (always FlashInferMultiStepDraftBackend)",
        "sglang 0.4.3: python/sglang/srt/speculative/eagle_worker.py:68-91",
        "sglang 0.4.3.post2: python/sglang/srt/model_executor/model_runner.py:114-118 (--enable-flashinfer-mla sets flashinfer)",
        "sglang 0.4.3.post4: python/sglang/srt/speculative/eagle_worker.py:105-127; python/sglang/srt/model_executor/model_runner.py:214-218",
        "sglang 0.4.4: python/sglang/srt/speculative/eagle_worker.py:126",
        "sglang 0.4.4.post2: python/sglang/srt/speculative/eagle_worker.py:147-188; python/sglang/srt/model_executor/model_runner.py:218-234; python/sglang/srt/server_args.py:778",
        "sglang 0.4.4.post4: python/sglang/srt/speculative/eagle_worker.py:152-206; python/sglang/srt/model_executor/model_runner.py:227-240",
        "sglang 0.4.6.post4: python/sglang/srt/speculative/eagle_worker.py:152-205",
        "sglang 0.4.6.post5: python/sglang/srt/speculative/eagle_worker.py:203-218; python/sglang/srt/model_executor/model_runner.py:337-338",
        "sglang 0.5.0rc0: python/sglang/srt/speculative/eagle_worker.py:176-257; python/sglang/srt/model_executor/model_runner.py:403-404",
        "sglang 0.5.0rc1: python/sglang/srt/speculative/eagle_worker.py:229-244",
        "sglang 0.5.2rc1: python/sglang/srt/speculative/eagle_worker.py:268-277",
        "sglang 0.5.2rc2: python/sglang/srt/speculative/eagle_worker.py:196-241",
        "sglang 0.5.3rc0: python/sglang/srt/speculative/eagle_worker.py:236-259",
        "sglang 0.5.3rc2: python/sglang/srt/speculative/eagle_worker.py:238-259",
        "sglang 0.5.3rc2: python/sglang/srt/server_args.py:98 (fa4 a choice)",
        "sglang 0.5.4: python/sglang/srt/server_args.py:1143-1146",
        "sglang 0.5.7: python/sglang/srt/speculative/draft_utils.py:21; python/sglang/srt/server_args.py:1647-1650",
        "sglang 0.5.8: python/sglang/srt/server_args.py:1779-1783",
        "sglang 0.5.10rc0: python/sglang/srt/speculative/draft_utils.py:23-36, 43-91",
        "sglang 0.5.10: python/sglang/srt/speculative/draft_utils.py:58, 83",
        "sglang 0.5.23: python/sglang/srt/speculative/draft_utils.py:47-66, 96-118, 126-154",
    ),
    sglang_versions=">=0.4.3",
    log_signatures=(
        r"EAGLE is not supportt?ed in (decode |prefill )?attention backend (torch_native|fa3|fa4|flashmla|flashinfer_mla|aiter)",
    ),
)
