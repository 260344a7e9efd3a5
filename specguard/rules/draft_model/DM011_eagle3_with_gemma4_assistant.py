"""DM011 eagle3-with-gemma4-assistant."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.draft_model._common import GEMMA4_ASSISTANTS


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE3" or ctx.draft is None or not ctx.draft.architectures:
        return
    arch = next((a for a in ctx.draft.architectures if a in GEMMA4_ASSISTANTS), None)
    if arch is None:
        return
    yield RULE.finding(
        f"the draft is a {arch}, which SGLang rejects with EAGLE3 at argument time ('{arch} draft requires "
        "--speculative-algorithm NEXTN or EAGLE; EAGLE3 is not supported for this draft architecture'). Use "
        f"{ctx.flag('--speculative-algorithm')} EAGLE: SGLang then runs it as FROZEN_KV_MTP",
        flags=("--speculative-algorithm",),
        fix=set_flags("use --speculative-algorithm EAGLE (SGLang promotes it to FROZEN_KV_MTP)", Applicability.UNSAFE,
                      speculative_algorithm="EAGLE"),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="DM011",
    category=Category.START,
    name="eagle3-with-gemma4-assistant",
    summary="EAGLE3 with a Gemma4 assistant draft, which SGLang rejects",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Fires when the draft's `architectures` include `Gemma4AssistantForCausalLM` or "
        "`Gemma4UnifiedAssistantForCausalLM` and the algorithm is EAGLE3.",
        why="SGLang reads the draft's config.json during argument resolution and raises a ValueError for "
        "this pair (P07, `arg_groups/speculative_hook.py:81-117`). With NEXTN or EAGLE it promotes the "
        "algorithm to FROZEN_KV_MTP instead (P06).",
        fix="Set `--speculative-algorithm EAGLE`.",
        fix_safety="Unsafe: it changes the algorithm (to the one SGLang supports for this draft).",
    ),
    bad=Example(
        argv=("--model-path", "/models/gemma4", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "/models/gemma4-assistant"),
        draft={"architectures": ("Gemma4AssistantForCausalLM",)},
    ),
    good=Example(
        argv=("--model-path", "/models/gemma4", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "/models/gemma4-assistant"),
        draft={"architectures": ("Gemma4AssistantForCausalLM",)},
    ),
    sources=(
        "design: sglang-spec-checks.md P06, P07",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:81-117 (_resolve_speculative_algorithm_alias)",
        "sglang 0.5.23: python/sglang/srt/models/gemma4_mtp.py:404",
    ),
)
