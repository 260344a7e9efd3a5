"""PL301 dspark-dsv4-draft-attention-tp."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.rules.spec_params._shared import (
    attn_dp_enabled,
    attn_dp_flags,
    device,
    int_flag,
)
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES
from specguard.sglang_facts.changes import (
    ATTN_DP_SIZE_FLAG,
    DSPARK_DSV4_DRAFT_ATTN_TP_NPU_EXEMPT,
)


def attention_tp(ctx: CheckContext) -> int:
    """tp // attn_dp as the parallel state derives it (attn_cp is 1 here: DSPARK with attention DP refuses
    --attn-cp-size > 1 at argument time, PL172). Before --attn-dp-size the DP width is --dp-size itself."""
    tp = ctx.spec.get("tp_size") or 1
    width = (
        ctx.resolution.attention_dp_size
        if ATTN_DP_SIZE_FLAG.present_in(ctx.version)
        else ctx.spec.get("dp_size") or 1
    )
    return tp // max(width, 1)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK" or not attn_dp_enabled(ctx):
        return
    # draft_is_deepseek_v4 reads the draft checkpoint's config.json (is_deepseek_v4: architectures[0]).
    if ctx.draft is None or ctx.draft.architecture not in DSV4_ARCHITECTURES:
        return
    if device(ctx) == "npu" and DSPARK_DSV4_DRAFT_ATTN_TP_NPU_EXEMPT.present_in(
        ctx.version
    ):
        return
    cp = int_flag(ctx, "--attn-cp-size")
    if cp is not None and cp > 1:
        return  # refused at argument time already (PL172)
    attn_tp = attention_tp(ctx)
    if attn_tp <= 1:
        return
    tp = ctx.spec.get("tp_size")
    written = " ".join(ctx.flag(f) for f in attn_dp_flags(ctx))
    fix = None
    if tp and ctx.spec.has("--dp-size") and not ctx.spec.has("--attn-dp-size"):
        fix = set_flags(
            f"set --dp-size to the TP size ({tp})", Applicability.UNSAFE, dp_size=tp
        )
    yield RULE.finding(
        f"DSPARK with a DeepSeek-V4 (MoE) draft under attention DP ({written}) leaves attention TP at {attn_tp}: "
        f"SGLang {ctx.version} raises 'DSpark + dp attention with a DeepSeek-V4 (MoE) draft requires attn_tp == 1 "
        "(set --dp-size == --tp)' when the DSPARK worker starts, after the target weights load. Make the "
        "attention-DP size equal the TP size",
        flags=("--speculative-algorithm", "--tp-size", *attn_dp_flags(ctx)),
        fix=fix,
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="PL301",
    category=Category.START,
    name="dspark-dsv4-draft-attention-tp",
    summary="DSPARK with a DeepSeek-V4 draft under attention DP needs attention TP 1 (--dp-size == --tp) (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` with attention DP and a draft whose config.json architectures[0] "
        "is a DeepSeek-V4 class (DeepseekV4ForCausalLM, its NextN or DSpark class), with attention TP (TP size "
        "over the attention-DP size) above 1; from 0.5.23 not on NPU. An unknown draft config keeps it quiet.",
        why="0.5.16 added DSPARK; `DSparkWorkerV2.__init__` reads the draft config (`draft_is_deepseek_v4`, "
        'speculative/dspark_components/dspark_config.py:24-38) and raises "DSpark + dp attention with a '
        "DeepSeek-V4 (MoE) draft requires attn_tp == 1 (set --dp-size == --tp). attn_tp > 1 corrupts the "
        'MoE-under-DP all-reduce." (0.5.16 dspark_worker_v2.py:81-91, attn_tp = tp // dp). 0.5.17-0.5.21 read the '
        "parallel state's attn_tp_size (0.5.17 :91-108, 0.5.21 :158-176), 0.5.22 the resolved attention-DP "
        "switch (:170-188), 0.5.23 skips NPU (:199-222; dspark_config.py:34-48). It runs when the DSPARK worker "
        "is built, after the target model loads. 0.5.15.post1 has no DSPARK.",
        fix="Set the attention-DP size to the TP size (`--dp-size` equal to `--tp`), or drop attention DP.",
        fix_safety="Unsafe: it changes the parallel layout.",
    ),
    bad=Example(
        argv=(
            *DEEPSEEK_V4_FLASH_DSPARK,
            "--tp",
            "8",
            "--enable-dp-attention",
            "--dp-size",
            "4",
            "--enable-dp-lm-head",
        ),
        draft={"architectures": ("DeepseekV4ForCausalLMDSpark",)},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(
            *DEEPSEEK_V4_FLASH_DSPARK,
            "--tp",
            "8",
            "--enable-dp-attention",
            "--dp-size",
            "8",
            "--enable-dp-lm-head",
        ),
        draft={"architectures": ("DeepseekV4ForCausalLMDSpark",)},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/ (no dspark_components; no DSPARK)",
        (
            "sglang 0.5.16: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:81-91; "
            "dspark_config.py:24-38; configs/model_config.py:123-128"
        ),
        "sglang 0.5.17: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:91-108",
        "sglang 0.5.22: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:170-188",
        (
            "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:199-222; "
            "dspark_config.py:34-48"
        ),
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"DSpark \+ dp attention with a DeepSeek-V4 \(MoE\) draft requires attn_tp == 1",
    ),
)
