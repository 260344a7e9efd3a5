"""PL140 cp-tp-group-sharing-speculative."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.spec_params._shared import int_flag
from specguard.sglang_facts.algorithms import MTP_DRAFT_SPELLINGS
from specguard.sglang_facts.changes import CP_TP_SHARING_WIDENED

PREFILL_CP = "--enable-prefill-cp"
CP_SIZE = ("--attn-cp-size", "--attention-context-parallel-size")
GLM5_NEXT = "Glm5NextForConditionalGeneration"
QWEN4_EXP = "Qwen4ExpForConditionalGeneration"
# Each model's required --cp-strategy: a launch without it fails before the speculative guard.
STRATEGY = {GLM5_NEXT: "interleave", QWEN4_EXP: "zigzag"}


def _sharing_model(ctx: CheckContext) -> str | None:
    """The target class when this launch reaches the speculative guard of CP-TP group sharing."""
    if not ctx.spec.has(PREFILL_CP) or ctx.target is None:
        return None
    arch = ctx.target.architecture
    supported = (GLM5_NEXT, QWEN4_EXP) if CP_TP_SHARING_WIDENED.present_in(ctx.version) else (GLM5_NEXT,)
    if arch is None or arch not in supported:
        return None
    cp_size = next((size for size in (int_flag(ctx, flag) for flag in CP_SIZE) if size is not None), 1)
    tp_size = ctx.spec.get("tp_size") or 1
    strategy = ctx.spec.item("--cp-strategy")
    if cp_size <= 1 or cp_size != tp_size or strategy is None or not strategy.values or strategy.values[-1] != STRATEGY[arch]:
        return None
    return arch


def _native_mtp(ctx: CheckContext) -> bool:
    """EAGLE/NEXTN as written, with no separate draft checkpoint and topk unset or 1."""
    written = str(ctx.spec.get("speculative_algorithm") or "").upper()
    draft = ctx.spec.get("speculative_draft_model_path")
    return (
        written in MTP_DRAFT_SPELLINGS
        and draft in (None, ctx.spec.get("model_path"))
        and ctx.spec.get("speculative_eagle_topk") in (None, 1)
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None:
        return
    arch = _sharing_model(ctx)
    if arch is None:
        return
    where = f"CP-TP group sharing ({ctx.flag(PREFILL_CP)}, attention CP = TP) on {arch} in SGLang {ctx.version}"
    flags = (PREFILL_CP, "--speculative-algorithm")
    if not CP_TP_SHARING_WIDENED.present_in(ctx.version):
        if not _native_mtp(ctx):
            yield RULE.finding(
                f"{where} only supports native MTP (EAGLE/NEXTN without a separate draft model, topk 1): SGLang raises "
                "'CP/TP group sharing only supports native MTP with top-k 1.' at argument time",
                flags=flags,
            )
        return
    if arch != GLM5_NEXT:
        yield RULE.finding(
            f"{where}: SGLang raises '--speculative-algorithm is not supported with CP-TP group sharing.' at argument "
            "time; only GLM5-Next has the speculative paths ported",
            flags=flags,
        )
        return
    if ctx.algorithm != "DFLASH" and not _native_mtp(ctx):
        yield RULE.finding(
            f"{where} only supports DFLASH or native MTP (EAGLE/NEXTN without a separate draft model, topk 1): SGLang "
            "raises 'CP/TP group sharing only supports DFLASH or native MTP with top-k 1.' at argument time",
            flags=flags,
        )
        return
    # A decode node or a transfer backend other than mooncake is refused first, with its own message.
    backend = ctx.spec.item("--disaggregation-transfer-backend")
    mooncake = backend is None or (bool(backend.values) and backend.values[-1] == "mooncake")
    if ctx.spec.get("disaggregation_mode") == "prefill" and mooncake and ctx.algorithm != "DFLASH":
        yield RULE.finding(
            f"{where} with {ctx.flag('--disaggregation-mode')} prefill: SGLang refuses every speculative algorithm but "
            "DFLASH there ('--speculative-algorithm != DFLASH is not supported with CP-TP group sharing.') at "
            "argument time",
            flags=(*flags, "--disaggregation-mode"),
        )


RULE = Rule(
    check=check,
    code="PL140",
    category=Category.START,
    name="cp-tp-group-sharing-speculative",
    summary="Prefill CP with CP-TP group sharing refuses speculative algorithms it has no port for (0.5.22+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--enable-prefill-cp` with `--attn-cp-size` equal to `--tp-size` (> 1) and the model's `--cp-strategy`, "
        "on a target whose config.json `architectures[0]` has CP-TP group sharing (0.5.22: "
        "Glm5NextForConditionalGeneration; 0.5.23 adds Qwen4ExpForConditionalGeneration), with a speculative "
        "algorithm that path does not support.",
        why="0.5.22 added `resolve_cp_tp_group_sharing` (arg_groups/cp_tp_group_sharing_hook.py:23-54, called from "
        "parallel_hook.py:143): once the CP group is the TP group it accepts only native MTP (EAGLE or NEXTN as "
        "written, no separate `--speculative-draft-model-path`, topk unset or 1) and raises a ValueError for anything "
        "else (:48-54), DFLASH included. 0.5.23 (:53-66, :84-98) refuses every algorithm on Qwen4Exp, accepts DFLASH "
        "or native MTP on GLM5-Next, and on a GLM5-Next prefill node (`--disaggregation-mode prefill`, mooncake transfer) refuses all but DFLASH. "
        "0.5.21 has no such hook. A launch whose CP size differs from TP or whose `--cp-strategy` is not the model's "
        "(interleave for GLM5-Next, zigzag for Qwen4Exp) fails earlier in the same function, with its own message.",
        fix="Use native MTP with topk 1 (or, from 0.5.23 on GLM5-Next, DFLASH), or drop prefill CP.",
        fix_safety="No automatic fix: each choice changes the algorithm or the parallel layout.",
    ),
    bad=Example(
        argv=("--model-path", "zai-org/GLM-5.3-Flash", "--tp-size", "8", "--enable-prefill-cp", "--attn-cp-size", "8",
              "--cp-strategy", "interleave", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "4",
              "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8"),
        target={"architectures": (GLM5_NEXT,)},
        sglang_version="0.5.23",
    ),
    good=Example(
        argv=("--model-path", "zai-org/GLM-5.3-Flash", "--tp-size", "8", "--enable-prefill-cp", "--attn-cp-size", "8",
              "--cp-strategy", "interleave", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1",
              "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4"),
        target={"architectures": (GLM5_NEXT,)},
        sglang_version="0.5.23",
    ),
    sources=(
        "sglang 0.5.22: python/sglang/srt/arg_groups/cp_tp_group_sharing_hook.py:20-54",
        "sglang 0.5.22: python/sglang/srt/arg_groups/parallel_hook.py:143",
        "sglang 0.5.23: python/sglang/srt/arg_groups/cp_tp_group_sharing_hook.py:21-66,84-98",
    ),
    sglang_versions=">=0.5.22",
    log_signatures=(
        r"CP/TP group sharing only supports (DFLASH or )?native MTP with top-k 1",
        r"--speculative-algorithm is not supported with CP-TP group sharing",
        r"--speculative-algorithm != DFLASH is not supported with CP-TP group sharing",
    ),
)
