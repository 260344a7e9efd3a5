"""HY rules (hybrid mamba and sliding-window targets) beyond their documented examples: release
boundaries read in the wheels, platforms, strategies, backends and unknown facts."""

from __future__ import annotations

import pytest

from specguard.models import Severity
from specguard.rules.base import Example
from specguard.rules.hybrid import HY020_mamba_no_buffer_radix_speculative as HY020
from specguard.rules.hybrid import HY021_sliding_window_eagle_backend as HY021
from specguard.rules.hybrid import HY022_gdn_speculative_falls_back_to_triton as HY022

QWEN35 = {"architectures": ("Qwen3_5MoeForConditionalGeneration",)}
QWEN3_NEXT = {"architectures": ("Qwen3NextForCausalLM",)}
NEXTN = ("--model-path", "m", "--speculative-algorithm", "NEXTN")


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


# ----------------------------------------------------------------------------- HY020


@pytest.mark.parametrize("version", ["0.5.10", "0.5.11", "0.5.12", "0.5.13"])
def test_hy020_raises_in_the_releases_that_raise(version: str) -> None:
    (finding,) = findings(HY020, *NEXTN, target=QWEN3_NEXT, gpu="H100", sglang_version=version)
    assert finding.severity is Severity.ERROR
    assert "--disable-radix-cache" in finding.flags


@pytest.mark.parametrize("version", ["0.5.9", "0.5.14", "0.5.23"])
def test_hy020_quiet_outside_the_releases(version: str) -> None:
    # 0.5.9 silently switched the radix cache off; 0.5.14 resolves 'auto' to extra_buffer.
    assert findings(HY020, *NEXTN, target=QWEN3_NEXT, gpu="H100", sglang_version=version) == []


def test_hy020_quiet_with_the_two_ways_out() -> None:
    assert findings(HY020, *NEXTN, "--disable-radix-cache", target=QWEN35, sglang_version="0.5.12") == []
    assert findings(HY020, *NEXTN, "--mamba-scheduler-strategy", "extra_buffer", target=QWEN35, sglang_version="0.5.12") == []


def test_hy020_explicit_no_buffer_is_named() -> None:
    (finding,) = findings(HY020, *NEXTN, "--mamba-scheduler-strategy", "no_buffer", target=QWEN35, sglang_version="0.5.10")
    assert "--mamba-scheduler-strategy" in finding.flags


def test_hy020_rocm_falls_back_from_0_5_11() -> None:
    (at_10,) = findings(HY020, *NEXTN, target=QWEN35, gpu="MI300X", sglang_version="0.5.10")
    assert at_10.severity is Severity.ERROR
    (at_11,) = findings(HY020, *NEXTN, target=QWEN35, gpu="MI300X", sglang_version="0.5.11")
    assert at_11.severity is Severity.INFO


def test_hy020_quiet_without_speculation_or_for_other_targets() -> None:
    assert findings(HY020, "--model-path", "m", target=QWEN35, sglang_version="0.5.12") == []
    assert findings(HY020, *NEXTN, target={"architectures": ("Qwen3ForCausalLM",)}, sglang_version="0.5.12") == []
    assert findings(HY020, *NEXTN, target={}, sglang_version="0.5.12") == []


# ----------------------------------------------------------------------------- HY021

GEMMA2 = {"architectures": ("Gemma2ForCausalLM",)}
EAGLE3 = ("--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
          "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


@pytest.mark.parametrize("backend", ["flashinfer", "triton"])
def test_hy021_typed_broken_backend(backend: str) -> None:
    (finding,) = findings(HY021, *EAGLE3, "--attention-backend", backend, target=GEMMA2, gpu="H100")
    assert finding.flags == ("--attention-backend",)
    assert finding.fix is not None and finding.fix.edits[0].value == "fa3"


def test_hy021_default_backend_off_hopper() -> None:
    # An A100 defaults to flashinfer; no backend fits there, so no fix is offered.
    (finding,) = findings(HY021, *EAGLE3, target=GEMMA2, gpu="A100")
    assert finding.fix is None


def test_hy021_quiet_for_fa3_unknown_gpu_and_full_attention_targets() -> None:
    assert findings(HY021, *EAGLE3, "--attention-backend", "fa3", target=GEMMA2, gpu="H100") == []
    assert findings(HY021, *EAGLE3, target=GEMMA2) == []  # no GPU: the default backend is unknown
    assert findings(HY021, *EAGLE3, "--attention-backend", "flashinfer", target={"architectures": ("LlamaForCausalLM",)}, gpu="H100") == []


def test_hy021_split_decode_backend_counts() -> None:
    (finding,) = findings(HY021, *EAGLE3, "--attention-backend", "fa3", "--decode-attention-backend", "triton", target=GEMMA2, gpu="H100")
    assert "triton" in finding.message


# ----------------------------------------------------------------------------- HY022

CHAIN = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


@pytest.mark.parametrize("gpu", ["B200", "GB200", "B300", "GB300"])
@pytest.mark.parametrize("version", ["0.5.10", "0.5.13", "0.5.14", "0.5.23"])
def test_hy022_paged_chain_on_sm100(gpu: str, version: str) -> None:
    (finding,) = findings(HY022, *NEXTN, *CHAIN, "--page-size", "16", target=QWEN35, gpu=gpu, sglang_version=version)
    assert finding.severity is Severity.WARNING
    assert finding.fix is not None and finding.fix.edits[0].value == "trtllm_mha"


def test_hy022_untyped_topk_has_no_automatic_fix() -> None:
    (finding,) = findings(HY022, *NEXTN, target=QWEN3_NEXT, gpu="B200", sglang_version="0.5.14")
    assert finding.fix is None
    assert "--speculative-eagle-topk" in finding.message


def test_hy022_quiet_where_sglang_picks_trtllm_mha_or_triton_is_right() -> None:
    # topk 1 with no page size (or page 1): trtllm_mha is picked.
    assert findings(HY022, *NEXTN, *CHAIN, target=QWEN35, gpu="B200", sglang_version="0.5.14") == []
    assert findings(HY022, *NEXTN, *CHAIN, "--page-size", "1", target=QWEN35, gpu="B200", sglang_version="0.5.14") == []
    # A tree: trtllm_mha cannot run it.
    tree = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8")
    assert findings(HY022, *NEXTN, *tree, "--page-size", "16", target=QWEN35, gpu="B200", sglang_version="0.5.14") == []
    # A typed backend.
    assert findings(HY022, *NEXTN, *CHAIN, "--page-size", "16", "--attention-backend", "trtllm_mha", target=QWEN35, gpu="B200", sglang_version="0.5.14") == []


def test_hy022_quiet_off_sm100_before_0_5_10_and_for_other_targets() -> None:
    args = (*NEXTN, *CHAIN, "--page-size", "16")
    assert findings(HY022, *args, target=QWEN35, gpu="H100", sglang_version="0.5.14") == []
    assert findings(HY022, *args, target=QWEN35, gpu="MI300X", sglang_version="0.5.14") == []
    assert findings(HY022, *args, target=QWEN35, sglang_version="0.5.14") == []
    # 0.5.9 gave these targets triton on SM100 with or without speculation.
    assert findings(HY022, *args, target=QWEN35, gpu="B200", sglang_version="0.5.9") == []
    assert findings(HY022, *args, target={"architectures": ("Qwen3MoeForCausalLM",)}, gpu="B200", sglang_version="0.5.14") == []
    assert findings(HY022, "--model-path", "m", "--page-size", "16", target=QWEN35, gpu="B200", sglang_version="0.5.14") == []
