"""PL284 pd-dcp-decode-draft-kv-not-transferred."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.parallel._parallel import dcp_size
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

TRANSFER = "--disaggregation-transfer-backend"
# mooncake is the default; mooncake_tcp is mooncake over TCP (0.5.19 arg_groups/pd_disaggregation_hook.py:29-35).
MOONCAKE = ("mooncake", "mooncake_tcp")
NIXL = "nixl"


def check(ctx: CheckContext) -> Iterator[Finding]:
    dcp = dcp_size(ctx)
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.spec.get("disaggregation_mode") != "decode"
        or dcp is None
        or dcp[0] <= 1
    ):
        return
    size, flag = dcp
    backend = ctx.spec.last_value(TRANSFER) or "mooncake"
    launch = (
        f"{ctx.flag('--disaggregation-mode')} decode with {ctx.flag(flag)} {size} and {ctx.algorithm} in SGLang "
        f"{ctx.env.sglang_version}: if the prefill node runs without DCP, it relayouts its KV for this node, whose "
        f"draft KV pool is replicated, with pages of page size x {size} tokens, but it sizes and sends the draft "
        "entries like the target's DCP-sharded ones (a prefill node with the same DCP size sends without relayout "
        "and is not affected)"
    )
    if backend == NIXL:
        yield RULE.finding(
            f"{launch}. With nixl the prefill node's bootstrap thread raises RuntimeError 'PD DCP source/destination "
            "KV geometry differs' when this decode node registers, so its requests are never transferred. SGLang 0.5.20 "
            f"transfers the draft entries with their own plan; until then drop {ctx.flag(flag)} or the speculation "
            "on the decode node",
            flags=(flag, "--disaggregation-mode", "--speculative-algorithm"),
            severity=Severity.WARNING,
        )
    elif backend in MOONCAKE:
        yield RULE.finding(
            f"{launch}. With mooncake the prefill checks every entry against the target's size: a draft whose "
            "per-token KV differs (an MHA EAGLE3/STANDALONE head on an MLA target) fails with RuntimeError 'PD DCP "
            "source/destination KV geometry differs' in its bootstrap thread, and one of the target's geometry (its "
            f"MTP layer) passes, but each decode rank then receives only its 1/{size} share of the prompt's draft KV, "
            "written at the target's sharded rows, so the draft drafts from a KV cache that is not the prompt's: "
            "outputs stay verified but acceptance drops. SGLang 0.5.20 transfers the draft entries with their own "
            f"plan; until then drop {ctx.flag(flag)} or the speculation on the decode node",
            flags=(flag, "--disaggregation-mode", "--speculative-algorithm"),
            severity=Severity.WARNING,
        )


DSV3_DCP_DECODE = (
    "--model-path",
    "deepseek-ai/DeepSeek-V3",
    "--tp",
    "8",
    "--dcp-size",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--disaggregation-mode",
    "decode",
    TRANSFER,
    NIXL,
)

RULE = Rule(
    check=check,
    code="PL284",
    category=Category.CRASH,
    name="pd-dcp-decode-draft-kv-not-transferred",
    summary="A PD decode node with --dcp-size above 1 and EAGLE/EAGLE3/NEXTN/STANDALONE gets no usable draft KV from a prefill without DCP (0.5.17-0.5.19)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--disaggregation-mode decode` with `--dcp-size` (`--decode-context-parallel-size`) above 1 and an "
        "algorithm whose draft has its own KV pool (EAGLE, EAGLE3, NEXTN, STANDALONE), SGLang 0.5.17 through 0.5.19: "
        "with the nixl transfer backend or mooncake (the default); other backends stay quiet. A warning: it holds "
        "only when the prefill node runs without DCP, which the decode launch does not show.",
        why="0.5.17 added PD transfer to a DCP decode node: the prefill node rewrites its KV into the decode's per-rank "
        "layout (`requires_dcp_relayout`, `prepare_dcp_token_item_lens`, `send_kvcache_dcp`) when the prefill has "
        "DCP 1 and the decode more; a prefill of the same DCP size needs no relayout and sends as before (0.5.17 "
        "common/conn.py:276-283; 0.5.19 :310-317). On the decode node the "
        "draft's pools are not DCP-sharded: they page the allocator's virtual space, pages of page_size x dcp_size "
        "tokens (mem_cache/kv_cache_configurator.py `loc_space_scale`/`pool_page_size`, 0.5.17 :276-285, 0.5.19 "
        ":331-342). `prepare_dcp_token_item_lens` compares every entry's per-token bytes with the decode's by the "
        "physical page size and raises RuntimeError 'PD DCP source/destination KV geometry differs' (0.5.17 "
        "disaggregation/common/conn.py:296-307, 0.5.19 :330-341). NIXL passes each decode entry's size "
        "(nixl/conn.py:990-992 in 0.5.19), so the draft entries fail it inside `_add_remote_peer`, called from the "
        "prefill's bootstrap thread (:1469-1482, :2748-2752) without a handler. Mooncake passes the first entry's size "
        "for all (mooncake/conn.py:2099-2102), so a draft of the target's per-token size (its MTP layer) passes and "
        "`send_kvcache_dcp` moves the draft entries with the target's plan: this rank's every dcp_size-th token at "
        "the sharded rows (:905-1010); a draft of another size fails the same check. 0.5.20 scales the draft "
        "entries by the decode's DCP size (common/conn.py:343-371) and gives them their own all-token plan "
        "(common/utils.py:185-196).",
        fix="Upgrade both PD nodes to SGLang 0.5.20 or later, or run the decode node without DCP or without speculation.",
        fix_safety="No automatic fix: each option changes the deployment.",
    ),
    bad=Example(argv=DSV3_DCP_DECODE, sglang_version="0.5.19"),
    good=Example(argv=DSV3_DCP_DECODE, sglang_version="0.5.20"),
    sources=(
        "sglang 0.5.16: python/sglang/srt/disaggregation/common/conn.py (no DCP relayout)",
        "sglang 0.5.17: python/sglang/srt/disaggregation/common/conn.py:276-307 (276-283: no relayout for equal DCP sizes); mooncake/conn.py:1908-1911; nixl/conn.py:1015-1017; mem_cache/kv_cache_configurator.py:276-285",
        "sglang 0.5.19: python/sglang/srt/disaggregation/common/conn.py:310-341; mooncake/conn.py:905-1010,2099-2102; nixl/conn.py:990-992,1469-1482,2748-2752; mem_cache/kv_cache_configurator.py:331-342",
        "sglang 0.5.20: python/sglang/srt/disaggregation/common/conn.py:343-371; common/utils.py:152-197; disaggregation/decode.py:563-583",
    ),
    sglang_versions=">=0.5.17,<=0.5.19",
    log_signatures=(r"PD DCP source/destination KV geometry differs",),
)
