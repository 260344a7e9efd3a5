"""DM341 eagle3-head-norms-ignored."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, ModelFacts, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.changes import EAGLE3_MLA_HEAD, Change

# The releases that build each norm an EAGLE3 head's config.json can ask for; before, the head is
# built without it and the checkpoint's norm weights are dropped as unknown.
LLAMA_HEAD_NORMS_READ = Change(
    "0.5.12",
    "0.5.12 models/llama_eagle3.py:166-178 fc_norm/use_aux_norm, :188, 246 norm_output",
)
LLAMA_HEAD_NORM_BEFORE_FC_READ = Change(
    "0.5.17", "0.5.17 models/llama_eagle3.py:160-174, 230-231 norm_before_fc"
)
MLA_HEAD_NORMS_READ = Change(
    "0.5.13",
    "0.5.13 models/kimi_k25_eagle3.py:216-229 fc_norm/use_aux_norm, :242-243, 297 norm_output",
)

# What each ModelFacts norm field asks of the head, as the message says it.
NORMS = {
    "fc_norm": "fc_norm (one RMSNorm per aux hidden state before fc)",
    "norm_before_fc": "norm_before_fc (one RMSNorm over the concatenated aux states before fc)",
    "norm_output": "norm_output (the head feeds its post-norm hidden state to the next draft step)",
}

# Per EAGLE3 head class: the release that brought the class (None: every EAGLE3 release) and, per
# norm it builds in some release, the first release that builds it.
HEADS: dict[str, tuple[Change | None, dict[str, Change]]] = {
    "LlamaForCausalLMEagle3": (
        None,
        {
            "fc_norm": LLAMA_HEAD_NORMS_READ,
            "norm_output": LLAMA_HEAD_NORMS_READ,
            "norm_before_fc": LLAMA_HEAD_NORM_BEFORE_FC_READ,
        },
    ),
    "Eagle3DeepseekV2ForCausalLM": (
        EAGLE3_MLA_HEAD,
        {"fc_norm": MLA_HEAD_NORMS_READ, "norm_output": MLA_HEAD_NORMS_READ},
    ),
}

DRAFT = {"architectures": ("LlamaForCausalLMEagle3",), "fc_norm": True}


def ignored_norms(draft: ModelFacts, ctx: CheckContext) -> list[tuple[str, Change]]:
    """(norm field, the release that builds it) for each norm the head asks for and this release leaves out."""
    head = HEADS.get(draft.architecture or "")
    if head is None:
        return []
    added, read_from = head
    if added is not None and not added.present_in(ctx.version):
        return []  # the class is not in this release (DM042)
    return [
        (field, change)
        for field, change in read_from.items()
        if getattr(draft, field) is True and not change.present_in(ctx.version)
    ]


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm != "EAGLE3"
        or ctx.draft is None
        or not (ignored := ignored_norms(ctx.draft, ctx))
    ):
        return
    asked = "; ".join(NORMS[field] for field, _ in ignored)
    first = max(change.release for _, change in ignored)
    yield RULE.finding(
        f"The EAGLE3 draft ({ctx.draft.architecture}) was trained with {asked}, but SGLang {ctx.version} builds "
        "the head without it and drops those weights: its drafts are poor and few are accepted, so decoding is "
        f"slower than it should be (the output stays correct). SGLang {first} and later build the head as its "
        "config.json declares",
        flags=("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,
    check=check,
    code="DM341",
    category=Category.PERF,
    name="eagle3-head-norms-ignored",
    summary="An EAGLE3 head's fc_norm / norm_before_fc / norm_output is not built by its release (before 0.5.12-0.5.17)",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a draft whose config.json asks for a norm its head class does "
        "not build in the launch's release: `fc_norm` or `use_aux_norm` true, or `norm_output` true, on "
        "`LlamaForCausalLMEagle3` before 0.5.12 or on `Eagle3DeepseekV2ForCausalLM` in 0.5.12-0.5.12.post1; "
        "`norm_before_fc` true (in `eagle_config` or at the top level) on `LlamaForCausalLMEagle3` before 0.5.17.",
        why="Through 0.5.11 `LlamaModel` in `models/llama_eagle3.py` builds `fc` and one decoder layer and reads none "
        "of these keys (0.4.4.post2 :105-129; 0.5.11 :138-143, and its forward returns the pre-norm hidden state, "
        ":194-197); the weight loader skips names it does not know (0.4.4.post2-0.4.8.post1 through "
        "`LlamaForCausalLM.load_weights`, which logs `Parameter model.fc_norm.0.weight not found in params_dict`; "
        "0.5.11 `llama_eagle3.py` `load_weights` silently). 0.5.12 builds `fc_norm` (or the legacy `use_aux_norm`, "
        "whose `aux_norm_*` weights it maps) and honours `norm_output` (`llama_eagle3.py:166-178, 188, 219-247`); "
        "`norm_before_fc` comes in 0.5.17 (:160-174, 230-231; 0.5.16 has none). `Eagle3DeepseekV2ForCausalLM` "
        "(Kimi-K2.5 MLA heads, new in 0.5.12, `models/kimi_k25_eagle3.py:179-263`) reads neither in 0.5.12 and "
        "0.5.12.post1, and its loader logs `Eagle3 MLA: skipping unexpected weight model.fc_norm.0.weight` "
        "(0.5.12.post1 :444); 0.5.13 builds both (:216-243, 274-298). Without the norms the head runs on inputs "
        "scaled unlike its training, so acceptance falls; the target's output is unchanged.",
        fix="Use the release that builds the head's norms (0.5.12, 0.5.13 for Eagle3DeepseekV2ForCausalLM, 0.5.17 "
        "for norm_before_fc), or a head trained without them.",
        fix_safety="No automatic fix: the release and the draft checkpoint are the user's choice.",
    ),
    bad=Example(argv=LLAMA31_8B_EAGLE3, draft=DRAFT, sglang_version="0.5.11"),
    good=Example(argv=LLAMA31_8B_EAGLE3, draft=DRAFT, sglang_version="0.5.12"),
    sources=(
        "sglang 0.4.4.post2: python/sglang/srt/models/llama_eagle3.py:105-129",
        "sglang 0.4.4.post2: python/sglang/srt/models/llama.py:523",
        "sglang 0.5.11: python/sglang/srt/models/llama_eagle3.py:138-143, 194-197",
        "sglang 0.5.12: python/sglang/srt/models/llama_eagle3.py:166-178, 188, 219-247",
        "sglang 0.5.16: python/sglang/srt/models/llama_eagle3.py:155-183 (no norm_before_fc)",
        "sglang 0.5.17: python/sglang/srt/models/llama_eagle3.py:160-174, 230-231",
        "sglang 0.5.12.post1: python/sglang/srt/models/kimi_k25_eagle3.py:179-263, 444",
        "sglang 0.5.13: python/sglang/srt/models/kimi_k25_eagle3.py:216-243, 274-298",
    ),
    sglang_versions=">=0.4.4.post2,<0.5.17",
    log_signatures=(
        r"Parameter model\.(fc_norm|aux_norm_\w+|input_norm)\S* not found in params_dict",
        r"Eagle3 MLA: skipping unexpected weight \S*(fc_norm|aux_norm_)",
    ),
)
