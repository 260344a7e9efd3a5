"""AB362 dsv4-multi-step-draft-cache-loc."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import effective_topk
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)

DSV4 = "DeepseekV4ForCausalLM"
STEPS = "--speculative-num-steps"


def draft_steps(ctx: CheckContext) -> int | None:
    """The draft steps SGLang runs: its own choice, else what was typed."""
    return ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps")


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE"
        or ctx.target is None
        or ctx.target.architecture != DSV4
    ):
        return
    steps = draft_steps(ctx)
    # Any other topk is refused at argument time (DM197), so only the chain launch reaches the draft.
    if effective_topk(ctx) != 1 or steps is None or steps <= 1:
        return
    yield RULE.finding(
        f"DeepSeek-V4 MTP with {ctx.flag(STEPS)} {steps} in SGLang {ctx.version}: every draft step's attention "
        f"metadata is built from the whole draft out_cache_loc (batch x {steps} slots) instead of its own step's "
        "row. A draft batch that runs eagerly (no draft CUDA graph for its size, or graphs off) fails the assert "
        "'req_pool_indices.shape=... seq_lens.shape=... out_cache_loc.shape=...' and kills the server; a replayed "
        f"graph writes the draft KV to the first rows only, so acceptance drops. Draft one step ({ctx.flag(STEPS)} 1) "
        "or use SGLang 0.5.13 or later",
        flags=(STEPS,),
        fix=set_flags(
            "draft one step",
            Applicability.UNSAFE,
            speculative_num_steps=1,
            speculative_num_draft_tokens=2,
        ),
    )


DSV4_FLASH_MTP = (
    "--model-path",
    "deepseek-ai/DeepSeek-V4-Flash",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE",
    "--speculative-eagle-topk",
    "1",
)
DSV4_FACTS = {"architectures": (DSV4,)}

RULE = Rule(
    check=check,
    code="AB362",
    category=Category.CRASH,
    name="dsv4-multi-step-draft-cache-loc",
    summary="DeepSeek-V4 MTP with more than one draft step hands every step the whole draft out_cache_loc: "
    "eager draft batches crash (0.5.12 to 0.5.12.post1)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="A target whose config.json architectures[0] is DeepseekV4ForCausalLM with EAGLE/NEXTN (its MTP "
        "layers), `--speculative-eagle-topk 1` and more than one draft step (`--speculative-num-steps` above 1, "
        "typed or chosen by SGLang), SGLang 0.5.12 (where DeepSeek-V4 arrives) to 0.5.12.post1.",
        why="The draft allocates one KV slot per request, topk and step (`bs * topk * num_steps`, 0.5.12 "
        "speculative/eagle_info_v2.py:190-191) and runs every step through `DeepseekV4MultiStepBackend` "
        "(speculative/draft_utils.py:226-233), whose per-step backends store `speculative_step_id` "
        "(layers/attention/deepseek_v4_backend.py:373) but never slice by it. When the draft runs eagerly "
        "(eagle_worker_v2.py:362: no captured draft graph for the batch size, or CUDA graphs off), "
        "`init_forward_metadata` passes the whole buffer to `init_forward_metadata_decode`, which asserts "
        "`req_pool_indices.shape[0] == seq_lens.shape[0] == out_cache_loc.shape[0]` and prints "
        'f"{req_pool_indices.shape=} {seq_lens.shape=} {out_cache_loc.shape=}" (:399-401): with more than one '
        "step the buffer is longer than the batch, so the scheduler dies. A replayed draft graph crops the buffer to "
        "the batch (`pad=(0, bs - len(out_cache_loc))`, :824-834) and copies step 0's metadata to the later steps "
        "(:1224-1250), so every step writes the draft KV to the first rows. Same code in 0.5.12.post1. 0.5.13 "
        "slices the buffer per step (`per_step_draft_out_cache_loc`, deepseek_v4_backend.py:819, :965-990).",
        fix="Draft one step (`--speculative-num-steps 1`, two draft tokens), or upgrade to 0.5.13 or later.",
        fix_safety="Unsafe: fewer draft tokens per step lowers the speed-up.",
    ),
    bad=Example(
        argv=(*DSV4_FLASH_MTP, STEPS, "3"), target=DSV4_FACTS, sglang_version="0.5.12"
    ),
    good=Example(
        argv=(*DSV4_FLASH_MTP, STEPS, "1", "--speculative-num-draft-tokens", "2"),
        target=DSV4_FACTS,
        sglang_version="0.5.12",
    ),
    sources=(
        (
            "sglang 0.5.12: python/sglang/srt/layers/attention/deepseek_v4_backend.py:373,392-401,663-690,824-834,"
            "1181-1250"
        ),
        (
            "sglang 0.5.12: python/sglang/srt/speculative/eagle_info_v2.py:190-191; eagle_worker_v2.py:352-362; "
            "draft_utils.py:226-233"
        ),
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/deepseek_v4_backend.py:373,400,828 (unchanged)",
        (
            "sglang 0.5.13: python/sglang/srt/layers/attention/deepseek_v4_backend.py:819,965-990 "
            "(per_step_draft_out_cache_loc)"
        ),
    ),
    sglang_versions=">=0.5.12,<=0.5.12.post1",
    log_signatures=(
        r"req_pool_indices\.shape=.*seq_lens\.shape=.*out_cache_loc\.shape=",
    ),
)
