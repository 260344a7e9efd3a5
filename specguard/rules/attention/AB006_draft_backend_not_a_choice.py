"""AB006 draft-backend-not-a-choice."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.spelling import closest

# sglang 0.5.23 arg_groups/choices.py:103-111; every earlier DFLASH list is a subset (0.5.11
# speculative/dflash_worker.py:102 has flashinfer, fa3, fa4, triton), so no value in it falls back there.
DRAFT_ATTENTION_BACKEND_CHOICES = ("flashinfer", "fa3", "fa4", "triton", "ascend", "trtllm_mha", "intel_xpu")
# Only the DFLASH draft worker swaps an unlisted value for the platform default. The EAGLE family looks the
# value up in its draft factory's own map, which runs MLA backends this list lacks and raises for a name it
# does not know (0.5.12 speculative/draft_utils.py:23-37; AB438 for tokenspeed_mla on a non-MLA model); a
# DSPARK draft with MoE layers ignores the flag for its own backend (0.5.23
# speculative/dspark_components/dspark_worker_v2.py:228-237).
FALLING_BACK_ALGORITHM = "DFLASH"


def check(ctx: CheckContext) -> Iterator[Finding]:
    value = ctx.spec.get("speculative_draft_attention_backend")
    if ctx.algorithm != FALLING_BACK_ALGORITHM or value is None or value in DRAFT_ATTENTION_BACKEND_CHOICES:
        return
    close = closest(value, DRAFT_ATTENTION_BACKEND_CHOICES)
    hint = f" (did you mean {close[0]}?)" if close else ""
    yield RULE.finding(
        f"{ctx.flag('--speculative-draft-attention-backend')} {value!r} is not one of SGLang's draft backends "
        f"({', '.join(DRAFT_ATTENTION_BACKEND_CHOICES)}){hint}: SGLang accepts any string and the DFLASH draft "
        "worker falls back to flashinfer (triton on HIP/XPU) with only a warning",
        flags=("--speculative-draft-attention-backend",),
        fix=set_flags(
            "drop --speculative-draft-attention-backend (the draft follows the target's backend)",
            Applicability.UNSAFE,
            speculative_draft_attention_backend=None,
        ),
    )


RULE = Rule(
    check=check,
    code="AB006",
    category=Category.PERF,
    name="draft-backend-not-a-choice",
    summary="--speculative-draft-attention-backend names a backend the DFLASH draft worker does not know (0.5.11+)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="With `--speculative-algorithm DFLASH` (0.5.11+), the value of "
        "`--speculative-draft-attention-backend` against SGLang's `DRAFT_ATTENTION_BACKEND_CHOICES`.",
        why="The flag has no argparse `choices` (catalogue P44). The DFLASH draft worker replaces a value "
        "outside its list by flashinfer (triton on HIP/XPU) with only a warning (0.5.11 "
        "`speculative/dflash_worker.py:102-130`; 0.5.16 `arg_groups/speculative_hook.py:433-470`; 0.5.23 "
        "`speculative/draft_worker_common.py:31-60`), so the draft runs a backend the user did not ask for; a "
        "typo like `fa-3` goes unnoticed. Other algorithms do not fall back: the EAGLE family's draft factory "
        "builds the named backend from its own map, MLA backends included, and raises 'EAGLE is not supported "
        "in ... attention backend' for an unknown one (0.5.12 `speculative/draft_utils.py:23-37`; "
        "tokenspeed_mla on a non-MLA model is AB438), and a DSPARK draft with MoE layers ignores the flag "
        "(0.5.23 `speculative/dspark_components/dspark_worker_v2.py:228-237`), so the rule speaks of DFLASH only.",
        fix="Drop the flag so the draft uses the target's backend, or write one of the choices.",
        fix_safety="Unsafe: the draft's backend changes from SGLang's silent fallback to the target's.",
    ),
    bad=Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-draft-attention-backend", "fa-3"),
        gpu="H100",
    ),
    good=Example(
        argv=(*QWEN3_8B_DFLASH, "--speculative-draft-attention-backend", "fa3"),
        gpu="H100",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/speculative/dflash_worker.py:102-130",
        "sglang 0.5.12: python/sglang/srt/speculative/draft_utils.py:23-37 (EAGLE: the factory's map, else ValueError)",
        "sglang 0.5.16: python/sglang/srt/arg_groups/speculative_hook.py:433-470",
        "sglang 0.5.23: python/sglang/srt/arg_groups/choices.py:103-111",
        "sglang 0.5.23: python/sglang/srt/speculative/draft_worker_common.py:31-60",
        "sglang 0.5.23: python/sglang/srt/speculative/dspark_components/dspark_worker_v2.py:228-237",
        "catalogue: shared/design/sglang-spec-checks.md P44",
    ),
    sglang_versions=">=0.5.11",
    dialects=SGLANG_DIALECTS,
)
