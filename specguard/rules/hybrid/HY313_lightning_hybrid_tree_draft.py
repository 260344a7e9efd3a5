"""HY313 lightning-hybrid-tree-draft."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS, effective_topk
from specguard.rules.base import (
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import LIGHTNING_TREE_DRAFT_REFUSED

# The config class whose targets run the lightning linear-attention backend: BailingHybridConfig
# (0.5.9 configs/bailing_hybrid.py:34; ModelRunner.hybrid_lightning_config, 0.5.13 model_runner.py:2150-2154).
LIGHTNING_MODEL_TYPE = "bailing_hybrid"


def check(ctx: CheckContext) -> Iterator[Finding]:
    if (
        ctx.algorithm not in EAGLE_WORKER_ALGORITHMS
        or ctx.target is None
        or ctx.target.model_type != LIGHTNING_MODEL_TYPE
    ):
        return
    topk = effective_topk(ctx)
    if topk is None or topk <= 1:
        return
    steps = ctx.resolution.num_steps or ctx.spec.get("speculative_num_steps")
    chain = {
        "speculative_eagle_topk": 1,
        **({"speculative_num_draft_tokens": steps + 1} if steps else {}),
    }
    fix = set_flags("draft a chain (topk 1)", Applicability.UNSAFE, **chain)
    topk_flag = ctx.flag("--speculative-eagle-topk")
    if LIGHTNING_TREE_DRAFT_REFUSED.present_in(ctx.version):
        yield RULE.finding(
            f"{topk_flag} {topk} on a bailing_hybrid target in SGLang {ctx.version}: its lightning (seg_la) "
            'linear-attention backend raises "NotImplementedError: Lightning (seg_la) linear-attention backend does '
            f'not support speculative decoding with topk > 1" when the target model is set up at start. Use {topk_flag} 1',
            flags=("--speculative-eagle-topk",),
            fix=fix,
        )
        return
    yield RULE.finding(
        f"{topk_flag} {topk} on a bailing_hybrid target in SGLang {ctx.version}: the lightning linear-attention "
        "backend verifies the draft tree as a chain (each token's recurrent state follows the token before it, not its "
        f"parent), so verify judges drafts in the wrong context and the output goes wrong. Use {topk_flag} 1 "
        "(SGLang 0.5.13 refuses a tree here)",
        flags=("--speculative-eagle-topk",),
        fix=fix,
        severity=Severity.WARNING,
    )


BAILING_HYBRID_MTP_TREE = (
    "--model-path",
    "/ckpt/bailing-v2.5-hybrid",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "2",
    "--speculative-num-draft-tokens",
    "6",
)
BAILING_HYBRID_FACTS = {
    "architectures": ("BailingMoeV2_5ForCausalLM",),
    "model_type": "bailing_hybrid",
    "num_nextn_predict_layers": 1,
}

RULE = Rule(
    check=check,
    code="HY313",
    category=Category.START,
    name="lightning-hybrid-tree-draft",
    summary="A bailing_hybrid (lightning linear attention) target with an EAGLE tree draft: wrong output to 0.5.12.post1, refused 0.5.13 to 0.5.18",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.9,<=0.5.18",
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN, MTP) or STANDALONE with a topk above 1 on a target whose config.json `model_type` "
        "is `bailing_hybrid` (BailingMoeV2_5ForCausalLM), SGLang 0.5.9 (where the model arrives) to 0.5.18.",
        why="Such a target runs the lightning linear-attention backend (0.5.13 attention_registry.py:303-304), whose "
        "default seg_la kernel has no parent-index plumbing: target verify runs the draft tokens as a chain "
        "(0.5.9 layers/attention/hybrid_linear_attn_backend.py:1441-1465; 0.5.12.post1 "
        "layers/attention/linear/lightning_backend.py:306-330), so with a tree each token's state follows a sibling "
        "and the committed state and verify logits are wrong (a warning, up to 0.5.12.post1). From 0.5.13 the "
        "backend's constructor raises `NotImplementedError(\"Lightning (seg_la) linear-attention backend does not "
        "support speculative decoding with topk > 1 (got topk=...); seg_la verifies a draft tree as a chain. Use "
        '--speculative-eagle-topk 1.")` (0.5.13 lightning_backend.py:44-50; 0.5.18 :48-54), reading the resolved '
        "topk (0.5.13 hybrid_linear_attn_backend.py:136) when the target model runner starts (an error). From 0.5.19 "
        "a bailing_hybrid config that has `short_conv_kernel_size` runs KDA instead (configs/bailing_hybrid.py:150, "
        "configs/hybrid_arch.py:41-44), a config.json key specguard does not read, so the rule stops at 0.5.18.",
        fix="Draft a chain: `--speculative-eagle-topk 1` (draft tokens = steps + 1).",
        fix_safety="Unsafe: a chain drafts fewer candidates, which changes the acceptance rate.",
    ),
    bad=Example(
        argv=BAILING_HYBRID_MTP_TREE,
        target=BAILING_HYBRID_FACTS,
        gpu="H200",
        sglang_version="0.5.13",
    ),
    good=Example(
        argv=(
            *BAILING_HYBRID_MTP_TREE[:6],
            "--speculative-eagle-topk",
            "1",
            "--speculative-num-draft-tokens",
            "4",
        ),
        target=BAILING_HYBRID_FACTS,
        gpu="H200",
        sglang_version="0.5.13",
    ),
    sources=(
        "sglang 0.5.8.post1: python/sglang/srt (no bailing_hybrid config, no lightning backend)",
        "sglang 0.5.9: python/sglang/srt/configs/bailing_hybrid.py:34; layers/attention/hybrid_linear_attn_backend.py:1441-1465",
        "sglang 0.5.12.post1: python/sglang/srt/layers/attention/linear/lightning_backend.py:306-330",
        (
            "sglang 0.5.13: python/sglang/srt/layers/attention/linear/lightning_backend.py:44-50; attention_registry.py:303-304; "
            "hybrid_linear_attn_backend.py:136; model_executor/model_runner.py:2150-2154"
        ),
        "sglang 0.5.18: python/sglang/srt/layers/attention/linear/lightning_backend.py:48-54; configs/hybrid_arch.py:41-45",
        "sglang 0.5.19: python/sglang/srt/configs/bailing_hybrid.py:150; configs/hybrid_arch.py:41-44 (use_kda targets leave lightning)",
    ),
    log_signatures=(
        r"Lightning \(seg_la\) linear-attention backend does not support speculative decoding with topk > 1",
    ),
)
