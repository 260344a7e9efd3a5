"""HY140 dsv4-draft-tokens-exceed-c4-ring."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.architectures import DSV4_ARCHITECTURES

# With speculation the c4 compress-state ring holds 16 rows (get_compress_state_ring_size) and
# serves at most ring - 2 * 4 + 2 = 10 draft tokens (get_compress_state_write_pad).
C4_RING_SIZE = 16
C4_MAX_DRAFT_TOKENS = C4_RING_SIZE - 2 * 4 + 2
DRAFT_TOKENS = "--speculative-num-draft-tokens"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or ctx.target is None or not ctx.target.architectures:
        return
    if not DSV4_ARCHITECTURES.intersection(ctx.target.architectures) or ctx.spec.has(
        "--disable-hybrid-swa-memory"
    ):
        return
    if ctx.resolution.adaptive:
        return  # the ring must serve the largest adaptive tier, read from a config file specguard does not open
    draft_tokens = ctx.resolution.num_draft_tokens
    if draft_tokens is None or draft_tokens <= C4_MAX_DRAFT_TOKENS:
        return
    origin = (
        ""
        if ctx.spec.has(DRAFT_TOKENS)
        else f" ({ctx.resolution.set_by.get('num_draft_tokens', 'resolved')})"
    )
    fix = None
    if ctx.resolution.eagle_topk == 1 and ctx.algorithm in EAGLE_HEAD_ALGORITHMS:
        fix = set_flags(
            f"run a chain of {C4_MAX_DRAFT_TOKENS - 1} steps ({C4_MAX_DRAFT_TOKENS} draft tokens)",
            Applicability.UNSAFE,
            speculative_num_steps=C4_MAX_DRAFT_TOKENS - 1,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=C4_MAX_DRAFT_TOKENS,
        )
    yield RULE.finding(
        f"{ctx.algorithm} on a DeepSeek-V4 target with {draft_tokens} draft tokens{origin} in SGLang {ctx.version}: "
        f"sizing the KV pool asserts 'speculative_num_draft_tokens={draft_tokens} exceeds what the c4 compress state "
        f"ring can keep resident (ring_size={C4_RING_SIZE} serves at most {C4_MAX_DRAFT_TOKENS} draft tokens)', so "
        f"the server does not start. Use at most {C4_MAX_DRAFT_TOKENS} draft tokens",
        flags=(DRAFT_TOKENS,),
        fix=fix,
    )


RULE = Rule(
    check=check,
    code="HY140",
    category=Category.START,
    name="dsv4-draft-tokens-exceed-c4-ring",
    summary="DeepSeek-V4 with more than 10 draft tokens fails the c4 compress-ring assert at start-up (0.5.18+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.SOMETIMES,
    docs=RuleDocs(
        what="A DeepSeek-V4 target (DeepseekV4ForCausalLM and its NextN/DSpark classes) with any speculative algorithm "
        "whose resolved draft-token count is above 10 (not adaptive, hybrid-SWA memory on), SGLang 0.5.18 or later.",
        why="0.5.18 sizes a DeepSeek-V4 KV pool in DSV4PoolConfigurator, which with speculation calls "
        "`_assert_ring_serves_draft_tokens` (model_executor/pool_configurator.py:774-778, :820-838): a verify batch "
        "writes its whole draft tail into each layer's compress-state ring, and the speculative c4 ring (16 rows, "
        "mem_cache/deepseek_v4_memory_pool.py:45-46) serves at most 16 - 8 + 2 = 10 draft tokens "
        "(`get_compress_state_write_pad`, :51-56), so more raises an AssertionError before the server starts. Every "
        "DeepSeek-V4 config.json (Flash and Pro) has compress-ratio-4 layers. 0.5.17 used the same ring sizes "
        "without the check (pool_configurator.py:610-707); the check is unchanged in 0.5.23 "
        "(pool_configurator.py:1194-1198, :1291-1307; deepseek_v4_memory_pool.py:76-77, :118-122).",
        fix="Use at most 10 draft tokens (a chain of 9 steps, or fewer).",
        fix_safety="Unsafe: it shortens the draft.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "deepseek-ai/DeepSeek-V4-Flash",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "11",
            "--speculative-eagle-topk",
            "1",
            DRAFT_TOKENS,
            "12",
        ),
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        sglang_version="0.5.18",
    ),
    good=Example(
        argv=(
            "--model-path",
            "deepseek-ai/DeepSeek-V4-Flash",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-num-steps",
            "9",
            "--speculative-eagle-topk",
            "1",
            DRAFT_TOKENS,
            "10",
        ),
        target={"architectures": ("DeepseekV4ForCausalLM",)},
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.17: python/sglang/srt/model_executor/pool_configurator.py:610-707 (no draft-token check)",
        "sglang 0.5.18: python/sglang/srt/model_executor/pool_configurator.py:774-778,820-838",
        "sglang 0.5.18: python/sglang/srt/mem_cache/deepseek_v4_memory_pool.py:34-56",
        "sglang 0.5.23: python/sglang/srt/model_executor/pool_configurator.py:1194-1198,1291-1307",
    ),
    sglang_versions=">=0.5.18",
    log_signatures=(r"exceeds what the c4 compress state ring can keep resident",),
)
