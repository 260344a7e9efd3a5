"""SP171 dspark-launch-refused."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
    set_flags,
)
from specguard.rules.examples import DEEPSEEK_V4_FLASH_DSPARK
from specguard.rules.spec_params._shared import device, int_flag
from specguard.sglang_facts.changes import Change, as_of

BLOCK = "--speculative-dspark-block-size"
TOKENS = "--speculative-num-draft-tokens"

# The devices _handle_dspark accepts (a prefix of --device), newest first; CUDA only before.
DEVICES: tuple[tuple[Change, tuple[str, ...]], ...] = (
    (
        Change("0.5.23", "0.5.23 arg_groups/speculative_hook.py:668-672"),
        ("cuda", "npu", "xpu"),
    ),
    (
        Change("0.5.18", "0.5.18 arg_groups/speculative_hook.py:279-283"),
        ("cuda", "npu"),
    ),
)


def allowed_devices(version: Version) -> tuple[str, ...]:
    return as_of(DEVICES, version, before=("cuda",))


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "DSPARK":
        return
    where = device(ctx)
    allowed = allowed_devices(ctx.version)
    if where is not None and where not in allowed:
        yield RULE.finding(
            f"DSPARK in SGLang {ctx.version} only runs on {', '.join(allowed)}, not {where!r}: it raises "
            "'DSpark speculative decoding only supports ...' at argument time",
            flags=("--device",),
        )
    block = int_flag(ctx, BLOCK)
    tokens = ctx.spec.get("speculative_num_draft_tokens")
    if block is not None and block <= 0:
        yield RULE.finding(
            f"{ctx.flag(BLOCK)} (DSpark's gamma) must be positive, not {block}: SGLang raises at argument time",
            flags=(BLOCK,),
            fix=fix_of(
                f"drop {BLOCK} (gamma then comes from the draft config)",
                Applicability.UNSAFE,
                Edit(name=BLOCK, value=None),
            ),
        )
    elif block is not None and tokens is not None and tokens != block + 1:
        yield RULE.finding(
            f"DSPARK verifies gamma + 1 tokens: with {ctx.flag(BLOCK)} {block}, {ctx.flag(TOKENS)} must be "
            f"{block + 1}, not {tokens}: SGLang raises 'DSpark speculative_num_draft_tokens must equal gamma + 1'",
            flags=(TOKENS, BLOCK),
            fix=set_flags(
                f"drop {TOKENS} (SGLang sets {block + 1})",
                Applicability.SAFE,
                speculative_num_draft_tokens=None,
            ),
        )
    elif block is None and tokens is not None and tokens < 2:
        yield RULE.finding(
            f"DSPARK verifies gamma + 1 >= 2 tokens, so {ctx.flag(TOKENS)} {tokens} is refused: it either differs "
            "from the draft's gamma + 1 or fails 'DSpark speculative_num_draft_tokens must be >= 2' at argument time",
            flags=(TOKENS,),
            fix=set_flags(
                f"drop {TOKENS} (SGLang derives gamma + 1)",
                Applicability.UNSAFE,
                speculative_num_draft_tokens=None,
            ),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # sgl-jax has no DSPARK (JX007)
    check=check,
    code="SP171",
    category=Category.START,
    name="dspark-launch-refused",
    summary="DSPARK on a device it does not run on, or with a block size / draft-token count it refuses (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="`--speculative-algorithm DSPARK` (new in SGLang 0.5.16) with a `--device` outside CUDA (0.5.16-0.5.17), "
        "CUDA/NPU (0.5.18-0.5.22) or CUDA/NPU/XPU (0.5.23); a `--speculative-dspark-block-size` (gamma) of 0 or "
        "less; a `--speculative-num-draft-tokens` other than gamma + 1 next to an explicit block size; or a "
        "`--speculative-num-draft-tokens` below 2.",
        why="`_handle_dspark` raises a ValueError for each before anything loads: the device test (0.5.16 "
        "arg_groups/speculative_hook.py:277-278, 0.5.18 :279-283 adds NPU, 0.5.23 :668-672 adds XPU), the block "
        "size (0.5.16 :342-347, 0.5.23 :807-812), the verify window gamma + 1 against an explicit draft-token count "
        "(0.5.16 :370-381, 0.5.23 :824-835) and the floor of 2 (0.5.16 :388-392, 0.5.23 :846-850). Without a block "
        "size gamma comes from the draft's config.json (else 7), which this rule does not read, so it only checks "
        "the floor then: any gamma >= 1 makes gamma + 1 >= 2. 0.5.15.post1 has no DSPARK. `--pp-size` is PL002's, "
        "attention DP PL172's.",
        fix="Run on a supported device, give a positive block size and leave the draft-token count to SGLang "
        "(it sets gamma + 1).",
        fix_safety="Dropping the draft-token count next to a block size is safe (SGLang sets gamma + 1 itself); "
        "dropping the block size changes gamma.",
    ),
    bad=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, BLOCK, "7", TOKENS, "7"), sglang_version="0.5.16"
    ),
    good=Example(
        argv=(*DEEPSEEK_V4_FLASH_DSPARK, BLOCK, "7", TOKENS, "8"), sglang_version="0.5.16"
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/speculative/spec_info.py:28-41 (no DSPARK algorithm, no _handle_dspark)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:276-430 (_handle_dspark: 277-278, 342-347, 370-392)",
        "sglang 0.5.18: python/sglang/srt/arg_groups/speculative_hook.py:279-283 (CUDA or NPU)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/speculative_hook.py:607-611 (CUDA or NPU)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:666-883 (_handle_dspark: 668-672, 807-812, 824-850)",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"DSpark speculative decoding only supports CUDA",
        r"DSpark requires --speculative-dspark-block-size to be positive",
        r"DSpark speculative_num_draft_tokens must (equal gamma \+ 1|be >= 2)",
    ),
)
