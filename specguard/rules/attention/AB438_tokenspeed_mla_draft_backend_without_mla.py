"""AB438 tokenspeed-mla-draft-backend-without-mla."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, effective_topk, mla_of
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import TOKENSPEED_MLA_ALIAS

# DraftBackendFactory raises at draft start-up (0.5.15 speculative/draft_utils.py:215-219, 319-323):
# "tokenspeed_mla backend requires MLA model (use_mla_backend=True)."
# and 0.5.23, which rewrites the value to cutedsl_mla (arg_groups/serving_hook.py:303-320), raises
# "cutedsl_mla backend requires MLA model (use_mla_backend=True)." (draft_utils.py:378-382).
# 0.5.12-0.5.14 (0.5.12 draft_utils.py:203-207, 293-297) test `get_global_server_args().use_mla_backend`, a
# method never called (server_args.py:7207), so the guard never raises there and the backend is built for the
# non-MLA draft; what fails then is not read from the code, so the rule starts at 0.5.15.
DRAFT_BACKEND = "--speculative-draft-attention-backend"
TOKENSPEED = "tokenspeed_mla"


def _checked_model(ctx: CheckContext) -> tuple[str, bool | None]:
    """(which model the factory tests, whether it is MLA; None when unknown): the draft runner."""
    if ctx.spec.get("speculative_draft_model_path") is None:
        return "draft (the target's own MTP layers)", mla_of(ctx.target)
    return "draft", mla_of(ctx.draft)


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.spec.last_value(DRAFT_BACKEND) != TOKENSPEED
    ):
        return
    which, mla = _checked_model(ctx)
    if mla is not False:
        return
    refusing = (
        "cutedsl_mla" if TOKENSPEED_MLA_ALIAS.present_in(ctx.version) else TOKENSPEED
    )
    gpu = ctx.env.gpu
    sm10x = (
        gpu is not None
        and gpu.compute_capability is not None
        and gpu.compute_capability[0] == 10
    )
    replacement = (
        "trtllm_mha" if sm10x and (effective_topk(ctx) or 1) <= 1 else "flashinfer"
    )
    yield RULE.finding(
        f"{ctx.flag(DRAFT_BACKEND)} {TOKENSPEED} in SGLang {ctx.version}: the draft backend factory requires an MLA "
        f"model and tests the {which}, which has no kv_lora_rank in its config.json, so the draft worker raises "
        f"'{refusing} backend requires MLA model (use_mla_backend=True).' after the target's weights load. Give the "
        f"draft an MHA backend: {ctx.flag(DRAFT_BACKEND)} {replacement}",
        flags=(DRAFT_BACKEND,),
        fix=fix_of(
            f"run the draft with {replacement}",
            Applicability.UNSAFE,
            Edit(name=DRAFT_BACKEND, value=replacement),
        ),
    )


RULE = Rule(
    check=check,
    code="AB438",
    category=Category.START,
    name="tokenspeed-mla-draft-backend-without-mla",
    summary="--speculative-draft-attention-backend tokenspeed_mla for a non-MLA draft is refused when the draft "
    "worker starts (0.5.15+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3, NEXTN or STANDALONE with `--speculative-draft-attention-backend tokenspeed_mla`, where "
        "the draft (the target's own MTP layers when no draft path is given) has no kv_lora_rank; SGLang 0.5.15 or "
        "later.",
        why="tokenspeed_mla arrives in 0.5.12 with draft factories meant to raise unless use_mla_backend holds, "
        "but 0.5.12-0.5.14 test `get_global_server_args().use_mla_backend` without calling it (0.5.12 "
        "speculative/draft_utils.py:203-207, 293-297; 0.5.14 :216-218, 314-317; a method, server_args.py:7207), "
        "so nothing is refused there and the rule, unsure what fails instead, stays quiet. 0.5.15 tests the draft "
        "runner's use_mla_backend attribute (draft_utils.py:215-219, 319-323; model_executor/model_runner.py:414), "
        "unchanged to 0.5.22 (:398-400). "
        "0.5.23 rewrites tokenspeed_mla to cutedsl_mla for `--speculative-draft-attention-backend` as well "
        "(arg_groups/serving_hook.py:303-320), whose draft factories raise the same way (draft_utils.py:358-362, "
        "378-382, 512-516). An inherited (not typed) MLA-only draft backend is AB020; DFLASH, which drops the "
        "value for flashinfer, is AB006.",
        fix="Name an MHA backend for the draft (trtllm_mha with topk 1 on Blackwell, else flashinfer).",
        fix_safety="Unsafe: it picks the draft's attention kernel.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3, DRAFT_BACKEND, TOKENSPEED),
        target={"architectures": ("LlamaForCausalLM",)},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        gpu="B200",
        sglang_version="0.5.15",
    ),
    good=Example(
        argv=(*LLAMA31_8B_EAGLE3, DRAFT_BACKEND, "flashinfer"),
        target={"architectures": ("LlamaForCausalLM",)},
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
        gpu="B200",
        sglang_version="0.5.15",
    ),
    sources=(
        "sglang 0.5.12: python/sglang/srt/speculative/draft_utils.py:56, 83, 203-207, 293-297; python/sglang/srt/server_args.py:7207 (use_mla_backend is a method: the guard never raises)",
        "sglang 0.5.14: python/sglang/srt/speculative/draft_utils.py:216-218, 314-317; python/sglang/srt/server_args.py:6572 (the same)",
        "sglang 0.5.15: python/sglang/srt/speculative/draft_utils.py:215-219, 319-323; python/sglang/srt/model_executor/model_runner.py:414",
        "sglang 0.5.22: python/sglang/srt/speculative/draft_utils.py:398-400",
        "sglang 0.5.23: python/sglang/srt/arg_groups/serving_hook.py:303-320; python/sglang/srt/speculative/draft_utils.py:358-362, 378-382, 512-516",
    ),
    sglang_versions=">=0.5.15",
    log_signatures=(
        r"(tokenspeed_mla|cutedsl_mla) backend requires MLA model \(use_mla_backend=True\)",
    ),
)
