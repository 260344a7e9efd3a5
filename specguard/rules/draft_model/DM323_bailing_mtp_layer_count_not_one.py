"""DM323 bailing-mtp-layer-count-not-one."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.draft_model._common import draft_config
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import BAILING_NEXTN_DRAFT


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS:
        return
    facts = draft_config(ctx)
    if facts is None:
        return
    rewrite = BAILING_NEXTN_DRAFT.get(facts.architecture or "")
    layers = facts.num_nextn_predict_layers
    # A config without the key raises too ("num_nextn_predict_layers is not in the config"), but
    # specguard cannot tell a missing key from an unread one, so it stays quiet then.
    if (
        rewrite is None
        or not rewrite.present_in(ctx.version)
        or layers is None
        or layers == 1
    ):
        return
    whose = "the target's" if facts is ctx.target else "the draft's"
    yield RULE.finding(
        f"{whose} config.json ({facts.architecture}) says num_nextn_predict_layers: {layers}; SGLang "
        f"{ctx.env.sglang_version} loads a Bailing checkpoint used as a draft as BailingMoeForCausalLMNextN, whose "
        "weight loading asserts exactly one NextN layer: the server dies with 'AssertionError: Only 1 nextn layer is "
        f"supported' after the target's weights have loaded. "
        + (
            "This checkpoint has no MTP layer to draft with; give an EAGLE head via "
            f"{ctx.flag('--speculative-draft-model-path')}, or use NGRAM"
            if layers == 0
            else "Use a checkpoint with one MTP layer, or NGRAM"
        ),
        flags=("--speculative-algorithm",)
        if facts is ctx.target
        else ("--speculative-draft-model-path",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own draft model loading
    check=check,
    code="DM323",
    category=Category.START,
    name="bailing-mtp-layer-count-not-one",
    summary="A Bailing (Ling) checkpoint drafting as its MTP layer must declare exactly one NextN layer",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE/NEXTN (or EAGLE3, STANDALONE) whose draft checkpoint is a Bailing MoE one (the target's own "
        "path, or a separate draft): `BailingMoeForCausalLM` or `BailingMoeV2ForCausalLM` from 0.5.3rc0, "
        "`BailingMoeV2_5ForCausalLM` from 0.5.9, `BailingMoeV3ForCausalLM` from 0.5.19, whose config.json sets "
        "`num_nextn_predict_layers` to anything but 1.",
        why="In draft mode `ModelConfig` rewrites these architectures to `BailingMoeForCausalLMNextN` (0.5.3rc0 "
        "configs/model_config.py:160-164; V2_5 added in 0.5.9 :308-313, V3 in 0.5.19 :730-736; 0.5.23 "
        ":1121-1127), whatever the algorithm. Its `load_weights(is_nextn=True)` runs the target class's loader "
        '(bailing_moe_nextn.py:244 in 0.5.9, :248-254 in 0.5.19), which raises `ValueError("num_nextn_predict_layers '
        'is not in the config")` when the key is missing and asserts `"Only 1 nextn layer is supported"` '
        "otherwise: bailing_moe.py:854-864 (0.5.3rc0) to :947-957 (0.5.23), bailing_moe_linear.py:1363-1373 (0.5.9) "
        "to :1384-1394 (0.5.23), bailing_moe_v3.py `resolve_nextn_layer_id` :246-251 (0.5.19) and :260-265 (0.5.23). "
        "0.5.2 has no Bailing NextN draft at all (DM040: BailingMoeForCausalLM lacks get_embed_and_head). A missing "
        "key fails too, but specguard cannot tell it from an unread config, so the rule stays quiet then.",
        fix="Use a Ling checkpoint that ships one MTP layer (`num_nextn_predict_layers: 1`), an EAGLE head as the "
        "draft, or NGRAM. No automatic fix.",
        fix_safety="No fix: the checkpoint is the user's choice.",
    ),
    bad=Example(
        argv=(
            "--model-path",
            "./ling-moe-checkpoint",
            "--speculative-algorithm",
            "NEXTN",
        ),
        target={
            "architectures": ("BailingMoeV2ForCausalLM",),
            "num_nextn_predict_layers": 0,
        },
        sglang_version="0.5.3rc0",
    ),
    good=Example(
        argv=(
            "--model-path",
            "./ling-moe-checkpoint",
            "--speculative-algorithm",
            "NEXTN",
        ),
        target={
            "architectures": ("BailingMoeV2ForCausalLM",),
            "num_nextn_predict_layers": 1,
        },
        sglang_version="0.5.3rc0",
    ),
    sources=(
        "sglang 0.5.2: python/sglang/srt/models/ (no bailing_moe_nextn.py; configs/model_config.py has no Bailing rewrite)",
        "sglang 0.5.3rc0: python/sglang/srt/configs/model_config.py:160-164; models/bailing_moe.py:854-864",
        "sglang 0.5.9: python/sglang/srt/configs/model_config.py:308-313; models/bailing_moe_linear.py:1363-1373; models/bailing_moe_nextn.py:216-244",
        "sglang 0.5.18 / 0.5.19: python/sglang/srt/configs/model_config.py (no BailingMoeV3ForCausalLM / :730-736); models/bailing_moe_v3.py:246-251",
        "sglang 0.5.23: python/sglang/srt/configs/model_config.py:1121-1127; models/bailing_moe.py:947-957; bailing_moe_linear.py:1384-1394; bailing_moe_v3.py:260-265",
    ),
    supersedes=(
        "DM006",
    ),  # DM006 warns that a 0-layer MTP checkpoint lacks weights; here it is an assert
    log_signatures=(
        r"Only 1 nextn layer is supported",
        r"num[_ ]nextn_predict_layers is not in the config",
    ),
)
