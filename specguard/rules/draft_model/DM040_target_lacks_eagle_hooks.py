"""DM040 target-lacks-eagle-hooks."""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import Version

from specguard.models import Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

# The first release whose model class for these target architectures has the two hooks the
# EAGLE worker calls on the target: ``get_embed_and_head()`` (every EAGLE/EAGLE3 draft worker,
# unconditionally: ``speculative/eagle_worker.py:119`` in 0.4.6, :158 in 0.5.10) and
# ``set_eagle3_layers_to_capture()`` (EAGLE3 only, ``model_executor/model_runner.py:668`` in
# 0.5.10). Both arrive together in each of these classes, so one release per architecture.
# Read in the wheels (``models/<file>.py``, ``grep "def get_embed_and_head"``):
# - Qwen2.5-VL (``qwen2_5_vl.py``): absent in 0.4.6, 0.5.0rc1 and 0.5.1, present in 0.5.2 (:654-657,
#   sgl-project/sglang#8801). The 0.5.2 release candidates were not read, so they are not judged.
# - Qwen3-VL (``qwen3_vl.py``): absent in 0.5.5, 0.5.9, 0.5.10 and 0.5.10.post1, present in 0.5.11
#   (:1395-1409, sgl-project/sglang#22230); ``Qwen3VLMoeForConditionalGeneration``
#   (``qwen3_vl_moe.py:173``) subclasses it.
# - Gemma 3 (``gemma3_mm.py``, ``gemma3_causal.py``): absent from 0.4.6 to 0.5.11, present in 0.5.12
#   (gemma3_mm.py:485-497, gemma3_causal.py:897-925, sgl-project/sglang#23976).
# - Kimi K2.5 (``kimi_k25.py``, the vision-language wrapper around DeepseekV3ForCausalLM): absent in
#   0.5.9, present in 0.5.10rc0 (:841-850) and 0.5.10 (sgl-project/sglang#19689).
# Architectures not listed here are not judged.
EAGLE_HOOKS_SINCE: dict[str, Version] = {
    "Qwen2_5_VLForConditionalGeneration": Version("0.5.2rc0"),
    "Qwen3VLForConditionalGeneration": Version("0.5.11"),
    "Qwen3VLMoeForConditionalGeneration": Version("0.5.11"),
    "Gemma3ForConditionalGeneration": Version("0.5.12"),
    "Gemma3ForCausalLM": Version("0.5.12"),
    "KimiK25ForConditionalGeneration": Version("0.5.10rc0"),
}

# Classes that had ``get_embed_and_head()`` (so EAGLE and NEXTN run) long before a working
# ``set_eagle3_layers_to_capture()``: only EAGLE3 fails on them.
# - DeepSeek V2/V3 (``deepseek_v2.py``, DeepseekV3ForCausalLM subclasses DeepseekV2ForCausalLM):
#   get_embed_and_head from 0.4.5 (:1586) on; set_eagle3_layers_to_capture absent from 0.4.5 to
#   0.5.4.post1, present in 0.5.4.post3 (:3767) and 0.5.5 (:3822). 0.5.4.post2 was not read, so it is not judged.
# - Qwen3.5's VL wrappers subclass Qwen3VLForConditionalGeneration: before 0.5.11 neither has
#   set_eagle3_layers_to_capture (AttributeError); from 0.5.11 to 0.5.21 they inherit Qwen3-VL's, which
#   only assigns ``model.layers_to_capture`` while Qwen3.5's decoder collects aux states from layers
#   marked ``_is_layer_to_capture`` (set only for DFLASH), so EAGLE3 gets none and fails at start
#   (sgl-project/sglang#25408). 0.5.22 adds ``Qwen3_5ForCausalLM.set_eagle3_layers_to_capture``
#   (qwen3_5.py:1837-1840) and the wrapper delegates to it (qwen3_vl.py:1793-1794). Read in the
#   wheels 0.5.9 to 0.5.23 (``grep -n set_eagle3_layers_to_capture models/qwen3_5.py models/qwen3_vl.py``).
# - Qwen2ForCausalLM (Qwen2/2.5, QwQ): get_embed_and_head in every release read, set_eagle3_layers_to_capture
#   from 0.5.2 (qwen2.py:637; absent in 0.4.9, 0.5.0rc1 and 0.5.1; sgl-project/sglang#9216). The 0.5.2
#   release candidates were not read, so they are not judged.
EAGLE3_CAPTURE_SINCE: dict[str, Version] = {
    "DeepseekV2ForCausalLM": Version("0.5.4.post2"),
    "DeepseekV3ForCausalLM": Version("0.5.4.post2"),
    "Qwen3_5ForConditionalGeneration": Version("0.5.22"),
    "Qwen3_5MoeForConditionalGeneration": Version("0.5.22"),
    "Qwen2ForCausalLM": Version("0.5.2rc0"),
}
# From this release Qwen3.5's wrappers inherit a set_eagle3_layers_to_capture that marks no layer.
INHERITED_NO_OP_CAPTURE_SINCE: dict[str, Version] = {
    "Qwen3_5ForConditionalGeneration": Version("0.5.11"),
    "Qwen3_5MoeForConditionalGeneration": Version("0.5.11"),
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in ("EAGLE", "EAGLE3") or ctx.target is None:
        return
    arch = ctx.target.architecture
    capture_since = EAGLE3_CAPTURE_SINCE.get(arch or "")
    if ctx.algorithm == "EAGLE3" and capture_since is not None and ctx.version < capture_since:
        inherited_since = INHERITED_NO_OP_CAPTURE_SINCE.get(arch or "")
        if inherited_since is None or ctx.version < inherited_since:
            what = "has no set_eagle3_layers_to_capture(): the server dies with an AttributeError"
        else:
            what = ("inherits Qwen3-VL's set_eagle3_layers_to_capture(), which marks no decoder layer, so the "
                    "target returns no auxiliary hidden states and the EAGLE3 head fails")
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version}'s {arch} {what} after the target's weights have loaded. EAGLE3 "
            f"runs on this target from SGLang {capture_since}; upgrade, or use EAGLE with an EAGLE-1 head "
            "(or the model's own MTP layers, where it has them)",
            flags=("--speculative-algorithm",),
        )
        return
    since = EAGLE_HOOKS_SINCE.get(arch or "")
    if since is None or ctx.version >= since:
        return
    missing = "set_eagle3_layers_to_capture()" if ctx.algorithm == "EAGLE3" else "get_embed_and_head()"
    algo_flag = ctx.flag("--speculative-algorithm")
    next_step = (
        f"EAGLE3 runs on this target from SGLang {since}; EAGLE and NEXTN run already (a NextN/MTP draft is "
        f"{algo_flag} NEXTN)"
        if arch in EAGLE3_CAPTURE_SINCE
        else f"EAGLE and EAGLE3 run on this target from SGLang {since}; upgrade, or drop {algo_flag} (NGRAM needs no hooks)"
    )
    yield RULE.finding(
        f"SGLang {ctx.env.sglang_version}'s {arch} has no {missing}, which the "
        f"{ctx.spec.get('speculative_algorithm')} worker calls on the target: the server dies with an "
        f"AttributeError after the target's weights have loaded. {next_step}",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="DM040",
    name="target-lacks-eagle-hooks",
    summary="The target's model class in this release cannot drive an EAGLE or EAGLE3 draft",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="EAGLE and EAGLE3 call two methods on the target model: `get_embed_and_head()` (the draft "
        "shares the target's embedding and head) and, for EAGLE3, `set_eagle3_layers_to_capture()` (the "
        "target returns the aux hidden states the head reads). Fires when the target's architecture is one "
        "whose SGLang class lacks them in the release given.",
        why="SGLang checks nothing at argument time: the call fails with `AttributeError: "
        "'Qwen3VLMoeForConditionalGeneration' object has no attribute 'set_eagle3_layers_to_capture'` (or "
        "`get_embed_and_head`) once the target has loaded (sglang#17935, 0.5.7). The hooks arrived per model "
        "class: Qwen2.5-VL in 0.5.2 (sglang#8801; absent in 0.5.1), Qwen3-VL dense and MoE in 0.5.11 "
        "(sglang#22230; absent in 0.5.5 to 0.5.10.post1), Gemma 3 text and multimodal in 0.5.12 "
        "(sglang#23976; absent in 0.4.6 to 0.5.11; a Gemma 3 EAGLE launch failing only in EAGLE mode is "
        "sglang#8186), Kimi K2.5 in 0.5.10rc0 (sglang#19689; absent in 0.5.9). DeepSeek V2/V3 had `get_embed_and_head()` "
        "from 0.4.5 but `set_eagle3_layers_to_capture()` only from 0.5.4.post3, so EAGLE3 alone fails there "
        "(sglang#5513: DeepSeek-R1 with EAGLE3 and its NextN draft on 0.4.5). Qwen3.5's VL wrappers have "
        "get_embed_and_head (MTP) but no working EAGLE3 capture before 0.5.22: no method before 0.5.11, then "
        "Qwen3-VL's inherited one, which marks no Qwen3.5 layer (sglang#20104, #23569, #25408, #38307). "
        "Qwen2ForCausalLM (Qwen2/2.5, QwQ) has get_embed_and_head but gets EAGLE3 capture only in 0.5.2 "
        "(sglang#8434, #9216). Other architectures are not judged.",
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
        "https://github.com/sgl-project/sglang/pull/8801",
        "https://github.com/sgl-project/sglang/pull/23976",
        "sglang 0.5.10: python/sglang/srt/speculative/eagle_worker.py:158 (get_embed_and_head on the target)",
        "sglang 0.5.10: python/sglang/srt/model_executor/model_runner.py:667-670 (set_eagle3_layers_to_capture)",
        "sglang 0.5.10.post1: python/sglang/srt/models/qwen3_vl.py (no get_embed_and_head, no set_eagle3_layers_to_capture)",
        "sglang 0.5.11: python/sglang/srt/models/qwen3_vl.py:1395-1409; models/qwen3_vl_moe.py:173 (subclass)",
        "sglang 0.5.1 / 0.5.2: python/sglang/srt/models/qwen2_5_vl.py (absent / :654-657)",
        "sglang 0.5.11 / 0.5.12: python/sglang/srt/models/gemma3_mm.py, gemma3_causal.py (absent / gemma3_mm.py:485-497)",
        "sglang 0.5.9 / 0.5.10: python/sglang/srt/models/kimi_k25.py (absent / present, sgl-project/sglang#19689)",
        "https://github.com/sgl-project/sglang/issues/5513",
        "sglang 0.4.5: python/sglang/srt/model_executor/model_runner.py:222-223 (EAGLE3 calls set_eagle3_layers_to_capture)",
        "sglang 0.5.4.post1 / 0.5.4.post3: python/sglang/srt/models/deepseek_v2.py (absent / :3767)",
        "https://github.com/sgl-project/sglang/pull/20104 (Qwen3.5 supports MTP/NEXTN but not EAGLE3)",
        "https://github.com/sgl-project/sglang/pull/25408 (Qwen3.5 EAGLE3 capture marks no layer; fails at start)",
        "https://github.com/sgl-project/sglang/pull/38307 (Qwen3.5 EAGLE3: 'too many values to unpack' in qwen3_vl.py forward at graph capture)",
        "sglang 0.5.1 / 0.5.2: python/sglang/srt/models/qwen2.py (no set_eagle3_layers_to_capture / :637; sgl-project/sglang#9216)",
        ("sglang 0.5.10 / 0.5.11 / 0.5.21 / 0.5.22: python/sglang/srt/models/qwen3_5.py (no set_eagle3_layers_to_capture "
        "until 0.5.22 :1837-1840), models/qwen3_vl.py (:1398-1409 from 0.5.11; delegates at :1793-1794 in 0.5.22)"),
    ),
)
