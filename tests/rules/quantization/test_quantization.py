"""QT rules beyond their documented examples: methods, releases, draft facts, the CLI."""

from __future__ import annotations

import pytest

from specguard.models import Applicability, Severity
from specguard.rules import RULES_BY_CODE
from specguard.rules.base import Example
from tests.conftest import model_dir, run_cli_json

TARGET = "/models/Qwen3-32B-quantized"
DRAFT = "/models/Qwen3-32B-eagle3"
HEAD = {"architectures": ("LlamaForCausalLMEagle3",)}


def argv(*extra: str, method: str = "awq", algorithm: str = "EAGLE3", draft: str | None = DRAFT) -> tuple[str, ...]:
    args = ["--model-path", TARGET, "--quantization", method, "--speculative-algorithm", algorithm]
    if draft is not None:
        args += ["--speculative-draft-model-path", draft]
    return (*args, *extra)


def qt040(example: Example):
    rule = RULES_BY_CODE["QT040"]
    ctx = example.context()
    return list(rule.check(ctx)) if rule.applies_to(ctx) else []


@pytest.mark.parametrize("method", ["awq", "gptq", "gptq_marlin", "awq_marlin", "modelslim", "modelopt_fp8", "moe_wna16"])
def test_qt040_methods_that_need_the_checkpoint_config(method):
    (finding,) = qt040(Example(argv=argv(method=method), draft=HEAD, sglang_version="0.5.9"))
    assert finding.severity is Severity.WARNING
    assert method in finding.message
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert finding.fix.edits[0].name == "--speculative-draft-model-quantization"
    assert finding.fix.edits[0].value == "unquant"


@pytest.mark.parametrize("method", ["fp8", "w8a8_fp8", "modelopt_fp4", "mxfp4"])
def test_qt040_quiet_for_methods_that_quantize_online(method):
    assert qt040(Example(argv=argv(method=method), draft=HEAD, sglang_version="0.5.9")) == []


def test_qt040_before_the_draft_quantization_flag_asks_to_drop_quantization():
    (finding,) = qt040(Example(argv=argv(), draft=HEAD, sglang_version="0.5.6.post2"))
    assert finding.flags == ("--quantization",) and finding.fix is None
    assert "0.5.7" in finding.message
    assert qt040(Example(argv=argv(), draft=HEAD, sglang_version="0.5.7"))[0].fix is not None


@pytest.mark.parametrize(
    "case",
    [
        {"argv": argv("--speculative-draft-model-quantization", "unquant"), "draft": HEAD},  # the user chose
        {"argv": argv(), "draft": {**HEAD, "quantization": "awq"}},  # the draft carries its own config
        {"argv": argv(algorithm="NGRAM", draft=None), "draft": None},  # no draft checkpoint
        {"argv": argv(algorithm="EAGLE", draft=None), "draft": None},  # MTP: the draft is the target
        {"argv": argv(algorithm="EAGLE", draft=TARGET), "draft": None},  # draft path = target path
        {"argv": ("--model-path", TARGET, "--speculative-algorithm", "EAGLE3",
                  "--speculative-draft-model-path", DRAFT), "draft": HEAD},  # no --quantization: auto-detected
    ],
)
def test_qt040_quiet(case):
    assert qt040(Example(argv=case["argv"], draft=case["draft"], sglang_version="0.5.9")) == []


def test_qt040_through_the_cli_in_slime_spelling(tmp_path):
    draft = model_dir(tmp_path, "draft", {"architectures": ["LlamaForCausalLMEagle3"]})
    _, document = run_cli_json(
        "check", "--offline", "--sglang-version", "0.5.9", "--draft", str(draft), "--dialect", "slime", "--",
        "--sglang-quantization", "gptq", "--sglang-speculative-algorithm", "EAGLE3",
        "--sglang-speculative-draft-model-path", str(draft),
    )
    (finding,) = [f for f in document["findings"] if f["code"] == "QT040"]
    assert "--sglang-speculative-draft-model-quantization unquant" in finding["message"]


# QT041: GLM NextN draft drops the checkpoint's quantization in 0.5.10.x.
GLM_MTP = ("--model-path", "zai-org/GLM-4.6-FP8", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
           "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--tp-size", "8")
GLM_FP8 = {"architectures": ("Glm4MoeForCausalLM",), "quantization": "compressed-tensors"}


def _qt041(argv, target=GLM_FP8, version="0.5.10"):
    from specguard.rules import RULES_BY_CODE
    from specguard.rules.base import Example as _Example

    rule = RULES_BY_CODE["QT041"]
    ctx = _Example(argv=argv, target=target, sglang_version=version).context()
    return [f.flags for f in rule.check(ctx)] if rule.applies_to(ctx) else []


@pytest.mark.parametrize(("version", "fires"), [("0.5.9", False), ("0.5.10", True), ("0.5.10.post1", True), ("0.5.11", False)])
def test_qt041_release_window(version, fires):
    assert bool(_qt041(GLM_MTP, version=version)) is fires


def test_qt041_quiet_when_a_quantization_flag_resolves_or_facts_say_otherwise():
    assert _qt041(GLM_MTP + ("--quantization", "fp8")) == []
    assert _qt041(GLM_MTP + ("--speculative-draft-model-quantization", "fp8")) == []
    assert _qt041(GLM_MTP, target={"architectures": ("Glm4MoeForCausalLM",)}) == []  # bf16 checkpoint
    assert _qt041(GLM_MTP, target={"architectures": ("DeepseekV3ForCausalLM",), "quantization": "fp8"}) == []
    nextn = tuple("NEXTN" if a == "EAGLE" else a for a in GLM_MTP)
    assert _qt041(nextn) == [("--speculative-draft-model-quantization",)]
