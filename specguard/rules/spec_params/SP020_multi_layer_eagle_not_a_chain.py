"""SP020 multi-layer-eagle-not-a-chain."""

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
from specguard.rules.examples import LLAMA31_8B

# Targets SGLang switches multi-layer EAGLE on for when the algorithm is EAGLE (sglang 0.5.23
# arg_groups/model_overrides/mimo_v2.py:19-25, gigachat35.py:14-22, overrides.py:330-350 Step3.5/3.7).
AUTO_MULTI_LAYER_ARCHITECTURES = frozenset(
    {"MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM", "GigaChat35ForCausalLM", "Step3p5ForCausalLM",
     "Step3p7ForConditionalGeneration"}
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm != "EAGLE":
        return
    typed = ctx.spec.has("--enable-multi-layer-eagle")
    auto = ctx.target is not None and ctx.target.architecture in AUTO_MULTI_LAYER_ARCHITECTURES
    if not (typed or auto):
        return
    steps, draft_tokens, topk = ctx.resolution.num_steps, ctx.resolution.num_draft_tokens, ctx.resolution.eagle_topk
    if steps is None or draft_tokens is None or draft_tokens == steps + 1:
        return
    chosen = [name for name in ("num_steps", "eagle_topk", "num_draft_tokens") if name in ctx.resolution.set_by]
    how = f" (SGLang's automatic choice: {', '.join(chosen)})" if chosen else ""
    why = "--enable-multi-layer-eagle" if typed else f"multi-layer EAGLE (on by default for {ctx.target.architecture})"  # type: ignore[union-attr]
    yield RULE.finding(
        f"{why} drafts a chain, one MTP layer per step, and its worker asserts "
        f"'multi-layer EAGLE requires speculative_num_draft_tokens == speculative_num_steps + 1': here steps "
        f"{steps}, topk {topk}, draft tokens {draft_tokens}{how}, so start-up fails after the weights load. "
        f"Set {ctx.flag('--speculative-num-steps')} {steps}, {ctx.flag('--speculative-eagle-topk')} 1 and "
        f"{ctx.flag('--speculative-num-draft-tokens')} {steps + 1}",
        flags=("--speculative-num-draft-tokens", "--speculative-eagle-topk", "--speculative-num-steps"),
        fix=set_flags(
            f"draft a chain of {steps} steps",
            Applicability.UNSAFE,
            speculative_num_steps=steps,
            speculative_eagle_topk=1,
            speculative_num_draft_tokens=steps + 1,
        ),
    )


RULE = Rule(
    check=check,
    code="SP020",
    category=Category.START,
    name="multi-layer-eagle-not-a-chain",
    summary="Multi-layer EAGLE with draft tokens other than steps + 1 (0.5.13+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="EAGLE with `--enable-multi-layer-eagle` (or a target SGLang turns it on for: MiMo-V2, GigaChat 3.5, "
        "Step 3.5/3.7) whose resolved `--speculative-num-draft-tokens` is not `--speculative-num-steps + 1` "
        "(typed, or auto-chosen: Llama gets 5/4/8).",
        why="From 0.5.13 multi-layer EAGLE always runs in `MultiLayerEagleWorkerV2`, overlap on or off (0.5.13 "
        "`speculative/spec_info.py:192-199`), whose `MultiLayerEagleDraftWorker` (`multi_layer_eagle_worker_v2.py:663`) "
        "asserts `speculative_num_draft_tokens == speculative_num_steps + 1` in its constructor (0.5.13 `:109-113`, "
        "0.5.14 `:129-133`, 0.5.23 `:150-154`; 0.5.12.post1 has no such assert). SGLang's argument checks do not "
        "look at it, so the assertion fires in the scheduler after the weights load (sglang#36536 on 0.5.18).",
        fix="Use a chain: topk 1 and draft tokens = steps + 1.",
        fix_safety="Unsafe: it changes the draft shape.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE", "--enable-multi-layer-eagle"),
        target={"architectures": ("LlamaForCausalLM",)},
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE", "--enable-multi-layer-eagle",
              "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"),
        target={"architectures": ("LlamaForCausalLM",)},
        sglang_version="0.5.13",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/36536",
        "sglang 0.5.13: python/sglang/srt/speculative/spec_info.py:192-199",
        "sglang 0.5.13: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:109-113, 663",
        "sglang 0.5.14: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:129-133",
        "sglang 0.5.23: python/sglang/srt/speculative/multi_layer_eagle_worker_v2.py:150-154",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/mimo_v2.py:19-25",
    ),
    sglang_versions=">=0.5.13",
)
