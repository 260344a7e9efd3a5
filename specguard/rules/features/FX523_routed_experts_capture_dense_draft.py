"""FX523 routed-experts-capture-dense-draft."""

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
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS

FLAG = "--enable-return-routed-experts"

# What SGLang prints when the draft's runner builds its capturer from a dense config (transformers' message):
# "AttributeError: 'LlamaConfig' object has no attribute 'num_experts_per_tok'"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if not ctx.spec.has(FLAG) or ctx.algorithm not in DRAFT_CHECKPOINT_ALGORITHMS:
        return
    if ctx.drafts_from_target_checkpoint:
        return  # an MTP draft built from the target's own config keeps its expert count
    target, draft = ctx.target, ctx.draft
    if target is None or target.num_experts_per_tok is None:
        return  # a dense target's own capturer fails first, speculation or not
    if draft is None or draft.num_experts_per_tok is not None:
        return
    name = draft.architecture or "the draft"
    yield RULE.finding(
        f"{ctx.flag(FLAG)} with {ctx.algorithm} and a separate draft whose config.json has no "
        f"num_experts_per_tok ({name}, a dense model): in SGLang {ctx.version} the draft's model runner also builds "
        "the process-wide routed-experts capturer from its own config, so the draft worker fails at start with "
        "\"AttributeError: ... object has no attribute 'num_experts_per_tok'\", after the target has loaded. "
        f"Drop {ctx.flag(FLAG)}, or upgrade to 0.5.15 (capture is target-only there)",
        flags=(FLAG, "--speculative-draft-model-path"),
        fix=fix_of(f"drop {FLAG}", Applicability.UNSAFE, Edit(name=FLAG, value=None)),
    )


MOE_TARGET = {
    "architectures": ("Qwen3MoeForCausalLM",),
    "num_experts_per_tok": 8,
    "num_hidden_layers": 48,
}
EAGLE3_HEAD = {"architectures": ("LlamaForCausalLMEagle3",), "num_hidden_layers": 1}
_LAUNCH = (
    "--model-path",
    "Qwen/Qwen3-30B-A3B",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "/ckpt/qwen3-30b-a3b-eagle3",
    FLAG,
)

RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="FX523",
    category=Category.START,
    name="routed-experts-capture-dense-draft",
    summary="--enable-return-routed-experts with a separate dense draft (EAGLE/EAGLE3/STANDALONE/DFLASH) fails at "
    "draft start (0.5.7-0.5.14)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    docs=RuleDocs(
        what="`--enable-return-routed-experts` with EAGLE, EAGLE3, STANDALONE or DFLASH and a separate draft "
        "checkpoint (`--speculative-draft-model-path` other than the target) whose config.json has no "
        "`num_experts_per_tok` (a dense head such as an EAGLE3 or DFlash draft), on a MoE target (its config.json "
        "has `num_experts_per_tok`), SGLang 0.5.7 to 0.5.14. Unknown configs keep it quiet; MTP drafts built from "
        "the target's config are not claimed.",
        why="0.5.7 added the flag and `ModelRunner.initialize` calls `init_routed_experts_capturer` for every "
        "runner, the draft's included (0.5.7 model_executor/model_runner.py:535, :580-612; 0.5.14 :849, "
        ":956-973); `RoutedExpertsCapturer.create` builds the capturer from that runner's "
        "`hf_text_config.num_experts_per_tok` (0.5.7 layers/moe/routed_experts_capturer.py:105-124, :155-179; "
        "0.5.14 state_capturer/routed_experts.py:31-47, :57-59), which a dense draft config lacks, so the draft "
        "runner raises AttributeError when the draft worker starts, after the target loaded. 0.5.15 returns early "
        "for a draft worker and disables capture in the draft model (model_runner.py:700-709, :993-998). "
        "0.5.6.post2 has no such flag.",
        fix="Drop `--enable-return-routed-experts`, or upgrade to 0.5.15.",
        fix_safety="Unsafe: responses no longer carry the routed experts.",
    ),
    bad=Example(
        argv=_LAUNCH, target=MOE_TARGET, draft=EAGLE3_HEAD, sglang_version="0.5.14"
    ),
    good=Example(
        argv=_LAUNCH, target=MOE_TARGET, draft=EAGLE3_HEAD, sglang_version="0.5.15"
    ),
    sources=(
        "sglang 0.5.6.post2: python/sglang/srt/server_args.py (no --enable-return-routed-experts)",
        "sglang 0.5.7: python/sglang/srt/model_executor/model_runner.py:535,580-612",
        "sglang 0.5.7: python/sglang/srt/layers/moe/routed_experts_capturer.py:105-124,155-179",
        "sglang 0.5.14: python/sglang/srt/model_executor/model_runner.py:849,956-973",
        "sglang 0.5.14: python/sglang/srt/state_capturer/routed_experts.py:31-47,57-59",
        "sglang 0.5.15: python/sglang/srt/model_executor/model_runner.py:700-709,993-998",
    ),
    sglang_versions=">=0.5.7,<=0.5.14",
    log_signatures=(r"object has no attribute 'num_experts_per_tok'",),
)
