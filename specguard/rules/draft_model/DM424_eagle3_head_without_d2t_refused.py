"""DM424 eagle3-head-without-d2t-refused."""

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
from specguard.rules.examples import LLAMA31_8B_EAGLE3

EAGLE3_HEAD = "LlamaForCausalLMEagle3"


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if ctx.algorithm != "EAGLE3" or draft is None or draft.architecture != EAGLE3_HEAD:
        return
    if draft.weights is None or draft.weights.d2t_shape is not None:
        return  # the headers were not read, or the head has its d2t table
    yield RULE.finding(
        f"the EAGLE3 head's weights hold no d2t tensor (a full-vocabulary head): SGLang {ctx.version}'s head sets "
        "hot_token_id only while loading a d2t weight, and the EAGLE worker reads it for every EAGLE3 draft, so "
        "the server fails after loading the draft with \"AttributeError: 'LlamaForCausalLMEagle3' object has no "
        "attribute 'hot_token_id'\". Use SGLang 0.4.9 or later, or a head exported with its d2t table",
        flags=("--speculative-draft-model-path",),
    )


NO_D2T_HEAD = {
    "architectures": (EAGLE3_HEAD,),
    "weights": {
        "source": "example",
        "tensor_count": 11,
        "lm_head_shape": (128256, 4096),
    },
}

RULE = Rule(
    check=check,
    code="DM424",
    category=Category.START,
    name="eagle3-head-without-d2t-refused",
    summary="An EAGLE3 head without a d2t tensor fails at draft worker start before 0.4.9",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="`--speculative-algorithm EAGLE3` with a `LlamaForCausalLMEagle3` draft whose safetensors headers "
        "(read with the weights) hold no `d2t` tensor, SGLang 0.4.4.post2 (the first with EAGLE3) to 0.4.8.post1.",
        why="The head assigns `self.hot_token_id` only in `load_weights` when a `d2t` weight arrives (0.4.4.post2 "
        "models/llama_eagle3.py:180-184; 0.4.8.post1 :183-187) and `get_hot_token_id` returns it (0.4.4.post2 "
        ":192-193; 0.4.8.post1 :195-196), while `EAGLEWorker.__init__` calls "
        "`get_hot_token_id().to(...)` for every EAGLE3 draft (0.4.4.post2 speculative/eagle_worker.py:122; "
        "0.4.8.post1 :143), so a head without `d2t` raises AttributeError. 0.4.9 sets `hot_token_id = None` in "
        "the head's `__init__` (llama_eagle3.py:200) and the worker reads it only when set (eagle_worker.py:143). A "
        "reduced-vocabulary head without `d2t` is also DM102's (wrong tokens on later releases).",
        fix="Upgrade to SGLang 0.4.9 or later, or export the head with its `d2t` table.",
        fix_safety="No automatic fix: the release and the draft checkpoint are the user's.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3, draft=NO_D2T_HEAD, sglang_version="0.4.8.post1"
    ),
    good=Example(argv=LLAMA31_8B_EAGLE3, draft=NO_D2T_HEAD, sglang_version="0.4.9"),
    sources=(
        "sglang 0.4.4.post1: no models/llama_eagle3.py (EAGLE3 arrives in 0.4.4.post2)",
        "sglang 0.4.4.post2: python/sglang/srt/models/llama_eagle3.py:180-184,192-193",
        "sglang 0.4.4.post2: python/sglang/srt/speculative/eagle_worker.py:122",
        "sglang 0.4.8.post1: python/sglang/srt/models/llama_eagle3.py:183-187,195-196",
        "sglang 0.4.8.post1: python/sglang/srt/speculative/eagle_worker.py:143",
        "sglang 0.4.9: python/sglang/srt/models/llama_eagle3.py:200",
        "sglang 0.4.9: python/sglang/srt/speculative/eagle_worker.py:143",
    ),
    sglang_versions=">=0.4.4.post2,<=0.4.8.post1",
    dialects=SGLANG_DIALECTS,
    log_signatures=(
        r"'LlamaForCausalLMEagle3' object has no attribute 'hot_token_id'",
    ),
)
