"""HY480 replayssm-spec-tree-draft."""

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
from specguard.sglang_facts.changes import Change

LINEAR_SPELLING = "--enable-linear-replayssm-spec"
GDN_SPELLING = "--enable-gdn-replayssm-spec"
# 0.5.16 names the switch --enable-gdn-replayssm-spec; 0.5.17 renames it and keeps the old name as a
# deprecated alias of the same field until 0.5.19; 0.5.20 parses only the new name.
LINEAR_SPELLING_ADDED = Change(
    "0.5.17",
    "0.5.17 server_args.py:6172-6180 enable_linear_replayssm_spec; :8404-8410 the deprecated gdn alias",
)
GDN_SPELLING_GONE = Change(
    "0.5.20",
    "0.5.20: no --enable-gdn-replayssm-spec under sglang/srt (0.5.19 server_args.py:4017-4023 still has it)",
)


def replayssm_spec_switch(ctx: CheckContext) -> str | None:
    """The ReplaySSM spec-verify switch as written, when this release parses that spelling."""
    if LINEAR_SPELLING_ADDED.present_in(ctx.version) and ctx.spec.has(LINEAR_SPELLING):
        return LINEAR_SPELLING
    if not GDN_SPELLING_GONE.present_in(ctx.version) and ctx.spec.has(GDN_SPELLING):
        return GDN_SPELLING
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    switch = replayssm_spec_switch(ctx)
    # The guard runs in the linear-attention hook, before the speculative hook picks an automatic
    # topk: only a topk the user wrote can trip it.
    topk = ctx.spec.get("speculative_eagle_topk")
    if switch is None or topk is None or topk <= 1:
        return
    yield RULE.finding(
        f"{ctx.flag(switch)} with {ctx.flag('--speculative-eagle-topk')} {topk} in SGLang {ctx.version}: the "
        "ReplaySSM verify kernel is valid only for a linear draft chain, so argument handling raises "
        f"'{switch} requires a linear draft chain (--speculative-eagle-topk in {{None, 1}})' before the server "
        f"starts. Drop {ctx.flag(switch)} (tree verify runs the recurrent kernel), or draft a chain (topk 1)",
        flags=(switch, "--speculative-eagle-topk"),
        fix=fix_of(
            f"drop {switch}", Applicability.UNSAFE, Edit(name=switch, value=None)
        ),
    )


QWEN3_NEXT_MTP_TREE = (
    "--model-path",
    "Qwen/Qwen3-Next-80B-A3B-Instruct",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "4",
    "--speculative-num-draft-tokens",
    "8",
)

RULE = Rule(
    check=check,
    code="HY480",
    category=Category.START,
    name="replayssm-spec-tree-draft",
    summary="ReplaySSM speculative verify (--enable-linear-replayssm-spec / --enable-gdn-replayssm-spec) with "
    "an explicit --speculative-eagle-topk above 1 is refused at argument time (0.5.16+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-gdn-replayssm-spec` (0.5.16 to 0.5.19) or `--enable-linear-replayssm-spec` (0.5.17 on) "
        "with `--speculative-eagle-topk` set above 1, from SGLang 0.5.16.",
        why="0.5.16 added ReplaySSM spec-verify: its chunked verify kernel uses a strictly lower causal mask, valid "
        "only for a chain, and `_handle_linear_attn_backend` raises ValueError '--enable-gdn-replayssm-spec "
        "requires a linear draft chain (--speculative-eagle-topk in {None, 1})' (0.5.16 server_args.py:5372-5380). "
        "That hook runs before the speculative hook (:2982 vs :3031), so it sees the topk as written, never the "
        "automatic one. 0.5.17 renames the switch and the message ('--enable-linear-replayssm-spec requires a "
        "linear draft chain', server_args.py:6172-6180), keeping the old name as a deprecated alias (:8404-8410) "
        "until 0.5.19; from 0.5.19 the check lives in arg_groups/attention_hook.py (0.5.23 :452-458), still ahead "
        "of the speculative hook (pipeline.py:253 vs :306). 0.5.15.post1 has no such switch.",
        fix="Drop the ReplaySSM spec switch, or draft a chain with `--speculative-eagle-topk 1`.",
        fix_safety="Unsafe: the verify falls back to the recurrent kernel, which changes speed and memory.",
    ),
    bad=Example(
        argv=(*QWEN3_NEXT_MTP_TREE, GDN_SPELLING),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(
            "--model-path",
            "Qwen/Qwen3-Next-80B-A3B-Instruct",
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
            GDN_SPELLING,
        ),
        target={"architectures": ("Qwen3NextForCausalLM",)},
        sglang_version="0.5.16",
    ),
    sources=(
        "sglang 0.5.15.post1: python/sglang/srt/server_args.py (no enable_gdn_replayssm_spec)",
        "sglang 0.5.16: python/sglang/srt/server_args.py:2982,3031,5372-5380",
        "sglang 0.5.17: python/sglang/srt/server_args.py:3543,3592,6172-6180,8404-8410",
        "sglang 0.5.19: python/sglang/srt/arg_groups/attention_hook.py:383-391; server_args.py:4017-4023",
        "sglang 0.5.23: python/sglang/srt/arg_groups/attention_hook.py:452-458; arg_groups/pipeline.py:253,306",
    ),
    sglang_versions=">=0.5.16",
    log_signatures=(
        r"--enable-(gdn|linear)-replayssm-spec requires a linear draft chain",
    ),
)
