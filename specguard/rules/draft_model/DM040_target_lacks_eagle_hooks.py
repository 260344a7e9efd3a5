"""DM040 target-lacks-eagle-hooks."""

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
from specguard.sglang_facts.algorithms import EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.changes import (
    EAGLE3_CAPTURE,
    EAGLE_HOOKS,
    INHERITED_NO_OP_CAPTURE,
    NO_EAGLE3_CAPTURE,
    NO_EAGLE_HOOKS,
)
from specguard.sglang_facts.releases import NEWEST_KNOWN_SGLANG

# The releases are tables in sglang_facts.changes (EAGLE_HOOKS, EAGLE3_CAPTURE, INHERITED_NO_OP_CAPTURE,
# NO_EAGLE_HOOKS, NO_EAGLE3_CAPTURE), with what was read in which wheel.


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_HEAD_ALGORITHMS or ctx.target is None:
        return
    arch = ctx.target.architecture
    algo_flag = ctx.flag("--speculative-algorithm")
    if arch in NO_EAGLE_HOOKS:
        yield RULE.finding(
            f"SGLang's {arch} has no get_embed_and_head() in any release up to {NEWEST_KNOWN_SGLANG}, and the "
            f"{ctx.spec.get('speculative_algorithm')} worker calls it on the target: the server dies with an "
            f"AttributeError after the target's weights have loaded. Drop {algo_flag} (NGRAM needs no hooks)",
            flags=("--speculative-algorithm",),
        )
        return
    hooks = EAGLE_HOOKS.get(arch or "")
    has_embed_and_head = hooks is None or hooks.present_in(ctx.version)
    capture_gone = NO_EAGLE3_CAPTURE.get(arch or "")
    if ctx.algorithm == "EAGLE3" and capture_gone is not None and capture_gone.present_in(ctx.version):
        if has_embed_and_head or hooks is None:
            other = "use EAGLE with an EAGLE-1 head"
        else:
            other = f"use EAGLE with an EAGLE-1 head from SGLang {hooks.first_release}, or NGRAM"
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version}'s {arch} has no working set_eagle3_layers_to_capture(), nor does any "
            f"release up to {NEWEST_KNOWN_SGLANG}: the target returns no auxiliary hidden states, and the server dies "
            f"after the target's weights have loaded (an AttributeError, or a ValueError saying it 'does not implement "
            f"set_eagle3_layers_to_capture'). EAGLE3 cannot run on "
            f"this target; {other}",
            flags=("--speculative-algorithm",),
        )
        return
    capture = EAGLE3_CAPTURE.get(arch or "")
    if ctx.algorithm == "EAGLE3" and capture is not None and not capture.present_in(ctx.version):
        inherited = INHERITED_NO_OP_CAPTURE.get(arch or "")
        if inherited is None or not inherited.present_in(ctx.version):
            what = "has no set_eagle3_layers_to_capture(): the server dies with an AttributeError"
        else:
            origin = "inherits Qwen3-VL's" if (arch or "").startswith("Qwen3_5") else "has a"
            what = (f"{origin} set_eagle3_layers_to_capture(), which marks no decoder layer, so the "
                    "target returns no auxiliary hidden states and the EAGLE3 head fails")
        # A class listed in both tables runs EAGLE3 only once it has both hooks.
        runs_from = capture if hooks is None or hooks.release <= capture.release else hooks
        other = ("use EAGLE with an EAGLE-1 head (or the model's own MTP layers, where it has them)"
                 if has_embed_and_head else f"drop {algo_flag} (NGRAM needs no hooks)")
        yield RULE.finding(
            f"SGLang {ctx.env.sglang_version}'s {arch} {what} after the target's weights have loaded. EAGLE3 "
            f"runs on this target from SGLang {runs_from.first_release}; upgrade, or {other}",
            flags=("--speculative-algorithm",),
        )
        return
    if hooks is None or has_embed_and_head:
        return
    # Without a row of its own, the class's EAGLE3 hook arrived with get_embed_and_head, and the EAGLE3
    # model runner calls it first, while the target loads.
    missing = "set_eagle3_layers_to_capture()" if ctx.algorithm == "EAGLE3" and capture is None else "get_embed_and_head()"
    if capture_gone is not None:  # EAGLE3 breaks again (or never works) on this class: promise EAGLE only
        runs = "EAGLE runs"
    elif capture is None:
        runs = "EAGLE and EAGLE3 run"
    else:
        runs = f"{ctx.spec.get('speculative_algorithm')} runs"
    yield RULE.finding(
        f"SGLang {ctx.env.sglang_version}'s {arch} has no {missing}, which the "
        f"{ctx.spec.get('speculative_algorithm')} worker calls on the target: the server dies with an "
        f"AttributeError after the target's weights have loaded. {runs} on this target from SGLang "
        f"{hooks.first_release}; upgrade, or drop {algo_flag} (NGRAM needs no hooks)",
        flags=("--speculative-algorithm",),
    )


RULE = Rule(
    dialects=SGLANG_DIALECTS,  # SGLang's own code path; sgl-jax has its own
    check=check,
    code="DM040",
    category=Category.START,
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
        "Qwen3-VL's inherited one, which marks no Qwen3.5 layer (sglang#20104, #23569, #25408, #38307). Qwen3.5's "
        "text-only classes Qwen3_5ForCausalLM and Qwen3_5MoeForCausalLM (models/qwen3_5_text.py, registered from "
        "0.5.17) get `set_eagle3_layers_to_capture()` only in 0.5.22 (:130-139), which the EAGLE3 model runner "
        "calls unconditionally (0.5.21 model_runner_components/attention_backend_setup.py:54-55). "
        "Qwen2ForCausalLM (Qwen2/2.5, QwQ) has get_embed_and_head but gets EAGLE3 capture only in 0.5.2 "
        "(sglang#8434, #9216). Qwen3-MoE and Llama 4 got both hooks in 0.4.9, Gemma 4 in 0.5.12 (registered "
        "in 0.5.11 without them). Classes that had get_embed_and_head but got `set_eagle3_layers_to_capture()` "
        "later, so only EAGLE3 fails before: Qwen3ForCausalLM (0.4.9), Glm4MoeForCausalLM (0.5.5), "
        "LongcatFlashForCausalLM (0.5.6), Qwen3NextForCausalLM and the Bailing MoE classes (0.5.9; "
        "BailingMoeForCausalLM has no get_embed_and_head either before 0.5.3rc0). MiniMax-M2 "
        "got the EAGLE3 hook in 0.5.5.post1 but get_embed_and_head only in 0.5.5.post3. GLM-4 (Glm4ForCausalLM) "
        "gets get_embed_and_head in 0.5.4.post3, GLM-4V and GLM-4.5V in 0.5.2 (inherited from Qwen2.5-VL), the "
        "LLaVA classes in 0.5.11 (llava.py:456-460), Nemotron-H Nano VL in 0.5.20. None of these has a working "
        "EAGLE3 capture in any release read (to the newest): GLM-4 and LLaVA never define it, GLM-4V's inherited "
        "one (0.5.2-0.5.4.post1) unpacks aux states its Glm4Model never returns, and from 0.5.4.post3 GLM-4V/4.5V "
        "are plain modules without it; 0.5.23 refuses such a target with `ValueError: Model ... does not implement "
        "set_eagle3_layers_to_capture, which EAGLE3 aux hidden-state capture requires.` "
        "(model_runner_components/attention_backend_setup.py:55-60), earlier releases with `AttributeError: ... "
        "object has no attribute 'set_eagle3_layers_to_capture'`. Qwen2-MoE (Qwen2MoeForCausalLM) has no "
        "get_embed_and_head in any release (0.4.0 to the newest), so EAGLE and EAGLE3 both end in `AttributeError: "
        "'Qwen2MoeForCausalLM' object has no attribute 'get_embed_and_head'`. MiniMax-M3 (0.5.16+): the text class "
        "MiniMaxM3SparseForCausalLM has both hooks from 0.5.16, but before 0.5.18 its capture sets only "
        "`layers_to_capture` while the forward reads each layer's `_is_layer_to_capture` (0.5.17 minimax_m3.py:1401, "
        ":1511-1524), so EAGLE3 unpacks a plain tensor; the VL class MiniMaxM3SparseForConditionalGeneration has "
        "neither hook before 0.5.18 (minimax_m3_vl.py:203-231). Other architectures are not judged.",
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
        "sglang 0.5.17 / 0.5.21: python/sglang/srt/models/qwen3_5_text.py:40-208 / :40-257 (no set_eagle3_layers_to_capture)",
        "sglang 0.5.22: python/sglang/srt/models/qwen3_5_text.py:130-139 (Qwen3_5ForCausalLM.set_eagle3_layers_to_capture)",
        "sglang 0.5.21: python/sglang/srt/model_executor/model_runner_components/attention_backend_setup.py:54-55",
        "sglang 0.4.8.post1 / 0.4.9: python/sglang/srt/models/qwen3_moe.py, mllama4.py (neither hook / :756-759, :229-233)",
        "sglang 0.4.8.post1 / 0.4.9: python/sglang/srt/models/qwen3.py (get_embed_and_head :393 only / set_eagle3_layers_to_capture :461)",
        "sglang 0.5.11 / 0.5.12: python/sglang/srt/models/gemma4_causal.py, gemma4_mm.py (neither hook / :1122-1127, :950-955)",
        "sglang 0.5.5 / 0.5.5.post1 / 0.5.5.post2 / 0.5.5.post3: python/sglang/srt/models/minimax_m2.py (neither / set_eagle3_layers_to_capture :809 / get_embed_and_head :824)",
        "sglang 0.5.4.post3 / 0.5.5: python/sglang/srt/models/glm4_moe.py (get_embed_and_head :1011 only / set_eagle3_layers_to_capture :1165)",
        "sglang 0.5.5.post3 / 0.5.6: python/sglang/srt/models/longcat_flash.py (get_embed_and_head :1006 only / set_eagle3_layers_to_capture :1039)",
        "sglang 0.5.8.post1 / 0.5.9: python/sglang/srt/models/qwen3_next.py (get_embed_and_head :935 only / set_eagle3_layers_to_capture :1139)",
        "sglang 0.5.8.post1 / 0.5.9: python/sglang/srt/models/bailing_moe.py (get_embed_and_head :837 only / set_eagle3_layers_to_capture :1034)",
        "sglang 0.5.2 / 0.5.3rc0: python/sglang/srt/models/bailing_moe.py (BailingMoeForCausalLM :336 has neither hook / get_embed_and_head :816)",
        "sglang 0.5.4.post1 / 0.5.4.post3: python/sglang/srt/models/glm4.py (no get_embed_and_head / :617), glm4v.py (:464 subclasses Qwen2_5_VLForConditionalGeneration / :546 nn.Module, get_embed_and_head :769)",
        "sglang 0.5.2rc2 / 0.5.2: python/sglang/srt/models/qwen2_5_vl.py (neither hook / :654-657, inherited by glm4v.py:463)",
        "sglang 0.5.4.post1: python/sglang/srt/models/qwen2_5_vl.py:594-596 (forward unpacks aux states); glm4.py (no layers_to_capture)",
        "sglang 0.5.10.post1 / 0.5.11: python/sglang/srt/models/llava.py (no get_embed_and_head / :456-460)",
        "sglang 0.5.19 / 0.5.20: python/sglang/srt/models/nano_nemotron_vl.py (no get_embed_and_head / :188-189)",
        "sglang 0.4.0 to 0.5.23: python/sglang/srt/models/qwen2_moe.py (no get_embed_and_head), glm4.py, glm4v.py, glm4v_moe.py, llava.py, nano_nemotron_vl.py (no set_eagle3_layers_to_capture)",
        "sglang 0.5.23: python/sglang/srt/model_executor/model_runner_components/attention_backend_setup.py:55-60; speculative/pp_draft_embedding.py:95",
        "sglang 0.5.16 / 0.5.17 / 0.5.18: python/sglang/srt/models/minimax_m3.py:1491-1504 / :1511-1524 / :1631-1635 (capture marks layers from 0.5.18)",
        "sglang 0.5.17 / 0.5.18: python/sglang/srt/models/minimax_m3_vl.py:57 (neither hook) / :203-231",
        ("sglang 0.5.10 / 0.5.11 / 0.5.21 / 0.5.22: python/sglang/srt/models/qwen3_5.py (no set_eagle3_layers_to_capture "
        "until 0.5.22 :1837-1840), models/qwen3_vl.py (:1398-1409 from 0.5.11; delegates at :1793-1794 in 0.5.22)"),
    ),
    log_signatures=(
        # The model classes unpack (hidden_states, aux_hidden_states) once EAGLE3 capture is set,
        # and a class whose inner model was never told which layers to capture returns a plain
        # tensor: the traceback prints this source line (0.5.19 qwen3_vl.py:1519).
        r"hidden_states, aux_hidden_states = hidden_states",
        r"object has no attribute 'get_embed_and_head'",
        r"object has no attribute 'set_eagle3_layers_to_capture'",
        r"does not implement set_eagle3_layers_to_capture",
    ),
)
