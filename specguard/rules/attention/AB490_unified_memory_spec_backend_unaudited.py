"""AB490 unified-memory-spec-backend-unaudited."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import is_mla_target
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.memory._unified_memory import (
    TREE_CAPABLE,
    UNIFIED,
    allowed_algorithms,
)
from specguard.rules.parallel._parallel import dcp_size
from specguard.sglang_facts.changes import UNIFIED_MEMORY_DSPARK, Change, as_of

# 0.5.22 moved every algorithm's verify check onto one audited list (kv_cache_hook.py:478-522); 0.5.23 added
# trtllm_mha to the MHA rails, fa4 for DSPARK, and renamed tokenspeed_mla to cutedsl_mla (kv_cache_hook.py:479-497).
SHARED_VERIFY_AUDIT = Change(
    "0.5.22", "0.5.22 arg_groups/kv_cache_hook.py:478-522, 605-645"
)
MHA_RAILS_WITH_TRTLLM = Change(
    "0.5.23", "0.5.23 arg_groups/kv_cache_hook.py:479-497, 608-652"
)
# 0.5.23 renames deprecated backends before any hook reads them (arg_groups/serving_hook.py:303-304).
BACKEND_ALIASES = {"tokenspeed_mla": "cutedsl_mla"}

# What SGLang prints (0.5.22 kv_cache_hook.py:516-521, :623-626, :631-637; 0.5.18-0.5.21 the first with DSPARK):
#   "--enable-unified-memory + DSPARK requires spec-verify-audited attention backends [...] for both prefill and
#    decode; got ['fa3']. Other backends do not translate speculative verify indices to the unified pool's physical ids yet."
#   "--enable-unified-memory + EAGLE/EAGLE3 requires the target on the spec-verify-audited attention backends [...]"
#   "--enable-unified-memory + EAGLE/EAGLE3 runs the draft on ['trtllm_mla'], but a fused draft is MHA-shaped and
#    reads its KV through the translated MHA rails [...]. Set --speculative-draft-attention-backend to one of them."
# DSPARK's own list 0.5.18-0.5.21 (0.5.18 server_args.py:8327; 0.5.21 arg_groups/kv_cache_hook.py:560).
DSPARK_ONLY_AUDITED = frozenset(
    {"triton", "trtllm_mla", "cutedsl_mla", "tokenspeed_mla"}
)
# _SPEC_VERIFY_AUDITED_BACKENDS: 0.5.22 kv_cache_hook.py:478-489; 0.5.23 :479-488 (tokenspeed_mla now an alias).
VERIFY_AUDITED: tuple[tuple[Change, frozenset[str]], ...] = (
    (
        MHA_RAILS_WITH_TRTLLM,
        frozenset(
            {"triton", "trtllm_mla", "cutedsl_mla", "flashmla", "flashinfer", "fa3"}
        ),
    ),
    (SHARED_VERIFY_AUDIT, DSPARK_ONLY_AUDITED | {"flashmla", "flashinfer", "fa3"}),
)
# The MHA rails a fused draft reads through: TRANSLATED_MHA_RAILS in 0.5.22 (:494), _SPEC_MHA_AUDITED_BACKENDS
# in 0.5.23 (:490).
MHA_RAILS: tuple[tuple[Change, frozenset[str]], ...] = (
    (MHA_RAILS_WITH_TRTLLM, frozenset({"triton", "flashinfer", "fa3", "trtllm_mha"})),
    (SHARED_VERIFY_AUDIT, frozenset({"triton", "flashinfer", "fa3"})),
)
# DSPARK verifies on fa4 too from 0.5.23 (kv_cache_hook.py:642-646).
DSPARK_FA4 = frozenset({"fa4"})
# The target whose model override rewrites a typed prefill backend under --dcp-size above 1 (_prefill_rewritten).
KIMI_K3 = "KimiK3ForConditionalGeneration"


# A mamba-hybrid target the unified pool is built for, drafting with DSPARK (a local draft checkpoint).
KIMI_LINEAR_DSPARK = (
    "--model-path",
    "moonshotai/Kimi-Linear-48B-A3B-Instruct",
    "--speculative-algorithm",
    "DSPARK",
    "--speculative-draft-model-path",
    "/ckpt/dspark-draft",
)


def _typed(ctx: CheckContext, dest: str) -> str | None:
    value = ctx.spec.get(dest)
    return (
        BACKEND_ALIASES.get(value, value)
        if MHA_RAILS_WITH_TRTLLM.present_in(ctx.version)
        else value
    )


def _prefill_rewritten(ctx: CheckContext) -> bool:
    """Whether SGLang replaces the typed prefill backend before the hook reads it: Kimi-K3's model override under
    DCP pairs prefill with the decode backend (trtllm_mla for cutedsl_mla, tokenspeed_mla for tokenspeed_mla, aiter
    or triton for aiter; 0.5.18 arg_groups/overrides.py:433-493; 0.5.22 model_overrides/kimi_k3.py:52-127; 0.5.23
    :52-112), each pair on the release's lists wherever its decode backend is."""
    dcp = dcp_size(ctx)
    return (
        ctx.target is not None
        and ctx.target.architecture == KIMI_K3
        and dcp is not None
        and dcp[0] > 1
    )


def target_backends(ctx: CheckContext) -> frozenset[str] | None:
    """The target's (prefill, decode) backends when both were typed (the decode one alone where SGLang rewrites
    the prefill one); None when SGLang would choose one."""
    base = _typed(ctx, "attention_backend")
    prefill = _typed(ctx, "prefill_attention_backend") or base
    decode = _typed(ctx, "decode_attention_backend") or base
    if decode and _prefill_rewritten(ctx):
        return frozenset({decode})
    return frozenset({prefill, decode}) if prefill and decode else None


def target_allowed(ctx: CheckContext) -> frozenset[str] | None:
    """The audited target backends for this algorithm and release (the union where MLA-ness is unknown)."""
    algorithm = ctx.algorithm
    if not SHARED_VERIFY_AUDIT.present_in(ctx.version):
        return DSPARK_ONLY_AUDITED if algorithm == "DSPARK" else None
    verify = as_of(VERIFY_AUDITED, ctx.version, before=frozenset())
    rails = as_of(MHA_RAILS, ctx.version, before=frozenset())
    if algorithm in TREE_CAPABLE:
        if ctx.target is None:
            return verify | rails
        return verify if is_mla_target(ctx) else rails
    dcp = dcp_size(ctx)
    # flashinfer's verify has no DCP read translation (0.5.22 kv_cache_hook.py:508-514).
    dcp_excluded = (
        frozenset({"flashinfer"}) if dcp is not None and dcp[0] > 1 else frozenset()
    )
    if algorithm == "DSPARK":
        extra = (
            DSPARK_FA4 if MHA_RAILS_WITH_TRTLLM.present_in(ctx.version) else frozenset()
        )
        return (verify | extra) - dcp_excluded
    if algorithm == "DFLASH":
        return rails - dcp_excluded
    return None


def _drop_unified() -> Edit:
    return Edit(name=UNIFIED, value=None)


def _target_finding(
    ctx: CheckContext, backends: frozenset[str], allowed: frozenset[str]
) -> Finding:
    name = "EAGLE/EAGLE3" if ctx.algorithm in TREE_CAPABLE else ctx.algorithm
    return RULE.finding(
        f"{ctx.flag(UNIFIED)} with {ctx.algorithm} in SGLang {ctx.version} verifies on the target's attention "
        f"backends {sorted(backends)}, outside the spec-verify-audited {sorted(allowed)}: the assertion "
        f"'--enable-unified-memory + {name} requires ... spec-verify-audited attention backends' fails at argument "
        f"time (those backends do not translate the verify indices to the unified pool's ids). Use one of "
        f"{sorted(allowed)} for prefill and decode, or drop {ctx.flag(UNIFIED)}",
        flags=(UNIFIED, "--attention-backend"),
        fix=fix_of(f"drop {UNIFIED}", Applicability.UNSAFE, _drop_unified()),
    )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or not ctx.spec.has(UNIFIED)
        or ctx.algorithm not in allowed_algorithms(ctx.version)
    ):
        return
    backends = target_backends(ctx)
    allowed = target_allowed(ctx)
    if backends is None or allowed is None:
        return
    if not backends <= allowed:
        yield _target_finding(ctx, backends, allowed)
        return
    if ctx.algorithm not in TREE_CAPABLE:
        return
    # An EAGLE draft with no backend of its own runs the target's pair (0.5.22 kv_cache_hook.py:628-630).
    rails = as_of(MHA_RAILS, ctx.version, before=frozenset())
    draft = _typed(ctx, "speculative_draft_attention_backend")
    drafts = frozenset({draft}) if draft else backends
    if not drafts <= rails:
        inherited = "" if draft else " (inherited from the target)"
        yield RULE.finding(
            f"{ctx.flag(UNIFIED)} with {ctx.algorithm} in SGLang {ctx.version} runs the draft on {sorted(drafts)}"
            f"{inherited}, but a fused draft reads its KV through the MHA rails {sorted(rails)}: the assertion "
            "'--enable-unified-memory + EAGLE/EAGLE3 runs the draft on ...' fails at argument time. Set "
            f"{ctx.flag('--speculative-draft-attention-backend')} to one of them",
            flags=(UNIFIED, "--speculative-draft-attention-backend"),
            fix=fix_of(f"drop {UNIFIED}", Applicability.UNSAFE, _drop_unified()),
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="AB490",
    category=Category.START,
    name="unified-memory-spec-backend-unaudited",
    summary="--enable-unified-memory with a speculative target or EAGLE draft attention backend outside the "
    "release's spec-verify-audited list (0.5.18+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-unified-memory` with an algorithm the release admits (DSPARK from 0.5.18; EAGLE, EAGLE3 and "
        "DFLASH from 0.5.22) and a typed target prefill or decode attention backend outside the audited list: "
        "DSPARK triton/trtllm_mla/cutedsl_mla/tokenspeed_mla (0.5.18-0.5.21), then also flashmla/flashinfer/fa3 "
        "(0.5.22) and fa4 (0.5.23, tokenspeed_mla renamed cutedsl_mla); DFLASH and an MHA EAGLE/EAGLE3 target "
        "triton/flashinfer/fa3 (0.5.22), plus trtllm_mha (0.5.23); an MLA EAGLE/EAGLE3 target the verify list; "
        "flashinfer excluded for DSPARK and DFLASH under `--dcp-size` above 1. From 0.5.22 an EAGLE/EAGLE3 draft "
        "backend (typed, else the target's pair) outside the MHA rails.",
        why="`handle_unified_memory_pool` asserts the resolved (prefill, decode) pair against the list at argument "
        "time: 0.5.18 server_args.py:8325-8335 and 0.5.21 arg_groups/kv_cache_hook.py:557-570 (DSPARK only); 0.5.22 "
        "kv_cache_hook.py:478-522 (`_assert_spec_verify_backends`, flashinfer dropped under DCP) called for DSPARK "
        "and DFLASH (:638-645), and for EAGLE/EAGLE3 the target (:612-627) and draft (:628-637) asserts; 0.5.23 "
        ":479-526, :611-652 (trtllm_mha on the MHA rails, fa4 for DSPARK). 0.5.22's refusal of trtllm_mha decode "
        "with CUDA graphs (:712-722, gone in 0.5.23) never bites a speculative launch that passed these lists. A "
        "backend SGLang picks itself is not checked, nor a Kimi-K3 prefill backend under `--dcp-size` above 1, which "
        "its model override replaces with one paired to the decode backend (0.5.22 model_overrides/kimi_k3.py:84-127).",
        fix="Run the target (and an EAGLE draft) on an audited backend, or drop `--enable-unified-memory`.",
        fix_safety="Unsafe: it changes the KV pool layout.",
    ),
    bad=Example(
        argv=(*KIMI_LINEAR_DSPARK, "--attention-backend", "flashinfer", UNIFIED),
        sglang_version="0.5.18",
    ),
    good=Example(
        argv=(*KIMI_LINEAR_DSPARK, "--attention-backend", "triton", UNIFIED),
        sglang_version="0.5.18",
    ),
    sources=(
        f"sglang 0.5.17: python/sglang/srt/server_args.py:7893-7896 (no speculation with unified memory; {UNIFIED_MEMORY_DSPARK.first_release} admits DSPARK)",
        "sglang 0.5.18: python/sglang/srt/server_args.py:8318-8335",
        "sglang 0.5.21: python/sglang/srt/arg_groups/kv_cache_hook.py:551-570",
        "sglang 0.5.22: python/sglang/srt/arg_groups/kv_cache_hook.py:478-522, 605-645, 712-722",
        "sglang 0.5.23: python/sglang/srt/arg_groups/kv_cache_hook.py:479-526, 608-652; arg_groups/serving_hook.py:303-304",
        "sglang 0.5.18: python/sglang/srt/arg_groups/overrides.py:433-493 (Kimi-K3 DCP pairs the prefill backend)",
        "sglang 0.5.22: python/sglang/srt/arg_groups/model_overrides/kimi_k3.py:52-127; 0.5.23 :52-112",
    ),
    sglang_versions=">=0.5.18",
    log_signatures=(
        r"--enable-unified-memory \+ \w+ requires spec-verify-audited attention backends",
        r"--enable-unified-memory \+ EAGLE/EAGLE3 requires the target on the spec-verify-audited attention backends",
        r"--enable-unified-memory \+ EAGLE/EAGLE3 runs the draft on .*, but a fused draft is MHA-shaped",
    ),
)
