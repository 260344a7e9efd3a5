"""MM174 unified-memory-speculative-refused."""

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
    set_flags,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.rules.memory._unified_memory import (
    TREE_CAPABLE,
    UNIFIED,
    allowed_algorithms,
)
from specguard.sglang_facts.changes import Change

TRANSFER = "--disaggregation-transfer-backend"

# 0.5.22 refuses a draft tree for every algorithm (kv_cache_hook.py:598-604); DFLASH and DSPARK force topk 1
# in their handlers, which run first (arg_groups/pipeline.py:294 before :326), so only the EAGLE family can
# still have one. 0.5.18-0.5.21 asked it of DSPARK only, whose handler had already set 1.
CHAIN_ONLY = Change("0.5.22", "0.5.22 arg_groups/kv_cache_hook.py:598-604")
# A fused EAGLE/EAGLE3 draft has no device pool of its own to back up to host on a PD decode server.
EAGLE_HOST_POOL_BACKUP_REFUSED = Change(
    "0.5.22", "0.5.22 arg_groups/kv_cache_hook.py:662-670"
)
RETRACTION_BACKUP = "--disaggregation-decode-retraction-backup"
# HiCache keeps the draft on a private pool, which a fused EAGLE draft does not have (0.5.22 kv_cache_hook.py:671-679).
EAGLE_HICACHE_REFUSED = Change("0.5.22", "0.5.22 arg_groups/kv_cache_hook.py:671-679")
HICACHE = "--enable-hierarchical-cache"
# PD disaggregation with speculation over the (default) Mooncake transfer backend (0.5.21 kv_cache_hook.py:496-502).
PD_MOONCAKE_REFUSED = Change("0.5.21", "0.5.21 arg_groups/kv_cache_hook.py:496-502")
DEFAULT_TRANSFER = "mooncake"


def _drop_unified() -> Edit:
    return Edit(name=UNIFIED, value=None)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm is None or not ctx.spec.has(UNIFIED):
        return
    allowed = allowed_algorithms(ctx.version)
    if ctx.algorithm not in allowed:
        scope = (
            f"only supports {', '.join(allowed)}"
            if allowed
            else "does not support speculative decoding"
        )
        yield RULE.finding(
            f"{ctx.flag(UNIFIED)} in SGLang {ctx.version} {scope}, not {ctx.algorithm}: an assertion fails at "
            "argument time",
            flags=(UNIFIED, "--speculative-algorithm"),
            fix=fix_of(f"drop {UNIFIED}", Applicability.UNSAFE, _drop_unified()),
        )
        return
    topk = ctx.resolution.eagle_topk
    if (
        CHAIN_ONLY.present_in(ctx.version)
        and ctx.algorithm in TREE_CAPABLE
        and topk is not None
        and topk > 1
    ):
        origin = (
            ""
            if ctx.spec.get("speculative_eagle_topk") is not None
            else " (SGLang's automatic choice for this target)"
        )
        steps = ctx.resolution.num_steps or 3
        yield RULE.finding(
            f"{ctx.flag(UNIFIED)} supports a linear draft chain only, and {ctx.algorithm} drafts a tree with topk "
            f"{topk}{origin}: the assertion '--speculative-eagle-topk in {{None, 1}}' fails at argument time",
            flags=(UNIFIED, "--speculative-eagle-topk"),
            fix=set_flags(
                f"draft a chain: topk 1, {steps} steps, {steps + 1} draft tokens",
                Applicability.UNSAFE,
                speculative_num_steps=steps,
                speculative_eagle_topk=1,
                speculative_num_draft_tokens=steps + 1,
            ),
        )
    # TREE_CAPABLE is the EAGLE family here, whose draft KV is fused into the target's pages.
    if (
        EAGLE_HOST_POOL_BACKUP_REFUSED.present_in(ctx.version)
        and ctx.algorithm in TREE_CAPABLE
        and ctx.spec.last_value(RETRACTION_BACKUP) == "host_pool"
    ):
        yield RULE.finding(
            f"{ctx.flag(UNIFIED)} with {ctx.algorithm} and {ctx.flag(RETRACTION_BACKUP)} host_pool: the assertion "
            "'--enable-unified-memory + EAGLE/EAGLE3 does not support --disaggregation-decode-retraction-backup=host_pool' "
            "fails at argument time (the backup builds the draft's host pool off a device pool a fused EAGLE draft "
            f"does not have). Drop {ctx.flag(RETRACTION_BACKUP)} or {ctx.flag(UNIFIED)}",
            flags=(UNIFIED, RETRACTION_BACKUP),
            fix=fix_of(f"drop {UNIFIED}", Applicability.UNSAFE, _drop_unified()),
        )
    if (
        EAGLE_HICACHE_REFUSED.present_in(ctx.version)
        and ctx.algorithm in TREE_CAPABLE
        and ctx.spec.has(HICACHE)
    ):
        # SGLang's words: "--enable-unified-memory + EAGLE/EAGLE3 does not support --enable-hierarchical-cache:
        # HiCache keeps the draft on a private pool, and would pack an MTP head's KV into the target's
        # page-envelope host pool, which refuses per-layer draft loads."
        yield RULE.finding(
            f"{ctx.flag(UNIFIED)} with {ctx.algorithm} and {ctx.flag(HICACHE)}: the assertion "
            "'--enable-unified-memory + EAGLE/EAGLE3 does not support --enable-hierarchical-cache' fails at "
            "argument time (HiCache would need the draft's own device pool, which a fused EAGLE draft does not "
            f"have). Drop {ctx.flag(HICACHE)} or {ctx.flag(UNIFIED)}",
            flags=(UNIFIED, HICACHE),
            fix=fix_of(f"drop {UNIFIED}", Applicability.UNSAFE, _drop_unified()),
        )
    mode = ctx.spec.get("disaggregation_mode")
    item = ctx.spec.item(TRANSFER)
    transfer = item.values[-1] if item is not None and item.values else DEFAULT_TRANSFER
    if (
        PD_MOONCAKE_REFUSED.present_in(ctx.version)
        and mode not in (None, "null")
        and transfer == DEFAULT_TRANSFER
    ):
        yield RULE.finding(
            f"{ctx.flag(UNIFIED)} with PD disaggregation ({ctx.flag('--disaggregation-mode')} {mode}) does not "
            f"support speculative decoding over the Mooncake transfer backend{'' if item else ' (the default)'}: "
            "an assertion fails at argument time",
            flags=(UNIFIED, "--disaggregation-mode"),
            fix=fix_of(f"drop {UNIFIED}", Applicability.UNSAFE, _drop_unified()),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="MM174",
    category=Category.START,
    name="unified-memory-speculative-refused",
    summary="--enable-unified-memory with a speculative algorithm, draft tree or PD transfer its release refuses (0.5.15+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-unified-memory` with any `--speculative-algorithm` (0.5.15-0.5.17), one other than "
        "DSPARK (0.5.18-0.5.21) or other than DSPARK/EAGLE/EAGLE3/DFLASH (0.5.22+); from 0.5.22 an EAGLE/EAGLE3 "
        "draft tree (topk above 1, typed or chosen by SGLang); from 0.5.21 PD disaggregation over the Mooncake "
        "transfer backend (the default) with any speculative algorithm; from 0.5.22 EAGLE/EAGLE3 with "
        "`--disaggregation-decode-retraction-backup host_pool` or `--enable-hierarchical-cache`.",
        why="`_handle_unified_memory_pool` runs after the speculative handler and asserts: no speculation at all "
        "(0.5.15 server_args.py:5889-5892, 0.5.17 :7893-7896), DSPARK only (0.5.18 server_args.py:8312-8317; "
        "0.5.19-0.5.21 arg_groups/kv_cache_hook.py, 0.5.21 :545-550), DSPARK/EAGLE/EAGLE3/DFLASH with "
        "`--speculative-eagle-topk` in {None, 1} (0.5.22 kv_cache_hook.py:585-604, 0.5.23 :588-607). By then "
        "the DSPARK and DFLASH handlers have set topk 1, so the tree test bites the EAGLE family only (0.5.18's "
        "DSPARK topk assert, :8318-8324, never could). 0.5.21 added the PD Mooncake refusal (kv_cache_hook.py:"
        "496-502; 0.5.23 :547-553). 0.5.22 refuses EAGLE/EAGLE3 with the host-pool decode retraction backup, which builds "
        "the draft's host pool off a device pool a fused EAGLE draft does not have (kv_cache_hook.py:662-670; 0.5.23 "
        ":669-677), and with `--enable-hierarchical-cache`, whose HiCache keeps the draft on such a private pool (0.5.22 "
        "kv_cache_hook.py:671-679; 0.5.23 :678-686). The flag is new in 0.5.15. The EAGLE family's further 0.5.22 conditions "
        "(a hybrid-SWA or mamba target) is not checked here; the audited attention backends are AB490's.",
        fix="Drop `--enable-unified-memory` for this algorithm, or on 0.5.22+ draft an EAGLE chain (topk 1).",
        fix_safety="Unsafe: it changes the KV pool layout or the draft tree.",
    ),
    bad=Example(argv=(*LLAMA31_8B_EAGLE3, UNIFIED), sglang_version="0.5.18"),
    # A mamba hybrid the unified pool is built for (DeepSeek-V4 is not: MM491), on an audited verify backend (AB490).
    good=Example(
        argv=(
            "--model-path",
            "moonshotai/Kimi-Linear-48B-A3B-Instruct",
            "--speculative-algorithm",
            "DSPARK",
            "--speculative-draft-model-path",
            "/ckpt/dspark-draft",
            "--attention-backend",
            "triton",
            UNIFIED,
        ),
        target={"architectures": ("KimiLinearForCausalLM",), "kv_lora_rank": 512},
        sglang_version="0.5.18",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/server_args.py (no --enable-unified-memory)",
        "sglang 0.5.15: python/sglang/srt/server_args.py:5883-5914 (_handle_unified_memory_pool, :5889-5892)",
        "sglang 0.5.17: python/sglang/srt/server_args.py:7893-7896",
        "sglang 0.5.18: python/sglang/srt/server_args.py:3742, 3764 (speculative handling first), 8312-8324",
        "sglang 0.5.21: python/sglang/srt/arg_groups/kv_cache_hook.py:496-502, 545-550",
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_cache_hook.py:585-604; arg_groups/pipeline.py:294, 326",
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_cache_hook.py:662-670, 671-679",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_cache_hook.py:547-553, 588-607, 669-677, 678-686",
    ),
    sglang_versions=">=0.5.15",
    log_signatures=(
        r"--enable-unified-memory is not yet compatible with speculative decoding",
        r"--enable-unified-memory only supports --speculative-algorithm",
        r"--enable-unified-memory supports a linear draft chain only",
        r"--enable-unified-memory with PD disaggregation does not support speculative decoding with the Mooncake",
        r"--enable-unified-memory \+ EAGLE/EAGLE3 does not support --disaggregation-decode-retraction-backup=host_pool",
        r"--enable-unified-memory \+ EAGLE/EAGLE3 does not support --enable-hierarchical-cache",
    ),
)
