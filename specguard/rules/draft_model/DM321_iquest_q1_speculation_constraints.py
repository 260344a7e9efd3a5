"""DM321 iquest-q1-speculation-constraints."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import BACKEND_FLAGS
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.spec_params._shared import int_flag

IQUEST_Q1 = "IQuestQ1ForCausalLM"


def _refusals(ctx: CheckContext) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(what SGLang says, the flags that cause it), in the order the two checks run."""
    spec = ctx.spec
    # arg_groups/model_overrides/iquest_q1.py (_iquest_q1_overrides)
    for flag in BACKEND_FLAGS:
        backend = spec.last_value(flag)
        if backend is not None and backend != "fa3":
            yield (
                (
                    f"{ctx.flag(flag)} {backend}: 'IQuestQ1 applies its attention sink from the softmax LSE and requires "
                    "FA3 attention for both prefill and decode.'"
                ),
                (flag,),
            )
    if ctx.algorithm != "EAGLE":
        yield (
            (
                f"{ctx.flag('--speculative-algorithm')} {spec.get('speculative_algorithm')}: 'IQuest Q1 MTP requires "
                "serial EAGLE or NEXTN drafting.'"
            ),
            ("--speculative-algorithm",),
        )
    draft_backend = spec.get("speculative_draft_attention_backend")
    if draft_backend is not None and draft_backend != "fa3":
        yield (
            (
                f"{ctx.flag('--speculative-draft-attention-backend')} {draft_backend}: 'IQuestQ1 requires FA3 attention "
                "for the MTP draft.'"
            ),
            ("--speculative-draft-attention-backend",),
        )
    if (
        (int_flag(ctx, "--attn-cp-size") or 1) > 1
        or (int_flag(ctx, "--dcp-size") or 1) > 1
        or spec.has("--enable-prefill-cp")
    ):
        flags = tuple(
            f
            for f in ("--attn-cp-size", "--dcp-size", "--enable-prefill-cp")
            if spec.has(f)
        )
        yield (
            "context parallelism: 'IQuestQ1 does not support context parallelism.'",
            flags,
        )
    topk = spec.get("speculative_eagle_topk")
    if topk is not None and topk > 1:
        yield (
            (
                f"{ctx.flag('--speculative-eagle-topk')} {topk}: 'IQuestQ1 speculative decoding requires "
                "--speculative-eagle-topk 1.'"
            ),
            ("--speculative-eagle-topk",),
        )
    if spec.has("--enable-multi-layer-eagle"):
        yield (
            (
                f"{ctx.flag('--enable-multi-layer-eagle')}: 'IQuest Q1 MTP drafting does not support multi-layer "
                "EAGLE.'"
            ),
            ("--enable-multi-layer-eagle",),
        )
    if ctx.resolution.attention_dp_size > 1:
        flags = tuple(
            f for f in ("--enable-dp-attention", "--attn-dp-size") if spec.has(f)
        )
        yield "DP attention: 'IQuest Q1 does not support DP attention.'", flags
    if (spec.get("pp_size") or 1) > 1:
        yield (
            f"{ctx.flag('--pp-size')} {spec.get('pp_size')}: 'IQuest Q1 does not support pipeline parallelism.'",
            ("--pp-size",),
        )
    if ctx.algorithm != "EAGLE":
        return  # the draft checks below belong to the EAGLE family's handler
    # arg_groups/speculative_hook.py (_handle_iquest_q1_mtp_draft)
    draft_path = spec.get("speculative_draft_model_path")
    if draft_path is None or draft_path == spec.get("model_path"):
        yield (
            (
                f"{'no ' + ctx.flag('--speculative-draft-model-path') if draft_path is None else 'the target path as the draft'}: "
                "'IQuest Q1 requires an independent draft model path.' The MTP head is a separate IQuestQ1MTP "
                "checkpoint"
            ),
            ("--speculative-draft-model-path",),
        )
        return  # SGLang stops here, before it reads the draft's config
    if spec.has("--speculative-token-map"):
        yield (
            f"{ctx.flag('--speculative-token-map')}: 'MTP uses its own full-vocabulary embedding and head.'",
            ("--speculative-token-map",),
        )
    steps, tokens = (
        spec.get("speculative_num_steps"),
        spec.get("speculative_num_draft_tokens"),
    )
    # Unset steps come from the draft's num_draft_slots, which specguard does not read.
    if steps is not None and tokens is not None and tokens != steps + 1:
        yield (
            (
                f"{ctx.flag('--speculative-num-draft-tokens')} {tokens} with {steps} steps: 'MTP verification width must "
                f"equal draft steps + 1.' ({steps + 1})"
            ),
            ("--speculative-num-draft-tokens", "--speculative-num-steps"),
        )


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm is None
        or ctx.target is None
        or ctx.target.architecture != IQUEST_Q1
    ):
        return
    for what, flags in _refusals(ctx):
        yield RULE.finding(
            f"IQuest Q1 target in SGLang {ctx.env.sglang_version}, {what}: SGLang refuses the launch with this "
            "ValueError while it resolves the server arguments",
            flags=flags,
        )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own argument checks
    check=check,
    code="DM321",
    category=Category.START,
    name="iquest-q1-speculation-constraints",
    summary="An IQuest Q1 target speculates only as serial EAGLE/NEXTN with its own MTP draft on FA3 (0.5.21+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="A speculative launch on an `IQuestQ1ForCausalLM` target, SGLang 0.5.21 or later, with any of: an "
        "attention backend (`--attention-backend`, `--prefill-attention-backend`, `--decode-attention-backend`) or "
        "`--speculative-draft-attention-backend` other than fa3; an algorithm other than EAGLE/NEXTN; context "
        "parallelism; `--speculative-eagle-topk` above 1; `--enable-multi-layer-eagle`; DP attention; "
        "`--pp-size` above 1; no `--speculative-draft-model-path` or the target's own path; "
        "`--speculative-token-map`; `--speculative-num-draft-tokens` other than `--speculative-num-steps` + 1.",
        why="0.5.21 adds the IQuest Q1 model with a per-architecture override (arg_groups/model_overrides/iquest_q1.py:"
        '10-47) that raises `ValueError("IQuestQ1 applies its attention sink from the softmax LSE and requires FA3 '
        'attention for both prefill and decode.")`, `"IQuest Q1 MTP requires serial EAGLE or NEXTN drafting."`, '
        '`"IQuestQ1 requires FA3 attention for the MTP draft."`, `"IQuestQ1 does not support context parallelism."`, '
        '`"IQuestQ1 speculative decoding requires --speculative-eagle-topk 1."`, `"IQuest Q1 MTP drafting does '
        'not support multi-layer EAGLE."`, `"IQuest Q1 does not support DP attention."` and `"IQuest Q1 does not '
        'support pipeline parallelism."`; the EAGLE handler then runs `_handle_iquest_q1_mtp_draft` '
        '(speculative_hook.py:913-958), which raises `"IQuest Q1 requires an independent draft model path."`, '
        '`"MTP uses its own full-vocabulary embedding and head."` and `"MTP verification width must equal draft '
        "steps + 1.\"` (and checks the draft's config: IQuestQ1MTPConfig, hidden size, vocabulary and target layer "
        "count, which specguard does not read). The same code is in 0.5.22 and 0.5.23 (speculative_hook.py:936, "
        ":1014); from 0.5.22 DP attention means `--attn-dp-size` above 1 (runtime_context.attn_dp_enabled_of). "
        "0.5.20 has no IQuest Q1 model (VB012).",
        fix="Serve IQuest Q1 with `--speculative-algorithm EAGLE` (or NEXTN), its IQuestQ1MTP checkpoint as "
        "`--speculative-draft-model-path`, topk 1, draft tokens = steps + 1, fa3 attention, and no DP, PP or CP.",
        fix_safety="No automatic fix: the draft checkpoint and the parallel layout are the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "./IQuest-Q1",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            "./IQuest-Q1-MTP",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "4",
            "--speculative-num-draft-tokens",
            "8",
        ),
        target={"architectures": (IQUEST_Q1,)},
        sglang_version="0.5.21",
    ),
    good=Example(
        argv=(
            "--model-path",
            "./IQuest-Q1",
            "--speculative-algorithm",
            "EAGLE",
            "--speculative-draft-model-path",
            "./IQuest-Q1-MTP",
            "--speculative-num-steps",
            "3",
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target={"architectures": (IQUEST_Q1,)},
        sglang_version="0.5.21",
    ),
    sources=(
        "sglang 0.5.20: python/sglang/srt/models/ (no iquest_q1.py; arg_groups/model_overrides/ has no iquest_q1.py)",
        "sglang 0.5.21: python/sglang/srt/arg_groups/model_overrides/iquest_q1.py:10-47",
        "sglang 0.5.21: python/sglang/srt/arg_groups/speculative_hook.py:913-958, 1045",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_overrides/iquest_q1.py:11-48 (DP attention via attn_dp_enabled_of)",
        "sglang 0.5.23: python/sglang/srt/arg_groups/speculative_hook.py:1014 (_handle_iquest_q1_mtp_draft, unchanged)",
    ),
    sglang_versions=">=0.5.21",
    log_signatures=(
        r"IQuestQ1 applies its attention sink from the softmax LSE",
        r"IQuest Q1 MTP requires serial EAGLE or NEXTN drafting",
        r"IQuestQ1 requires FA3 attention for the MTP draft",
        r"IQuestQ1 does not support context parallelism",
        r"IQuestQ1 speculative decoding requires --speculative-eagle-topk 1",
        r"IQuest Q1 MTP drafting does not support multi-layer EAGLE",
        r"IQuest Q1 does not support DP attention",
        r"IQuest Q1 does not support pipeline parallelism",
        r"IQuest Q1 requires an independent draft model path",
        r"MTP uses its own full-vocabulary embedding and head",
        r"MTP verification width must equal draft steps \+ 1",
    ),
)
