"""AB020 (an MHA draft inheriting an MLA-only backend) and AB061 (aiter's MLA-only speculative
graph paths on non-MLA targets) beyond their documented examples."""

from __future__ import annotations

import pytest

from specguard.models import Severity
from specguard.rules.attention import AB020_mha_draft_inherits_mla_backend as AB020
from specguard.rules.attention import AB061_aiter_eagle_graph_non_mla as AB061
from specguard.rules.base import Example

KIMI = {"architectures": ("KimiK25ForConditionalGeneration",), "kv_lora_rank": 512}
DEEPSEEK = {"architectures": ("DeepseekV3ForCausalLM",), "kv_lora_rank": 512}
LLAMA_HEAD = {"architectures": ("LlamaForCausalLMEagle3",)}
MLA_HEAD = {"architectures": ("DeepseekV3ForCausalLMEagle3",), "kv_lora_rank": 512}
EAGLE3 = ("--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
          "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


@pytest.mark.parametrize("gpu", ["B200", "GB300"])
def test_ab020_default_trtllm_mla_on_blackwell(gpu: str) -> None:
    for target in (KIMI, DEEPSEEK):
        (finding,) = findings(AB020, *EAGLE3, target=target, draft=LLAMA_HEAD, gpu=gpu)
        assert finding.fix is not None and finding.fix.edits[0].value == "trtllm_mha"


def test_ab020_typed_trtllm_mla_on_any_gpu_and_tree_proposal() -> None:
    (finding,) = findings(AB020, *EAGLE3, "--attention-backend", "trtllm_mla", target=DEEPSEEK, draft=LLAMA_HEAD)
    assert finding.fix.edits[0].value == "flashinfer"


def test_ab020_quiet_cases() -> None:
    # Hopper's MLA default is fa3, which serves an MHA draft.
    assert findings(AB020, *EAGLE3, target=KIMI, draft=LLAMA_HEAD, gpu="H200") == []
    # An MLA draft can run trtllm_mla; an unknown draft says nothing.
    assert findings(AB020, *EAGLE3, target=KIMI, draft=MLA_HEAD, gpu="B200") == []
    assert findings(AB020, *EAGLE3, target=KIMI, draft={}, gpu="B200") == []
    # A named draft backend, or NEXTN drafting with the target's own (MLA) layers.
    assert findings(AB020, *EAGLE3, "--speculative-draft-attention-backend", "flashinfer", target=KIMI, draft=LLAMA_HEAD, gpu="B200") == []
    assert findings(AB020, "--model-path", "m", "--speculative-algorithm", "NEXTN", target=DEEPSEEK, gpu="B200") == []


GLM = {"architectures": ("Glm4MoeForCausalLM",)}
EAGLE = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
         "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


@pytest.mark.parametrize("version,fires", [("0.5.5", False), ("0.5.6.post1", False), ("0.5.6.post2", True), ("0.5.9", True), ("0.5.10rc0", False), ("0.5.10", False)])
def test_ab061_release_window(version: str, fires: bool) -> None:
    got = findings(AB061, *EAGLE, "--attention-backend", "aiter", target=GLM, sglang_version=version)
    assert bool(got) is fires


def test_ab061_rocm_default_and_quiet_cases() -> None:
    assert findings(AB061, *EAGLE, target=GLM, gpu="MI300X", sglang_version="0.5.8")  # aiter is ROCm's default
    assert findings(AB061, *EAGLE, target=DEEPSEEK, gpu="MI300X", sglang_version="0.5.8") == []  # MLA target
    assert findings(AB061, *EAGLE, "--disable-cuda-graph", target=GLM, gpu="MI300X", sglang_version="0.5.8") == []
    assert findings(AB061, *EAGLE, "--attention-backend", "triton", target=GLM, gpu="MI300X", sglang_version="0.5.8") == []
    # A target whose attention is unknown: a warning, not an error.
    unknown = findings(AB061, *EAGLE, "--attention-backend", "aiter", target={}, sglang_version="0.5.8")
    assert [f.severity for f in unknown] == [Severity.WARNING]
