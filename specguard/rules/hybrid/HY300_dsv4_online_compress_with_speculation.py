"""HY300 dsv4-online-compress-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES
from specguard.sglang_facts.changes import DSV4_ONLINE_C128_MTP_EAGLE

ONLINE = "SGLANG_OPT_USE_ONLINE_COMPRESS"
ONLINE_MTP = "SGLANG_EXPERIMENTAL_ONLINE_C128_MTP"
# EnvBool's true spellings (0.5.14 environ.py:119-126); a false or unparsable value leaves it off.
TRUE_WORDS = ("true", "1", "yes", "y")


def _env_on(ctx: CheckContext, name: str) -> bool:
    value = ctx.spec.env_value(name)
    return value is not None and value.lower() in TRUE_WORDS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not _env_on(ctx, ONLINE):
        return
    if ctx.target is None or ctx.target.architecture not in DSV4_ARCHITECTURES:
        return
    # DSV4PoolConfigurator, which holds the assert, sizes the pool only on the hybrid-SWA path
    # (create_memory_pool_configurator), which --disable-hybrid-swa-memory leaves.
    if ctx.spec.has("--disable-hybrid-swa-memory"):
        return
    # From 0.5.14 the experimental path lets spec_algorithm.is_eagle() through (EAGLE, NEXTN after the alias,
    # EAGLE3); FROZEN_KV_MTP is in is_eagle() too, but a DeepSeek-V4 target refuses it before (DM197).
    experimental = DSV4_ONLINE_C128_MTP_EAGLE.present_in(ctx.version)
    if (
        experimental
        and _env_on(ctx, ONLINE_MTP)
        and ctx.algorithm in EAGLE_HEAD_ALGORITHMS
    ):
        return
    if experimental and ctx.algorithm in EAGLE_HEAD_ALGORITHMS:
        escape = f", or set {ONLINE_MTP}=1 for the experimental online-c128 EAGLE path (topk 1)"
    else:
        escape = ""
    yield RULE.finding(
        f"{ONLINE}=1 with {ctx.algorithm} on a DeepSeek-V4 target in SGLang {ctx.version}: sizing the KV pool "
        f"asserts 'SGLANG_OPT_USE_ONLINE_COMPRESS does not support speculative decode (MTP) yet', so the server "
        f"does not start. Unset {ONLINE}{escape}",
        flags=("--speculative-algorithm",),
        fix=fix_of(
            f"unset {ONLINE}",
            Applicability.UNSAFE,
            Edit(target="env", name=ONLINE, value=None),
        ),
    )


DSV4_FLASH_EAGLE = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="HY300",
    category=Category.START,
    name="dsv4-online-compress-with-speculation",
    summary="DeepSeek-V4 with SGLANG_OPT_USE_ONLINE_COMPRESS=1 refuses speculative decoding at start-up "
    "(0.5.12+; from 0.5.14 EAGLE passes with SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="A DeepSeek-V4 target (config.json architectures[0] DeepseekV4ForCausalLM or its NextN/DSpark "
        "classes) with any `--speculative-algorithm` and `SGLANG_OPT_USE_ONLINE_COMPRESS` true, hybrid-SWA memory "
        "on, SGLang 0.5.12 or later; from 0.5.14 EAGLE (NEXTN) with `SGLANG_EXPERIMENTAL_ONLINE_C128_MTP` true "
        "is allowed. An unknown target config keeps it quiet.",
        why="The online c128 compressor keeps one in-progress state per index and assumes a forward-only "
        "schedule, which draft/verify rollback breaks. 0.5.12 added it with an assert in "
        "`DSV4PoolConfigurator.__init__` (model_executor/pool_configurator.py:355-363: "
        '`assert mr.spec_algorithm.is_none()`, "SGLANG_OPT_USE_ONLINE_COMPRESS does not support speculative '
        'decode (MTP) yet"), the configurator chosen for a DeepSeek-V4 target on the hybrid-SWA path '
        "(:464-470); 0.5.13 is the same (:366-370). 0.5.14 lets `spec_algorithm.is_eagle()` through when "
        "`SGLANG_EXPERIMENTAL_ONLINE_C128_MTP` is set (pool_configurator.py:509-527; the ring sizing raises "
        '"online c128 does not support MTP" otherwise, mem_cache/deepseek_v4_memory_pool.py:36-40), so DSPARK '
        "is always refused. Unchanged in 0.5.23 (pool_configurator.py:1259-1280, :1715-1720; "
        "deepseek_v4_memory_pool.py:71-74). 0.5.11 has neither DeepSeek-V4 nor the variable.",
        fix="Unset `SGLANG_OPT_USE_ONLINE_COMPRESS` (the default ring-buffer c128 state), or, 0.5.14+ with "
        "EAGLE, set `SGLANG_EXPERIMENTAL_ONLINE_C128_MTP=1` (experimental: SGLang asks to validate its output).",
        fix_safety="Unsafe: the c128 compress state goes back to the 256-row ring, which takes more memory.",
    ),
    bad=Example(
        argv=DSV4_FLASH_EAGLE,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        env={ONLINE: "1"},
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=DSV4_FLASH_EAGLE,
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        env={ONLINE: "1", ONLINE_MTP: "1"},
        sglang_version="0.5.14",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/environ.py (no SGLANG_OPT_USE_ONLINE_COMPRESS; no DeepSeek-V4)",
        "sglang 0.5.12: python/sglang/srt/model_executor/pool_configurator.py:355-363,464-470",
        "sglang 0.5.13: python/sglang/srt/model_executor/pool_configurator.py:366-370",
        (
            "sglang 0.5.14: python/sglang/srt/model_executor/pool_configurator.py:509-527; "
            "mem_cache/deepseek_v4_memory_pool.py:36-40"
        ),
        (
            "sglang 0.5.23: python/sglang/srt/model_executor/pool_configurator.py:1259-1280,1715-1720; "
            "mem_cache/deepseek_v4_memory_pool.py:71-74"
        ),
    ),
    sglang_versions=">=0.5.12",
    log_signatures=(
        r"SGLANG_OPT_USE_ONLINE_COMPRESS does not support speculative decode",
        r"online c128 does not support MTP",
    ),
)
