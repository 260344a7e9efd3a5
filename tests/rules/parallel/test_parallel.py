"""PL rules beyond their documented examples: version boundaries, devices, layouts."""

from __future__ import annotations

import pytest

from specguard.models import Applicability, Dialect, Severity
from specguard.rules.base import Example
from specguard.rules.parallel import (
    PL001_dp_attention_unsupported_algorithm as PL001,
)
from specguard.rules.parallel import (
    PL002_pipeline_parallel_speculative as PL002,
)
from specguard.rules.parallel import (
    PL003_dflash_constraints as PL003,
)
from specguard.rules.parallel import (
    PL004_ngram_constraints as PL004,
)
from specguard.rules.parallel import (
    PL005_lora_unsupported_algorithm as PL005,
)
from specguard.rules.parallel import (
    PL006_decode_radix_cache_speculative as PL006,
)
from specguard.rules.parallel import (
    PL007_watermark_speculative as PL007,
)
from specguard.rules.parallel import (
    PL008_multi_node_inconsistent as PL008,
)
from specguard.rules.parallel import (
    PL009_mixed_chunk_disabled as PL009,
)
from tests.conftest import HF_CONFIGS, run_cli_json


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


def spec(algorithm: str, *extra: str) -> tuple[str, ...]:
    return ("--model-path", "m", "--speculative-draft-model-path", "d", "--speculative-algorithm", algorithm, *extra)


# ----------------------------------------------------------------------------- PL001


def test_pl001_deprecated_switch_needs_dp_size_from_0_5_22() -> None:
    switch_only = spec("NGRAM", "--tp-size", "2", "--enable-dp-attention")
    assert findings(PL001, *switch_only) == []  # 0.5.23: --dp-size 1 means attn_dp_size 1
    assert findings(PL001, *switch_only, sglang_version="0.5.21")
    assert findings(PL001, *switch_only, "--dp-size", "2")


def test_pl001_dflash_by_version() -> None:
    dp = ("--tp-size", "2", "--attn-dp-size", "2")
    (lm_head,) = findings(PL001, *spec("DFLASH", *dp), gpu="H100")
    assert "--enable-dp-lm-head" in lm_head.message
    assert findings(PL001, *spec("DFLASH", *dp, "--enable-dp-lm-head"), gpu="H100") == []
    assert findings(PL001, *spec("DFLASH", *dp, "--enable-dp-lm-head", "--attn-cp-size", "2"))
    old = spec("DFLASH", "--tp-size", "2", "--dp-size", "2", "--enable-dp-attention", "--enable-dp-lm-head")
    assert "non-NPU" in findings(PL001, *old, sglang_version="0.5.22")[0].message
    assert "non-NPU" not in findings(PL001, *old, sglang_version="0.5.19")[0].message
    assert findings(PL001, *old, "--device", "npu", sglang_version="0.5.22") == []


def test_pl001_eagle_is_fine() -> None:
    assert findings(PL001, *spec("EAGLE", "--tp-size", "2", "--attn-dp-size", "2")) == []


# ----------------------------------------------------------------------------- PL002


def test_pl002_exceptions() -> None:
    assert findings(PL002, *spec("EAGLE", "--pp-size", "2", "--disaggregation-mode", "prefill")) == []
    assert findings(PL002, *spec("NEXTN", "--pp-size", "2"), env={"SGLANG_ENABLE_PP_SPEC": "1"}) == []
    assert findings(PL002, *spec("EAGLE3", "--pp-size", "2"), env={"SGLANG_ENABLE_PP_SPEC": "1"})
    assert findings(PL002, *spec("EAGLE", "--pp-size", "2", "--enable-multi-layer-eagle", "--disaggregation-mode", "prefill"))
    assert findings(PL002, *spec("EAGLE", "--pp-size", "2", "--attn-dp-size", "2", "--tp-size", "2"),
                    env={"SGLANG_ENABLE_PP_SPEC": "1"})

@pytest.mark.parametrize(("version", "expected"), [("0.4.6", False), ("0.4.6.post2", True), ("0.5.14", True), ("0.5.20", True)])
def test_pl002_before_0_5_21_rejects_every_algorithm(version, expected) -> None:
    # Even the exceptions of 0.5.21+ (prefill node, SGLANG_ENABLE_PP_SPEC) did not exist yet.
    prefill = spec("EAGLE", "--pp-size", "2", "--disaggregation-mode", "prefill")
    assert bool(findings(PL002, *prefill, sglang_version=version)) is expected
    assert bool(findings(PL002, *spec("NGRAM", "--pp-size", "2"), env={"SGLANG_ENABLE_PP_SPEC": "1"}, sglang_version=version)) is expected
    assert findings(PL002, *spec("EAGLE", "--pp-size", "2", "--device", "npu"), sglang_version=version) == []


def test_pl002_fix_keeps_gpu_count_except_in_slime() -> None:
    (finding,) = findings(PL002, *spec("NGRAM", "--pp-size", "2", "--tp-size", "4"))
    assert {e.name: e.value for e in finding.fix.edits} == {"--pp-size": None, "--tp-size": 8}
    slime = ("--hf-checkpoint", "m", "--sglang-speculative-algorithm", "NGRAM", "--sglang-pp-size", "2")
    (finding,) = findings(PL002, *slime, dialect=Dialect.SLIME)
    assert "--sglang-pp-size 2" in finding.message
    assert [e.name for e in finding.fix.edits] == ["--pp-size"]


# ----------------------------------------------------------------------------- PL003


def test_pl003_window_and_draft_path() -> None:
    no_draft = ("--model-path", "m", "--speculative-algorithm", "DFLASH")
    assert any("--speculative-draft-model-path" in f.message for f in findings(PL003, *no_draft))
    window = spec("DFLASH", "--speculative-dflash-block-size", "16", "--speculative-draft-window-size")
    assert findings(PL003, *window, "16") == []
    (finding,) = findings(PL003, *window, "15")
    assert finding.fix.edits[0].value == 16
    # Window vs the draft config's block_size; unknown draft: quiet.
    assert findings(PL003, *spec("DFLASH", "--speculative-draft-window-size", "8"), draft={"block_size": 16})
    assert findings(PL003, *spec("DFLASH", "--speculative-draft-window-size", "8")) == []


def test_pl003_forced_steps_and_topk_safe() -> None:
    (finding,) = findings(PL003, *spec("DFLASH", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4"))
    assert finding.severity is Severity.WARNING and finding.fix.applicability is Applicability.SAFE


# ----------------------------------------------------------------------------- PL004


def test_pl004_devices_by_version() -> None:
    xpu = spec("NGRAM", "--device", "xpu")
    assert findings(PL004, *xpu, sglang_version="0.5.20")
    assert findings(PL004, *xpu, sglang_version="0.5.21") == []
    assert findings(PL004, *spec("NGRAM"), gpu="MI300X") == []
    assert findings(PL004, *spec("NGRAM")) == []  # unknown device stays quiet


def test_pl004_overlap_note_until_0_5_13() -> None:
    (note,) = findings(PL004, *spec("NGRAM"), sglang_version="0.5.13")
    assert note.severity is Severity.INFO
    assert findings(PL004, *spec("NGRAM"), sglang_version="0.5.14") == []


# ----------------------------------------------------------------------------- PL005-PL009


def test_pl005_lora_by_version() -> None:
    lora = ("--enable-lora",)
    assert findings(PL005, *spec("EAGLE3", *lora)) == []
    assert findings(PL005, *spec("EAGLE3", *lora), sglang_version="0.5.18")
    assert findings(PL005, *spec("EAGLE3", *lora, "--speculative-adaptive"))
    # NGRAM needs 0.5.5.post3 (sglang#12903); before it no algorithm ran with LoRA (sglang#12726).
    assert findings(PL005, *spec("NGRAM", *lora), sglang_version="0.5.5.post3") == []
    (before,) = findings(PL005, *spec("NGRAM", *lora), sglang_version="0.5.4.post3")
    assert "no speculative algorithm" in before.message


def test_pl006_pl007() -> None:
    radix = ("--disaggregation-mode", "decode", "--disaggregation-decode-enable-radix-cache")
    assert findings(PL006, *spec("EAGLE3", *radix)) == []
    # By release: nothing up to 0.5.20, DSPARK from 0.5.21, EAGLE/EAGLE3 too from 0.5.23 (sglang#39150).
    assert findings(PL006, *spec("EAGLE3", *radix), sglang_version="0.5.22")
    assert findings(PL006, *spec("EAGLE", *radix), sglang_version="0.5.20")
    assert findings(PL006, *spec("NGRAM", *radix))
    assert findings(PL006, *spec("STANDALONE", "--disaggregation-decode-enable-radix-cache")) == []
    assert findings(PL007, *spec("EAGLE", "--enable-watermark", "--speculative-use-rejection-sampling"))
    assert findings(PL007, *spec("STANDALONE", "--enable-watermark"), sglang_version="0.5.21") == []


def test_pl008_layout() -> None:
    base = ("--model-path", "m", "--nnodes", "2", "--dist-init-addr", "h:1")
    assert findings(PL008, *base, "--tp-size", "16", "--node-rank", "1") == []
    assert findings(PL008, *base, "--tp-size", "16", "--node-rank", "2")
    assert findings(PL008, *base, "--tp-size", "3")
    assert findings(PL008, *base, "--tp-size", "16", "--dp-size", "2")
    assert findings(PL008, *base, "--tp-size", "16", "--dp-size", "2", "--enable-dp-attention") == []
    assert findings(PL008, "--model-path", "m", "--tp-size", "6", "--attn-dp-size", "4")
    slime = ("--hf-checkpoint", "m", "--sglang-nnodes", "2")
    ctx = Example(argv=slime, dialect=Dialect.SLIME).context()
    assert not PL008.RULE.applies_to(ctx)


def test_pl009_versions() -> None:
    mixed = ("--enable-mixed-chunk",)
    assert findings(PL009, *spec("EAGLE3", *mixed)) == []
    assert findings(PL009, *spec("EAGLE3", *mixed), sglang_version="0.5.18")
    assert findings(PL009, *spec("NGRAM", *mixed))[0].fix.applicability is Applicability.SAFE


def test_pl009_follows_supports_mixed_chunk_for_every_algorithm() -> None:
    """PL009 read its own list, which lacked UNO; SGLang's _handle_uno turns mixed chunk off (0.5.23
    arg_groups/speculative_hook.py:596-600, 0.5.20 :493-497) and supports_mixed_chunk() leaves UNO out
    (spec_info.py:147-160). The list now comes from sglang_facts.algorithms."""
    mixed = ("--enable-mixed-chunk",)
    uno = ("--model-path", "m", "--speculative-algorithm", "UNO", *mixed)
    assert findings(PL009, *uno, sglang_version="0.5.23")
    for kept in ("EAGLE", "EAGLE3", "DFLASH", "DSPARK"):
        assert findings(PL009, *spec(kept, *mixed), sglang_version="0.5.23") == [], kept
    for dropped in ("STANDALONE", "NGRAM", "FROZEN_KV_MTP"):
        assert findings(PL009, *spec(dropped, *mixed), sglang_version="0.5.23"), dropped


# ----------------------------------------------------------------------------- end to end


def test_cli_dp_attention_with_standalone() -> None:
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    args = ("--", "--model-path", llama, "--tp-size", "2", "--attn-dp-size", "2", "--speculative-algorithm",
            "STANDALONE", "--speculative-draft-model-path", llama, "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
    code, doc = run_cli_json("check", "--offline", "--gpu", "H100", *args)
    assert code == 1
    (pl001,) = [f for f in doc["findings"] if f["code"] == "PL001"]
    assert pl001["severity"] == "error" and "--attn-dp-size" in pl001["message"]
    code, doc = run_cli_json("check", "--offline", "--gpu", "H100", "--unsafe-fixes", *args)
    assert "--attn-dp-size" not in doc["argv"]
    assert not any(f["code"] == "PL001" and not f["applied"] for f in doc["findings"])


# ----------------------------------------------------------------------------- PL060
from specguard.rules.parallel import PL060_eagle_dp_attention_without_idle_sync as PL060


@pytest.mark.parametrize(("version", "expected"), [("0.4.4.post1", True), ("0.4.7", True), ("0.4.8", False), ("0.5.23", False)])
def test_pl060_fixed_in_0_4_8(version, expected) -> None:
    argv = spec("NEXTN", "--tp", "16", "--dp", "4", "--enable-dp-attention")
    assert bool(findings(PL060, *argv, sglang_version=version)) is expected


def test_pl060_needs_attention_dp() -> None:
    assert findings(PL060, *spec("EAGLE", "--tp", "8"), sglang_version="0.4.6") == []


# ----------------------------------------------------------------------------- PL061
from specguard.rules.parallel import (
    PL061_spec_v2_dp_attention_draft_extend_sync as PL061,
)

V2_DP = ("--tp", "4", "--dp", "4", "--enable-dp-attention", "--speculative-num-steps", "3",
         "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


def test_pl061_only_0_5_7_with_the_v2_worker() -> None:
    on = {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert findings(PL061, *spec("EAGLE", *V2_DP), env=on, sglang_version="0.5.7")
    assert findings(PL061, *spec("EAGLE", *V2_DP), sglang_version="0.5.7") == []  # V1 (variable off by default)
    assert findings(PL061, *spec("EAGLE", *V2_DP), env=on, sglang_version="0.5.8") == []
    assert findings(PL061, *spec("EAGLE", "--tp", "4", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                                 "--speculative-num-draft-tokens", "4"), env=on, sglang_version="0.5.7") == []


@pytest.mark.parametrize(("version", "expected"), [("0.5.3", True), ("0.5.22", True), ("0.5.23", False)])
def test_pl004_ngram_on_rocm_lacks_the_tree_op(version, expected) -> None:
    argv = ("--model-path", "m", "--speculative-algorithm", "NGRAM")
    hit = [f for f in findings(PL004, *argv, gpu="MI355X", sglang_version=version) if f.flags == ("--speculative-algorithm",)]
    assert bool(hit) is expected
    assert [f for f in findings(PL004, *argv, gpu="H100", sglang_version="0.5.22") if f.flags == ("--speculative-algorithm",)] == []


def test_pl062_index_share_pd_decode_dp_attention() -> None:
    from specguard.rules.parallel import (
        PL062_index_share_mtp_pd_decode_dp_hang as PL062,
    )

    share = {"index_share_for_mtp_iteration": True}
    decode_dp = ("--model-path", "m", "--tp", "8", "--dp", "8", "--enable-dp-attention", "--disaggregation-mode", "decode",
                 "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                 "--speculative-num-draft-tokens", "4")
    [hang] = findings(PL062, *decode_dp, target=share, sglang_version="0.5.23")
    assert hang.severity is Severity.WARNING and "--enable-dp-attention" in hang.flags
    assert findings(PL062, *decode_dp, target=share, sglang_version="0.5.15") == []  # no seed fallback yet
    assert findings(PL062, *decode_dp, target={"index_share_for_mtp_iteration": False}, sglang_version="0.5.23") == []
    assert findings(PL062, *decode_dp, sglang_version="0.5.23") == []  # the property is unknown
    colocated = tuple(a for a in decode_dp if a not in ("--disaggregation-mode", "decode"))
    assert findings(PL062, *colocated, target=share, sglang_version="0.5.23") == []


@pytest.mark.parametrize(("version", "mode", "expected"), [
    ("0.5.16", "decode", True), ("0.5.19", "decode", True), ("0.5.20", "decode", False), ("0.5.16", "prefill", False),
])
def test_pl063_dflash_on_pd_decode_until_0_5_20(version, mode, expected) -> None:
    from specguard.rules.parallel import (
        PL063_dflash_pd_decode_without_draft_input as PL063,
    )

    argv = spec("DFLASH", "--disaggregation-mode", mode)
    assert bool(findings(PL063, *argv, sglang_version=version)) is expected


@pytest.mark.parametrize(("version", "expected"), [("0.5.16", True), ("0.5.17", False)])
def test_pl063_dspark_handover_from_0_5_17(version, expected) -> None:
    from specguard.rules.parallel import (
        PL063_dflash_pd_decode_without_draft_input as PL063,
    )

    argv = spec("DSPARK", "--disaggregation-mode", "decode")
    assert bool(findings(PL063, *argv, sglang_version=version)) is expected


@pytest.mark.parametrize(("dp", "version", "expected"), [
    ("4", "0.5.14", True), ("2", "0.5.15", True), ("32", "0.5.14", False), ("4", "0.5.16", False), ("4", "0.5.13", False),
])
def test_pl064_glm_dsa_attention_tp_under_dp(dp, version, expected) -> None:
    from specguard.rules.parallel import (
        PL064_glm_dsa_eagle_attention_tp_under_dp as PL064,
    )

    argv = ("--model-path", "m", "--tp", "32", "--dp", dp, "--enable-dp-attention", "--speculative-algorithm", "EAGLE",
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
    glm = {"architectures": ("GlmMoeDsaForCausalLM",)}
    assert bool(findings(PL064, *argv, target=glm, sglang_version=version)) is expected
    assert findings(PL064, *argv, target={"architectures": ("DeepseekV3ForCausalLM",)}, sglang_version=version) == []


def test_pl063_decode_side_only_and_release() -> None:
    """DFLASH on a PD decode node before 0.5.20 (sglang#36140): the decode side only, DFLASH only."""
    from specguard.rules.parallel import (
        PL063_dflash_pd_decode_without_draft_input as PL063,
    )

    def fired(*argv: str, version: str) -> list:
        ctx = Example(argv=argv, sglang_version=version).context()
        return list(PL063.RULE.check(ctx)) if PL063.RULE.applies_to(ctx) else []

    dflash = ("--model-path", "m", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d")
    assert fired(*dflash, "--disaggregation-mode", "decode", version="0.5.19")
    assert fired(*dflash, "--disaggregation-mode", "decode", version="0.5.20") == []
    assert fired(*dflash, "--disaggregation-mode", "prefill", version="0.5.19") == []
    assert fired("--model-path", "m", "--speculative-algorithm", "EAGLE", "--disaggregation-mode", "decode", version="0.5.19") == []
