"""DM197 deepseek-v4-speculation-form."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Fix, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.sglang_facts.algorithms import DEEPSEEK_V4_TARGET_SPELLINGS
from specguard.sglang_facts.changes import DSPARK_ON_DEEPSEEK_V4, Change

DSV4 = "DeepseekV4ForCausalLM"
DSV41 = "DeepseekV41ForCausalLM"
# A V4.1 checkpoint (model_type deepseek_v41, architectures exactly [DeepseekV41ForCausalLM]) is renamed to the
# V4 class when its config loads, so the V4 defaults hook asserts on it too.
V41_RENAMED_TO_V4 = Change(
    "0.5.21",
    "0.5.21 configs/deepseek_v41.py:36-39 (unchanged in 0.5.23; no deepseek_v41 config in 0.5.20)",
)
DSV4_FLASH = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--tp",
    "8",
    "--speculative-num-steps",
    "3",
)


def is_deepseek_v4_at_argument_time(ctx: CheckContext) -> bool:
    target = ctx.target
    if target is None:
        return False
    return target.architecture == DSV4 or (
        target.architectures == (DSV41,)
        and target.model_type == "deepseek_v41"
        and V41_RENAMED_TO_V4.present_in(ctx.version)
    )


def serves_deepseek_v41(ctx: CheckContext) -> bool:
    """A V4.1 checkpoint, which the V4.1 feature check then refuses with anything but DSPARK (DM302, 0.5.21+)."""
    return (
        ctx.target is not None
        and ctx.target.model_type == "deepseek_v41"
        and V41_RENAMED_TO_V4.present_in(ctx.version)
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not is_deepseek_v4_at_argument_time(ctx):
        return
    # apply_deepseek_v4_defaults runs with the model overrides, before handle_speculative_decoding, so it reads
    # the algorithm and topk as written: NEXTN is not yet EAGLE, and an unset topk is None, not 1.
    written = ctx.spec.get("speculative_algorithm")
    if written is None:
        return
    # 0.5.16 accepts DSPARK besides EAGLE; 0.5.12-0.5.15.post1 asserted EAGLE only.
    allowed = (
        DEEPSEEK_V4_TARGET_SPELLINGS
        if DSPARK_ON_DEEPSEEK_V4.present_in(ctx.version)
        else ("EAGLE",)
    )
    topk = ctx.spec.get("speculative_eagle_topk")
    algorithm, topk_flag = (
        ctx.flag("--speculative-algorithm"),
        ctx.flag("--speculative-eagle-topk"),
    )
    fix: Fix | None = set_flags(
        "write EAGLE with topk 1",
        Applicability.UNSAFE,
        speculative_algorithm="EAGLE",
        speculative_eagle_topk=1,
    )
    v41 = serves_deepseek_v41(ctx)
    if v41:
        # EAGLE would pass this assert only to be refused by the V4.1 feature check (DM302).
        fix = None
    advice = (
        f"DeepSeek-V4.1 then accepts only DSPARK (DM302): write {algorithm} DSPARK with a DSpark draft"
        if v41
        else f"Write {algorithm} EAGLE {topk_flag} 1 for the built-in MTP draft"
    )
    if written not in allowed:
        names = " and ".join(allowed)
        yield RULE.finding(
            f"{algorithm} {written} on a DeepSeek-V4 target in SGLang {ctx.version}: argument handling asserts the "
            f"algorithm as written is {' or '.join(allowed)} (AssertionError 'Only {names} speculative "
            f"algorithm{'s are' if len(allowed) > 1 else ' is'} supported for {DSV4}'), before NEXTN is aliased to "
            f"EAGLE. {advice}",
            flags=("--speculative-algorithm",),
            fix=fix if written == "NEXTN" else None,
        )
        return
    if written == "EAGLE" and topk != 1:
        told = (
            f"{topk_flag} {topk}"
            if topk is not None
            else f"{topk_flag} unset (read as None before SGLang fills it)"
        )
        yield RULE.finding(
            f"{algorithm} EAGLE with {told} on a DeepSeek-V4 target in SGLang {ctx.version}: argument handling "
            f"asserts topk 1 (AssertionError 'Only EAGLE speculative algorithm with topk == 1 is supported for "
            f"{DSV4}'). {advice if v41 else f'Set {topk_flag} 1'}",
            flags=("--speculative-eagle-topk",),
            fix=fix,
        )


RULE = Rule(
    check=check,
    code="DM197",
    category=Category.START,
    name="deepseek-v4-speculation-form",
    summary="a DeepSeek-V4 target speculates only with --speculative-algorithm EAGLE and an explicit topk 1 "
    "(or DSPARK from 0.5.16) (0.5.12+)",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="A target whose config.json architectures[0] is DeepseekV4ForCausalLM with `--speculative-algorithm` "
        "written other than EAGLE (or DSPARK, from 0.5.16), NEXTN included, or EAGLE without "
        "`--speculative-eagle-topk 1` (unset included); from 0.5.21 also a DeepSeek-V4.1 checkpoint (model_type "
        "deepseek_v41, architectures [DeepseekV41ForCausalLM]), which SGLang renames to DeepseekV4ForCausalLM when "
        "its config loads; for a V4.1 checkpoint the finding points to DSPARK and offers no fix, as the V4.1 feature "
        "check refuses EAGLE next (DM302). An unknown target config keeps it quiet.",
        why="`apply_deepseek_v4_defaults` asserts 'Only EAGLE speculative algorithm is supported' and then 'Only EAGLE "
        "speculative algorithm with topk == 1 is supported' (0.5.12 arg_groups/deepseek_v4_hook.py:36-42, to "
        "0.5.15.post1 :55-61). It runs in the model-specific adjustments (0.5.12 server_args.py:1751-1784, :929), "
        "before the speculative hook (:976) uppercases and aliases the algorithm (NEXTN to EAGLE) and fills topk, "
        "so it sees both as written. 0.5.16 accepts DSPARK and keeps the topk assert for EAGLE "
        "(deepseek_v4_hook.py:55-63); unchanged to 0.5.23 (deepseek_v4_hook.py:148-158, run from "
        "model_hook.py:265 at pipeline.py:225, before the speculative hook at :306). 0.5.11 has no DeepSeek-V4. "
        "0.5.21 registers the deepseek_v41 config, whose normalizer rewrites architectures [DeepseekV41ForCausalLM] "
        "to [DeepseekV4ForCausalLM] (configs/deepseek_v41.py:36-39, 0.5.23 the same), so the hook's "
        "`model_arch in ['DeepseekV4ForCausalLM']` (model_hook.py:228-232) catches V4.1 too; 0.5.20 has no V4.1 config.",
        fix="Launch the built-in MTP draft as `--speculative-algorithm EAGLE --speculative-eagle-topk 1` (or DSPARK "
        "with its own draft, 0.5.16+).",
        fix_safety="Unsafe: it fixes the draft tree at a chain; NEXTN and EAGLE name the same MTP draft.",
    ),
    bad=Example(
        argv=(
            *DSV4_FLASH,
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target={"architectures": (DSV4,)},
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=(
            *DSV4_FLASH,
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target={"architectures": (DSV4,)},
        sglang_version="0.5.12",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/server_args.py (no DeepseekV4ForCausalLM)",
        "sglang 0.5.12: python/sglang/srt/arg_groups/deepseek_v4_hook.py:36-42; server_args.py:929,976,1751-1784",
        "sglang 0.5.15.post1: python/sglang/srt/arg_groups/deepseek_v4_hook.py:55-61",
        "sglang 0.5.16: python/sglang/srt/arg_groups/deepseek_v4_hook.py:55-63; server_args.py:2969,3031,4357-4364",
        "sglang 0.5.23: python/sglang/srt/arg_groups/deepseek_v4_hook.py:148-158; model_hook.py:258-265; pipeline.py:225,306",
        "sglang 0.5.20: python/sglang/srt/configs/ (no deepseek_v41.py)",
        "sglang 0.5.21: python/sglang/srt/configs/deepseek_v41.py:36-39,63-66; utils/hf_transformers/common.py:220-223, hf_transformers/config.py:186; arg_groups/model_hook.py:228-232",
        "sglang 0.5.23: python/sglang/srt/configs/deepseek_v41.py:36-39",
    ),
    sglang_versions=">=0.5.12",
    log_signatures=(
        r"Only EAGLE speculative algorithm is supported for DeepseekV4ForCausalLM",
        r"Only EAGLE and DSPARK speculative algorithms are supported for DeepseekV4ForCausalLM",
        r"Only EAGLE speculative algorithm with topk == 1 is supported for DeepseekV4ForCausalLM",
    ),
)
