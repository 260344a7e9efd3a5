"""PL003 dflash-constraints."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.examples import LLAMA31_8B
from specguard.rules.parallel.PL002_pipeline_parallel_speculative import pp_off


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DFLASH":
        return
    pp = ctx.spec.get("pp_size") or 1
    if pp != 1:
        yield RULE.finding(
            f"DFLASH only supports {ctx.flag('--pp-size')} 1, not {pp}: SGLang raises at argument time",
            flags=("--pp-size",),
            fix=pp_off(ctx, pp),
        )
    if ctx.spec.get("speculative_draft_model_path") is None:
        yield RULE.finding(
            f"DFLASH needs {ctx.flag('--speculative-draft-model-path')} (a DFlash draft such as "
            "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat): SGLang raises at argument time",
            flags=("--speculative-draft-model-path",),
        )
    block = ctx.spec.get("speculative_dflash_block_size")
    tokens = ctx.spec.get("speculative_num_draft_tokens")
    block_flag, tokens_flag = ctx.flag("--speculative-dflash-block-size"), ctx.flag("--speculative-num-draft-tokens")
    if block is not None and block <= 0:
        yield RULE.finding(
            f"{block_flag} must be positive, not {block}: SGLang raises at argument time",
            flags=("--speculative-dflash-block-size",),
            fix=set_flags(f"drop {block_flag}", Applicability.UNSAFE, speculative_dflash_block_size=None),
        )
    elif block is not None and tokens is not None and tokens != block:
        yield RULE.finding(
            f"{tokens_flag} {tokens} and {block_flag} {block} differ: for DFLASH they are one setting and "
            "SGLang raises 'Both ... are set but they differ'",
            flags=("--speculative-num-draft-tokens", "--speculative-dflash-block-size"),
            fix=set_flags(f"set {tokens_flag} {block}", Applicability.UNSAFE, speculative_num_draft_tokens=block),
        )
    window = ctx.spec.get("speculative_draft_window_size")
    resolved = ctx.resolution.num_draft_tokens
    if window is not None and window > 0 and resolved is not None and window < resolved:
        yield RULE.finding(
            f"{ctx.flag('--speculative-draft-window-size')} {window} is smaller than the DFLASH block of "
            f"{resolved} draft tokens: SGLang raises 'must be >= --speculative-num-draft-tokens (block_size)'",
            flags=("--speculative-draft-window-size",),
            fix=set_flags(
                f"set the draft window to {resolved}", Applicability.UNSAFE, speculative_draft_window_size=resolved
            ),
        )
    forced = {
        dest: value
        for dest, value in (
            ("speculative_num_steps", ctx.spec.get("speculative_num_steps")),
            ("speculative_eagle_topk", ctx.spec.get("speculative_eagle_topk")),
        )
        if value is not None and value != 1
    }
    if forced:
        shown = ", ".join(f"{ctx.flag('--' + d.replace('_', '-'))} {v}" for d, v in forced.items())
        yield RULE.finding(
            f"DFLASH runs one step with topk 1 and overrides {shown} to 1 (a log warning only); its draft size "
            f"is {tokens_flag}/{block_flag}",
            flags=tuple("--" + d.replace("_", "-") for d in forced),
            fix=set_flags("set them to 1, what SGLang runs", Applicability.SAFE, **{d: 1 for d in forced}),
            severity=Severity.WARNING,
        )


RULE = Rule(
    check=check,
    code="PL003",
    category=Category.START,
    name="dflash-constraints",
    summary="DFLASH with pp > 1, no draft path, a mismatched block size or a window below the block",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="The checks of `_handle_dflash`: pp size, draft path, block size vs draft tokens, draft window "
        "vs block, and the steps/topk it forces to 1.",
        why="SGLang raises for pp != 1 (catalogue P72), a missing draft path (P73), a block size <= 0 or "
        "one that differs from an explicit draft-token count (P75), and a draft window below the block "
        "(P77); it silently forces steps and topk to 1 (P74). See 0.5.23 speculative_hook.py:319-434. "
        "The draft-token count otherwise comes from the draft config's block_size, else 16 (P76).",
        fix="pp 1 (GPUs moved to TP), draft tokens = block size, window = block; steps/topk 1.",
        fix_safety="Setting steps/topk to 1 is safe (SGLang does it); the others change what runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat",
              "--speculative-num-draft-tokens", "8", "--speculative-dflash-block-size", "16"),
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "DFLASH",
              "--speculative-draft-model-path", "z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat",
              "--speculative-dflash-block-size", "16"),
    ),
    sources=(
        "seed: sglang-speculative-decoding.md (DFlash Decoding)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:319-434 (_handle_dflash)",
        "catalogue: shared/design/sglang-spec-checks.md P72, P73, P74, P75, P76, P77",
    ),
    sglang_versions=">=0.5.11",
    log_signatures=(
        r"DFLASH does not support constrained decoding",
    ),
)
