"""Which sgl-jax build a launch runs, and the changes of sgl-jax that specguard's rules depend on.

sgl-jax (github.com/sgl-project/sglang-jax) publishes few versions: PyPI holds only ``sglang-jax``
0.0.1 and 0.0.1.post1 (both built 2025-08-25, before speculative decoding arrived), and the
repository's tags are release candidates. Users run a checkout, so a build is known by its date:
a tag, a PyPI version or a commit that specguard has dated (below), or the commit date itself
(``git -C sglang-jax log -1 --format=%cs``). Every date was read from the repository's history
(``git log --format='%h %cs %s'``) or from the wheel's file dates.
"""

from __future__ import annotations

from datetime import date

from specguard.records import Record
from specguard.refs import same_commit


class JaxChange(Record, kw_only=False):
    """The first sgl-jax build (by commit date) with a behaviour, and the commit it arrived in."""

    first: date
    ref: str  # "sglang-jax #1293 (b735f16e)"
    source: str  # the file that shows it

    def present_in(self, built: date) -> bool:
        return built >= self.first


SPECULATIVE_DECODING = JaxChange(
    date(2025, 11, 19), "sglang-jax #378 (f671c326)",
    "python/sgl_jax/srt/server_args.py: --speculative-algorithm choices EAGLE, EAGLE3, NEXTN, STANDALONE",
)
NEXTN_RUNS = JaxChange(
    date(2026, 5, 28), "sglang-jax #1192 (10fe9e8b)",
    "python/sgl_jax/srt/speculative/spec_info.py:85-95: SpeculativeAlgorithm.from_string maps NEXTN; from #378 "
    "(f671c326 spec_info.py:30-39) to 10fe9e8b^ it had no NEXTN key, though --speculative-algorithm listed NEXTN",
)
OVERLAP_RELAXED = JaxChange(
    date(2026, 6, 24), "sglang-jax #1293 (b735f16e)",
    "python/sgl_jax/srt/server_args.py: before it, any --speculative-algorithm without "
    "--disable-overlap-schedule raised 'Speculative decoding does not support overlap scheduler' (b735f16e^ :1513-1517)",
)
EAGLE3_OVERLAP = JaxChange(
    date(2026, 8, 21), "sglang-jax #1534 (0348ee13)",
    "python/sgl_jax/srt/server_args.py:1873-1878: EAGLE3 on fa with topk 1 and draft tokens = steps + 1 joins "
    "the overlap scheduler's list (0348ee13^ :1867-1880 allowed only NEXTN chains and DFLASH)",
)
PATHWAYS_PD = JaxChange(
    date(2026, 7, 6), "sglang-jax #1428 (94ce2692)",
    "python/sgl_jax/srt/disaggregation/pathways_scheduler.py:67 (cddbf6f1 :98): --pd-disaggregation arrives, and "
    "PathwaysPDSchedulerMixin._pd_init_workers asserts no speculative algorithm",
)
RECURRENT_EXTRA_BUFFER = JaxChange(
    date(2026, 7, 9), "sglang-jax #1408 (8340cd76)",
    "python/sgl_jax/srt/server_args.py (cddbf6f1 :447-452): --enable-recurrent-extra-buffer arrives, and "
    "ServerArgs.__post_init__ raises for it with any --speculative-algorithm",
)
DFLASH = JaxChange(
    date(2026, 7, 28), "sglang-jax #1467 (4406938a)",
    "python/sgl_jax/srt/server_args.py:1433: DFLASH joins the --speculative-algorithm choices",
)

DRAFT_SAMPLER_RNG_MISSING = JaxChange(
    date(2026, 4, 23), "sglang-jax #940 (bc770647)",
    "python/sgl_jax/srt/model_executor/model_runner.py:153-155: _sampler_base_rng is set only for a runner that is "
    "not a draft worker, and initialize_jit reads it (:228); EAGLEWorker, a draft-worker ModelWorker, calls "
    "self.model_runner.initialize_jit() (eagle_worker.py:107), so every EAGLE/EAGLE3 launch raises AttributeError",
)
DRAFT_SAMPLER_RNG_FIXED = JaxChange(
    date(2026, 5, 14), "sglang-jax #1063 (8c785960)",
    "python/sgl_jax/srt/model_executor/model_runner.py:150-151: _sampler_base_rng is set for every runner, the "
    "draft's included (8c785960^ :150-152 still set it only for the target)",
)
MULTI_LAYER_MTP = JaxChange(
    date(2026, 5, 28), "sglang-jax #1192 (10fe9e8b)",
    "python/sgl_jax/srt/managers/scheduler.py:329-340: a target whose num_nextn_predict_layers is above 1 gets "
    "MultiLayerEAGLEWorker, and multi_layer_draft_worker.py:78-85 asserts --speculative-num-steps equals it",
)
MULTI_LAYER_TOPK1 = JaxChange(
    date(2026, 6, 24), "sglang-jax #1293 (b735f16e)",
    "python/sgl_jax/srt/speculative/multi_layer_draft_worker.py:78-80: 'MultiLayerDraftWorker fused decode "
    "requires topk=1' (cddbf6f1 :78-80)",
)
SIMULATED_ACCEPTANCE_CHECKED = JaxChange(
    date(2026, 7, 31), "sglang-jax #1485 (d8b61193)",
    "python/sgl_jax/srt/speculative/spec_utils.py:21-48: SIMULATE_ACC_LEN is parsed at import (a non-float raises, "
    "<= 0 is off), SIMULATE_ACC_METHOD and the new SIMULATE_ACC_TOKEN_MODE are checked; before it "
    "(f671c326 eagle_util.py:48-49, :905-972) any non-empty SIMULATE_ACC_LEN simulated acceptance at verify",
)
AOT_DISPATCH = JaxChange(
    date(2026, 7, 28), "sglang-jax #1478 (393453d7)",
    "python/sgl_jax/srt/model_executor/aot_dispatch.py:41-55: SGLANG_JAX_AOT_DISPATCH=auto|1 asks for AOT dispatch, and "
    "model_runner.py:286-292 (cddbf6f1 :313-319) drops it with a warning when a speculative algorithm is set",
)


class JaxTargetClass(Record, kw_only=False):
    """A target model class sgl-jax registers (models/*.py EntryClass), and which of the methods its
    speculative path calls on the target the class has."""

    name: str  # as config.json's architectures names it
    registered: date  # the first build specguard read it registered at
    embed_and_head: date | None  # from which build it has get_embed_and_head (None: at no build up to HEAD)
    layer_capture: bool  # set_eagle3_layers_to_capture, the same at every build read (f671c326 .. cddbf6f1)
    source: str


# The classes whose hooks were read at f671c326, a5163819, 10fe9e8b, 4406938a and cddbf6f1 (`git grep 'def
# get_embed_and_head\|def set_eagle3_layers_to_capture' <commit> -- python/sgl_jax/srt/models`); subclasses
# inherit them (Phi3/InternLM3 from LlamaForCausalLM, MiMo from Qwen2ForCausalLM, MiMo-V2 from MiMo-V2-Flash).
# A class not listed is not judged.
_BEFORE = SPECULATIVE_DECODING.first  # registered at f671c326, the first speculative build
_QWEN2_EMBED = date(2026, 1, 17)  # sglang-jax a5163819: Qwen2ForCausalLM.get_embed_and_head
TARGET_CLASSES: tuple[JaxTargetClass, ...] = (
    JaxTargetClass("LlamaForCausalLM", _BEFORE, _BEFORE, True, "models/llama.py (f671c326 :549, :561)"),
    JaxTargetClass("Phi3ForCausalLM", _BEFORE, _BEFORE, True, "models/llama.py:625 (f671c326), a LlamaForCausalLM"),
    JaxTargetClass("InternLM3ForCausalLM", _BEFORE, _BEFORE, True, "models/llama.py:629 (f671c326), a LlamaForCausalLM"),
    JaxTargetClass("Qwen3ForCausalLM", _BEFORE, _BEFORE, True, "models/qwen3.py (f671c326 :531, :554)"),
    JaxTargetClass("QWenLMHeadModel", _BEFORE, _BEFORE, False, "models/qwen.py (f671c326 :426)"),
    JaxTargetClass("Qwen3MoeForCausalLM", _BEFORE, _BEFORE, False, "models/qwen3_moe.py (f671c326 :544)"),
    JaxTargetClass("Qwen2ForCausalLM", _BEFORE, _QWEN2_EMBED, False, "models/qwen2.py (a5163819 :459; none at f671c326)"),
    JaxTargetClass("MiMoForCausalLM", _QWEN2_EMBED, _QWEN2_EMBED, False,
                   "models/mimo.py:24 (a5163819, where it arrives), a Qwen2ForCausalLM"),
    JaxTargetClass("MiMoV2FlashForCausalLM", date(2026, 4, 20), MULTI_LAYER_MTP.first, False,
                   "models/mimo_v2_flash.py (arrives 1edfab11; get_embed_and_head from 10fe9e8b :832)"),
    JaxTargetClass("MiMoV2ForCausalLM", date(2026, 4, 28), MULTI_LAYER_MTP.first, False,
                   "models/mimo_v2_pro.py:22 (b787fdef, #986), a MiMoV2FlashForCausalLM"),
    JaxTargetClass("Qwen2MoeForCausalLM", _BEFORE, None, False, "models/qwen2_moe.py (f671c326 .. cddbf6f1)"),
    JaxTargetClass("Gemma2ForCausalLM", _BEFORE, None, False, "models/gemma2.py (f671c326 .. cddbf6f1)"),
    JaxTargetClass("Grok1ForCausalLM", _BEFORE, None, False, "models/grok.py (f671c326 .. cddbf6f1)"),
    JaxTargetClass("BailingMoEForCausalLM", _BEFORE, None, False, "models/bailing_moe.py (f671c326 .. cddbf6f1)"),
    JaxTargetClass("BailingMoeForCausalLM", _BEFORE, None, False, "models/bailing_moe.py (f671c326 .. cddbf6f1)"),
    JaxTargetClass("BailingMoeV2ForCausalLM", _BEFORE, None, False, "models/bailing_moe.py (f671c326 .. cddbf6f1)"),
    JaxTargetClass("DeepseekV3ForCausalLM", date(2026, 4, 23), None, False, "models/deepseek_v3.py (arrives 7907875a)"),
    JaxTargetClass("DeepseekV2ForCausalLM", date(2026, 4, 23), None, False, "models/deepseek_v3.py (arrives 7907875a)"),
    JaxTargetClass("Glm4MoeForCausalLM", date(2026, 5, 1), None, False, "models/glm4_moe.py (arrives 24e19642)"),
)
TARGET_CLASS_BY_NAME: dict[str, JaxTargetClass] = {c.name: c for c in TARGET_CLASSES}


def target_class(architectures: tuple[str, ...] | None, built: date | None) -> JaxTargetClass | None:
    """The class sgl-jax loads for a target: the first of its architectures the build registers
    (models/registry.py _normalize_archs and resolve_model_cls). None when the list holds a name
    specguard does not know before that one (it cannot tell whether the build registers it)."""
    for name in architectures or ():
        found = TARGET_CLASS_BY_NAME.get(name)
        if found is None:
            return None
        if built is None or built >= found.registered:
            return found
    return None


class JaxBuild(Record, kw_only=False):
    names: tuple[str, ...]  # how users write it: a PyPI version, a tag, a commit
    built: date
    source: str


# Builds specguard can date by name. Commits are matched by prefix (7+ hex digits).
KNOWN_BUILDS: tuple[JaxBuild, ...] = (
    JaxBuild(("0.0.1",), date(2025, 8, 25), "PyPI sglang-jax 0.0.1 (wheel files dated 2025-08-25)"),
    JaxBuild(("0.0.1.post1",), date(2025, 8, 25), "PyPI sglang-jax 0.0.1.post1 (wheel files dated 2025-08-25)"),
    JaxBuild(("f671c326",), SPECULATIVE_DECODING.first, "commit f671c326 (#378)"),
    JaxBuild(("bc770647",), DRAFT_SAMPLER_RNG_MISSING.first, "commit bc770647 (#940)"),
    JaxBuild(("8c785960",), DRAFT_SAMPLER_RNG_FIXED.first, "commit 8c785960 (#1063)"),
    JaxBuild(("v0.0.3rc0", "0.0.3rc0", "v0.0.3rc1", "0.0.3rc1"), date(2026, 5, 27), "tag of 2026-05-27"),
    # Tagged on 2026-05-29 on a release branch whose code is main's at 889b3ceb (2026-05-27, `git merge-base`):
    # dated by that code, which lacks main's changes of 2026-05-28 (#1192 among them).
    JaxBuild(("v0.0.3rc97", "0.0.3rc97", "v0.0.3rc98", "0.0.3rc98"), date(2026, 5, 27),
             "tag of 2026-05-29 on a release branch from main's 889b3ceb (2026-05-27)"),
    JaxBuild(("b735f16e",), OVERLAP_RELAXED.first, "commit b735f16e (#1293)"),
    JaxBuild(("94ce2692",), PATHWAYS_PD.first, "commit 94ce2692 (#1428)"),
    JaxBuild(("8340cd76",), RECURRENT_EXTRA_BUFFER.first, "commit 8340cd76 (#1408)"),
    JaxBuild(("4406938a",), DFLASH.first, "commit 4406938a (#1467)"),
    JaxBuild(("0348ee13",), EAGLE3_OVERLAP.first, "commit 0348ee13 (#1534)"),
    JaxBuild(("cddbf6f1",), date(2026, 8, 21), "commit cddbf6f1, the HEAD specguard's sgl-jax rules were read at"),
)
# With no build named, the rules speak of the HEAD they were read at.
RULES_READ_AT = KNOWN_BUILDS[-1]


def dated_build(text: str) -> JaxBuild | None:
    """The build ``text`` names: an ISO date, or a known PyPI version, tag or commit; None if unknown."""
    text = text.strip()
    try:
        return JaxBuild((text,), date.fromisoformat(text), "build date as given")
    except ValueError:
        pass
    for build in KNOWN_BUILDS:
        for name in build.names:
            if text.lower() == name.lower() or same_commit(text, name):
                return build
    return None


def server_flags() -> frozenset[str]:
    """Every option string sgl-jax's launcher parses at the HEAD the rules were read at
    (specguard/data/sgl-jax-flags.json, with its source)."""
    import json
    from pathlib import Path

    path = Path(__file__).parent.parent / "data" / "sgl-jax-flags.json"
    return frozenset(json.loads(path.read_text(encoding="utf-8"))["flags"])
