"""FX200 lmcache-with-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3

LMCACHE = "--enable-lmcache"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(LMCACHE):
        return
    yield RULE.finding(
        f"{ctx.flag(LMCACHE)} with {ctx.algorithm} in SGLang {ctx.version}: the LMCache radix cache has no "
        "speculative path, and SGLang refuses the pair while it checks the arguments (\"NotImplementedError: "
        f"LMCacheUnifiedRadixCache does not yet support speculative decoding\"). Drop {ctx.flag(LMCACHE)}, or "
        "serve without speculative decoding",
        flags=(LMCACHE, "--speculative-algorithm"),
        fix=fix_of(f"drop {LMCACHE}", Applicability.UNSAFE, Edit(name=LMCACHE, value=None)),
    )


RULE = Rule(
    check=check,
    code="FX200",
    category=Category.START,
    name="lmcache-with-speculation",
    summary="--enable-lmcache with a speculative algorithm is refused at start (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-lmcache` together with any `--speculative-algorithm`, SGLang 0.5.21 or later.",
        why="0.5.21 moved LMCache onto the unified radix cache and made `handle_cache_compatibility` refuse "
        "it with any speculative algorithm (`arg_groups/kv_cache_hook.py:449-452`, a NotImplementedError "
        "raised while the arguments are checked, before any weight loads); the refusal is unchanged in 0.5.23 "
        "(:449-452). Up to 0.5.20 the flag built `LMCRadixCache` with no such check (0.5.20 "
        "`mem_cache/registry.py:119-130`), which handled EAGLE drafts (`lmc_radix_cache.py:455-462` reads "
        "`speculative_eagle_topk` to choose how much KV to commit), so the rule starts at 0.5.21.",
        fix="Drop `--enable-lmcache` (the radix cache stays on), or drop the speculative algorithm.",
        fix_safety="Unsafe: the server loses LMCache's offloaded prefix cache (slower on long shared prefixes); "
        "what it serves is unchanged.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, LMCACHE), sglang_version="0.5.21"),
    good=Example(argv=LLAMA31_8B_EAGLE3, sglang_version="0.5.21"),
    sources=(
        "sglang 0.5.20: python/sglang/srt/mem_cache/registry.py:119-130, storage/lmcache/lmc_radix_cache.py:455-462 (LMCRadixCache serves EAGLE)",
        "sglang 0.5.21: python/sglang/srt/arg_groups/kv_cache_hook.py:433,449-452",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_cache_hook.py:433,449-452",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(r"LMCacheUnifiedRadixCache does not yet support speculative decoding",),
)
