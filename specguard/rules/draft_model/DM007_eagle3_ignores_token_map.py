"""DM007 eagle3-ignores-token-map."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE3":
        return
    token_map = ctx.spec.get("speculative_token_map")
    if token_map is None:
        return
    yield RULE.finding(
        f"EAGLE3 heads carry their own vocabulary map (d2t), so {ctx.flag('--speculative-token-map')} "
        f"{token_map} is ignored: the draft worker logs 'Speculative token map specified, but EAGLE3 models "
        "already have this. Ignoring the specified token map.' Remove it (it is an EAGLE-1 / FR-Spec option)",
        flags=("--speculative-token-map",),
        fix=set_flags("remove --speculative-token-map, which EAGLE3 ignores", Applicability.SAFE, speculative_token_map=None),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="DM007",
    category=Category.HYGIENE,
    name="eagle3-ignores-token-map",
    summary="--speculative-token-map is ignored with EAGLE3",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="Fires when `--speculative-token-map` is given with `--speculative-algorithm EAGLE3`.",
        why="The token map (FR-Spec high-frequency vocabulary) trims an EAGLE-1 head's lm_head. EAGLE3 "
        "heads are trained with their own `draft_vocab_size` and `d2t` map, so the EAGLE worker ignores "
        "the flag with a warning at worker start-up (`speculative/eagle_worker_v2.py:323-330`); nothing "
        "checks it at argument time, not even that the file exists (catalogue §3e, cases core:B01, B02).",
        fix="Remove the flag.",
        fix_safety="Safe: SGLang ignores the flag with EAGLE3, so removing it changes nothing that runs.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, "--speculative-token-map", "thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt"),
    ),
    good=Example(
        argv=("--model-path", "meta-llama/Meta-Llama-3-8B-Instruct", "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
              "--speculative-token-map", "thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt"),
    ),
    sources=(
        "design: sglang-spec-checks.md §3e (EAGLE3 + --speculative-token-map, cases core:B01, B02)",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:323-330",
        "seed: sglang-speculative-decoding.md (EAGLE-2 Decoding via Frequency-Ranked Speculative Sampling)",
    ),
)
