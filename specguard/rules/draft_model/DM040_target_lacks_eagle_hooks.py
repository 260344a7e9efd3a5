"""DM040 target-lacks-eagle-hooks."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs

# The first release whose model class for these target architectures has the two hooks the
# EAGLE worker calls on the target: ``get_embed_and_head()`` (every EAGLE/EAGLE3 draft worker,
# ``speculative/eagle_worker.py:158`` in 0.5.10) and ``set_eagle3_layers_to_capture()``
# (EAGLE3 only, ``model_executor/model_runner.py:668`` in 0.5.10). Read in the wheels:
# ``models/qwen3_vl.py`` has neither in 0.5.5, 0.5.9, 0.5.10 or 0.5.10.post1 and both from 0.5.11
# (lines 1395-1409, sgl-project/sglang#22230); ``Qwen3VLMoeForConditionalGeneration``
# (``models/qwen3_vl_moe.py:173``) subclasses it and inherits them. Architectures not listed here
# are not judged.
EAGLE_HOOKS_SINCE: dict[str, Version] = {
    "Qwen3VLForConditionalGeneration": Version("0.5.11"),
    "Qwen3VLMoeForConditionalGeneration": Version("0.5.11"),
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in ("EAGLE", "EAGLE3") or ctx.target is None:
        return
    arch = ctx.target.architecture
    since = EAGLE_HOOKS_SINCE.get(arch or "")
    if since is None or ctx.version >= since:
        return
    missing = "set_eagle3_layers_to_capture()" if ctx.algorithm == "EAGLE3" else "get_embed_and_head()"
    yield RULE.finding(
        f"SGLang {ctx.env.sglang_version}'s {arch} has no {missing}, which the "
        f"{ctx.spec.get('speculative_algorithm')} worker calls on the target: the server dies with an "
        f"AttributeError after the target's weights have loaded. EAGLE and EAGLE3 run on this target from "
        f"SGLang {since}; upgrade, or drop {ctx.flag('--speculative-algorithm')} (NGRAM needs no hooks)",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    check=check,
    code="DM040",
    name="target-lacks-eagle-hooks",
    summary="The target's model class in this release cannot drive an EAGLE or EAGLE3 draft",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="EAGLE and EAGLE3 call two methods on the target model: `get_embed_and_head()` (the draft "
        "shares the target's embedding and head) and, for EAGLE3, `set_eagle3_layers_to_capture()` (the "
        "target returns the aux hidden states the head reads). Fires when the target's architecture is one "
        "whose SGLang class lacks them in the release given.",
        why="SGLang checks nothing at argument time: the call fails with `AttributeError: "
        "'Qwen3VLMoeForConditionalGeneration' object has no attribute 'set_eagle3_layers_to_capture'` (or "
        "`get_embed_and_head`) once the target has loaded (sglang#17935, 0.5.7). Qwen3-VL (dense and MoE) "
        "gained both hooks in 0.5.11 (sglang#22230; absent in the 0.5.5, 0.5.9, 0.5.10 and 0.5.10.post1 "
        "wheels). Qwen2.5-VL has had them since sglang#8801 and is not flagged.",
        fix="Upgrade SGLang to the release given in the message, or serve without EAGLE (NGRAM). No "
        "automatic fix.",
        fix_safety="No fix: the release is the user's choice.",
    ),
    bad=Example(
        argv=("--model-path", "Qwen/Qwen3-VL-30B-A3B-Instruct", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "AngelSlim/Qwen3-VL-30B-A3B-Instruct_eagle3"),
        target={"architectures": ("Qwen3VLMoeForConditionalGeneration",)},
        sglang_version="0.5.7",
    ),
    good=Example(
        argv=("--model-path", "Qwen/Qwen3-VL-30B-A3B-Instruct", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "AngelSlim/Qwen3-VL-30B-A3B-Instruct_eagle3"),
        target={"architectures": ("Qwen3VLMoeForConditionalGeneration",)},
        sglang_version="0.5.11",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/17935",
        "https://github.com/sgl-project/sglang/pull/22230",
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_worker.py:158 (get_embed_and_head on the target)",
        "sglang 0.5.10: python/sglang/srt/model_executor/model_runner.py:667-670 (set_eagle3_layers_to_capture)",
        "sglang 0.5.10.post1: python/sglang/srt/models/qwen3_vl.py (no get_embed_and_head, no set_eagle3_layers_to_capture)",
        "sglang 0.5.11: python/sglang/srt/models/qwen3_vl.py:1395-1409; models/qwen3_vl_moe.py:173 (subclass)",
    ),
)
