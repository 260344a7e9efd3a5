"""DM005 separate-draft-algorithm-without-draft-path."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, set_flags
from specguard.rules.draft_model._common import (
    MTP_AUTOFILL_ARCHITECTURES,
    is_mtp_capable,
)
from specguard.rules.examples import LLAMA31_8B, LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import SEPARATE_DRAFT_ALGORITHMS


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = ctx.algorithm
    if algorithm not in SEPARATE_DRAFT_ALGORITHMS:
        return
    if ctx.spec.get("speculative_draft_model_path") is not None:
        return
    draft_flag = ctx.flag("--speculative-draft-model-path")
    if algorithm == "DFLASH":
        yield RULE.finding(
            f"DFLASH needs a DFlash draft checkpoint: SGLang rejects the launch at argument time with "
            f"'DFLASH speculative decoding requires setting --speculative-draft-model-path'. Add "
            f"{draft_flag} (e.g. z-lab/LLaMA3.1-8B-Instruct-DFlash-UltraChat for Llama-3.1-8B-Instruct)",
            flags=("--speculative-algorithm", "--speculative-draft-model-path"),
        )
        return
    mtp = ctx.target is not None and is_mtp_capable(ctx.target)
    what = "an EAGLE3 head" if algorithm == "EAGLE3" else "a separate small draft model"
    if mtp:
        arch = ctx.target.architecture if ctx.target else None
        filled = arch in MTP_AUTOFILL_ARCHITECTURES
        yield RULE.finding(
            f"{algorithm} needs {what} but no {draft_flag} is given; the target ({arch}) has its own MTP "
            + ("layers, and SGLang loads them as the draft (it fills the draft path with the target's), "
               if filled else "layers, which SGLang loads as the draft (the target checkpoint in draft mode), ")
            + f"which is MTP, not {algorithm}. For MTP use {ctx.flag('--speculative-algorithm')} EAGLE (NEXTN)",
            flags=("--speculative-algorithm",),
            fix=set_flags("use EAGLE (the target's MTP layers)", Applicability.UNSAFE, speculative_algorithm="EAGLE"),
        )
        return
    if ctx.target is not None and ctx.target.architecture is None:
        return
    yield RULE.finding(
        f"{algorithm} needs {what} but no {draft_flag} is given: SGLang accepts this at argument time, then "
        "the draft worker loads the target checkpoint itself as the draft and fails (or drafts nonsense) "
        f"after the target weights are loaded. Add {draft_flag}",
        flags=("--speculative-algorithm", "--speculative-draft-model-path"),
    )


RULE = Rule(
    check=check,
    # DFLASH with no draft is one cause: this rule says why and what to add; PL003 says it shorter.
    supersedes=("PL003",),
    code="DM005",
    category=Category.START,
    name="separate-draft-algorithm-without-draft-path",
    summary="EAGLE3, STANDALONE or DFLASH without --speculative-draft-model-path",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Fires when EAGLE3, STANDALONE or DFLASH is chosen without `--speculative-draft-model-path`. "
        "(EAGLE/NEXTN without a draft path means MTP: see DM006.)",
        why="These algorithms need a separate draft checkpoint. DFLASH is rejected at argument time "
        "(P73, `speculative_hook.py:324-327`). EAGLE3 and STANDALONE are accepted with no draft path (P26); "
        "the draft worker then builds its ModelConfig from `model_path or cfg.model_path` "
        "(`configs/model_config.py:956`), i.e. the target checkpoint, which is not an EAGLE3 head or a "
        "small model, and the failure comes after the target weights are loaded. On MTP targets (DeepSeek, "
        "GLM-4.5, MiMo, Qwen3-Next, ...) the target checkpoint in draft mode is the MTP module, so the user "
        "most likely wanted EAGLE (NEXTN).",
        fix="Add a draft path. On an MTP target, specguard proposes `--speculative-algorithm EAGLE`.",
        fix_safety="Unsafe: it changes the algorithm.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE3"),
        target={"architectures": ("LlamaForCausalLM",)},
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3,
        target={"architectures": ("LlamaForCausalLM",)},
    ),
    sources=(
        "design: sglang-spec-checks.md P26 (no draft path accepted), P73 (DFLASH raises)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:324-327",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:956 (model_path or cfg.model_path)",
        "seed: sglang-speculative-decoding.md (Standalone Speculative Decoding; DFlash Decoding)",
    ),
)
