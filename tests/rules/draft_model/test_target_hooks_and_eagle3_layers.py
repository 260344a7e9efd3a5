"""DM040 (target lacks EAGLE hooks) and DM041 (multi-layer EAGLE3 head): both sides of each
release boundary read in the wheels, and unknown facts staying quiet."""

from __future__ import annotations

import pytest

from specguard.models import Severity
from specguard.rules import RULES_BY_CODE
from specguard.rules.base import Example

EAGLE3_VL = ("--model-path", "Qwen/Qwen3-VL-8B-Instruct", "--speculative-algorithm", "EAGLE3",
             "--speculative-draft-model-path", "some/eagle3-head")


def fired(code: str, example: Example) -> list[Severity]:
    rule = RULES_BY_CODE[code]
    ctx = example.context()
    if not rule.applies_to(ctx):
        return []
    return [f.severity for f in rule.check(ctx)]


@pytest.mark.parametrize(
    ("arch", "last_without", "first_with"),
    [
        ("Qwen2_5_VLForConditionalGeneration", "0.5.1", "0.5.2"),
        ("Qwen3VLForConditionalGeneration", "0.5.10.post1", "0.5.11"),
        ("Qwen3VLMoeForConditionalGeneration", "0.5.10", "0.5.11"),
        ("Gemma3ForConditionalGeneration", "0.5.11", "0.5.12"),
        ("Gemma3ForCausalLM", "0.5.9", "0.5.12"),
        ("KimiK25ForConditionalGeneration", "0.5.9", "0.5.10"),
    ],
)
@pytest.mark.parametrize("algorithm", ["EAGLE", "EAGLE3", "NEXTN"])
def test_dm040_release_boundary(arch, last_without, first_with, algorithm):
    argv = list(EAGLE3_VL)
    argv[3] = algorithm
    before = Example(argv=tuple(argv), target={"architectures": (arch,)}, sglang_version=last_without)
    after = Example(argv=tuple(argv), target={"architectures": (arch,)}, sglang_version=first_with)
    assert fired("DM040", before) == [Severity.ERROR]
    assert fired("DM040", after) == []


def test_dm040_release_candidates_read_in_the_wheels():
    """The 0.5.2 release candidates were read for sglang_facts.changes: qwen2_5_vl.py gains the hooks only
    in 0.5.2 final (:654-657; none in rc0-rc2), while qwen2.py has set_eagle3_layers_to_capture from
    0.5.2rc0 (:630). There is no 0.5.4.post2 release; DeepSeek's capture hook is in 0.5.4.post3 (:3767)."""
    vl = Example(argv=EAGLE3_VL, target={"architectures": ("Qwen2_5_VLForConditionalGeneration",)}, sglang_version="0.5.2rc2")
    assert fired("DM040", vl) == [Severity.ERROR]
    qwen2 = Example(argv=EAGLE3_VL, target={"architectures": ("Qwen2ForCausalLM",)}, sglang_version="0.5.2rc0")
    assert fired("DM040", qwen2) == []
    for version, expected in (("0.5.4.post1", [Severity.ERROR]), ("0.5.4.post3", [])):
        deepseek = Example(argv=EAGLE3_VL, target={"architectures": ("DeepseekV3ForCausalLM",)}, sglang_version=version)
        assert fired("DM040", deepseek) == expected, version


def test_dm040_names_the_missing_hook_per_algorithm():
    for algorithm, hook in (("EAGLE3", "set_eagle3_layers_to_capture"), ("EAGLE", "get_embed_and_head")):
        argv = list(EAGLE3_VL)
        argv[3] = algorithm
        ctx = Example(argv=tuple(argv), target={"architectures": ("Qwen3VLForConditionalGeneration",)},
                      sglang_version="0.5.9").context()
        (finding,) = RULES_BY_CODE["DM040"].check(ctx)
        assert hook in finding.message and "0.5.11" in finding.message


@pytest.mark.parametrize("algorithm", ["NGRAM", "STANDALONE", "DFLASH"])
def test_dm040_quiet_for_algorithms_that_need_no_target_hooks(algorithm):
    argv = list(EAGLE3_VL)
    argv[3] = algorithm
    ctx = Example(argv=tuple(argv), target={"architectures": ("Qwen3VLForConditionalGeneration",)},
                  sglang_version="0.5.9")
    assert fired("DM040", ctx) == []


def test_dm040_quiet_for_unlisted_or_unknown_architectures():
    for target in ({"architectures": ("LlamaForCausalLM",)}, {}, None):
        assert fired("DM040", Example(argv=EAGLE3_VL, target=target, sglang_version="0.5.5")) == []


HEAD = {"architectures": ("LlamaForCausalLMEagle3",)}


@pytest.mark.parametrize(("version", "expected"), [("0.4.6", 1), ("0.5.0rc1", 1), ("0.5.11", 1), ("0.5.12", 0), ("0.5.23", 0)])
def test_dm041_release_boundary(version, expected):
    example = Example(argv=EAGLE3_VL, draft={**HEAD, "num_hidden_layers": 2}, sglang_version=version)
    assert len(fired("DM041", example)) == expected


def test_dm041_quiet_for_one_layer_unknown_layers_and_other_heads():
    for draft in ({**HEAD, "num_hidden_layers": 1}, HEAD, {"architectures": ("Eagle3DeepseekV2ForCausalLM",), "num_hidden_layers": 2}):
        assert fired("DM041", Example(argv=EAGLE3_VL, draft=draft, sglang_version="0.5.9")) == []


def test_dm041_only_for_eagle3():
    argv = list(EAGLE3_VL)
    argv[3] = "EAGLE"
    assert fired("DM041", Example(argv=tuple(argv), draft={**HEAD, "num_hidden_layers": 2}, sglang_version="0.5.9")) == []


@pytest.mark.parametrize(
    ("arch", "last_without", "first_with"),
    [("Eagle3DeepseekV2ForCausalLM", "0.5.11", "0.5.12"), ("MistralForCausalLMEagle", "0.5.10", "0.5.11")],
)
def test_dm042_release_boundary(arch, last_without, first_with):
    draft = {"architectures": (arch,)}
    assert fired("DM042", Example(argv=EAGLE3_VL, draft=draft, sglang_version=last_without)) == [Severity.ERROR]
    assert fired("DM042", Example(argv=EAGLE3_VL, draft=draft, sglang_version=first_with)) == []


def test_dm042_quiet_for_registered_unknown_or_absent_drafts():
    for draft in ({"architectures": ("LlamaForCausalLMEagle3",)}, {}, None):
        assert fired("DM042", Example(argv=EAGLE3_VL, draft=draft, sglang_version="0.5.5")) == []
    no_path = ("--model-path", "moonshotai/Kimi-K2.6", "--speculative-algorithm", "EAGLE3")
    assert fired("DM042", Example(argv=no_path, draft={"architectures": ("Eagle3DeepseekV2ForCausalLM",)},
                                  sglang_version="0.5.11")) == []


STANDALONE = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "STANDALONE",
              "--speculative-draft-model-path", "meta-llama/Llama-3.2-1B-Instruct")


@pytest.mark.parametrize(("version", "expected"), [("0.5.5", 1), ("0.5.9", 1), ("0.5.11", 1), ("0.5.12", 0)])
def test_dm043_release_boundary(version, expected):
    example = Example(argv=STANDALONE, target={"hidden_size": 4096}, draft={"hidden_size": 2048}, sglang_version=version)
    assert len(fired("DM043", example)) == expected


def test_dm043_quiet_for_equal_or_unknown_widths_and_other_algorithms():
    for target, draft in (({"hidden_size": 4096}, {"hidden_size": 4096}), ({}, {"hidden_size": 2048}), ({"hidden_size": 4096}, {})):
        assert fired("DM043", Example(argv=STANDALONE, target=target, draft=draft, sglang_version="0.5.9")) == []
    eagle = list(STANDALONE)
    eagle[3] = "EAGLE"
    assert fired("DM043", Example(argv=tuple(eagle), target={"hidden_size": 4096}, draft={"hidden_size": 2048},
                                  sglang_version="0.5.9")) == []


@pytest.mark.parametrize(
    ("code", "algorithm", "target", "draft"),
    [
        ("DM004", "EAGLE3", {"hidden_size": 8192}, {"architectures": ("LlamaForCausalLMEagle3",), "hidden_size": 4096}),
        ("DM004", "EAGLE", {"hidden_size": 8192}, {"architectures": ("LlamaForCausalLMEagle",), "hidden_size": 4096}),
        ("DM013", "EAGLE3", {"num_hidden_layers": 64}, {"eagle_aux_hidden_state_layer_ids": (1, 46, 90)}),
        ("DM008", "EAGLE3", {}, {"architectures": ("Eagle3LlamaForCausalLM",)}),
        ("DM008", "EAGLE3", {}, {"architectures": ("LlamaForCausalLM",), "num_hidden_layers": 1}),
        ("DM008", "EAGLE", {}, {"architectures": ("LlamaForCausalLM",), "num_hidden_layers": 1}),
    ],
)
def test_draft_checkpoint_findings_name_the_draft_path(code, algorithm, target, draft):
    """A wrong draft checkpoint is fixed by another draft: the finding names the flag that picks it,
    so the corpus (and SARIF) can point at it."""
    argv = list(EAGLE3_VL)
    argv[3] = algorithm
    ctx = Example(argv=tuple(argv), target=target, draft=draft, sglang_version="0.5.9").context()
    findings = list(RULES_BY_CODE[code].check(ctx))
    assert findings and all("--speculative-draft-model-path" in f.flags for f in findings)


@pytest.mark.parametrize("arch", ["Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration"])
@pytest.mark.parametrize(("version", "fires"), [("0.5.9", True), ("0.5.10.post1", True), ("0.5.11", True),
                                                ("0.5.21", True), ("0.5.22", False), ("0.5.23", False)])
def test_dm040_qwen35_eagle3_capture_by_release(arch, version, fires):
    example = Example(argv=EAGLE3_VL, target={"architectures": (arch,)}, sglang_version=version)
    assert (fired("DM040", example) == [Severity.ERROR]) is fires


@pytest.mark.parametrize("algorithm", ["EAGLE", "NEXTN"])
def test_dm040_qwen35_mtp_is_not_judged(algorithm):
    # Qwen3.5 has get_embed_and_head in every release read: its MTP layers run under EAGLE/NEXTN.
    argv = ("--model-path", "Qwen/Qwen3.5-27B", "--speculative-algorithm", algorithm)
    example = Example(argv=argv, target={"architectures": ("Qwen3_5ForConditionalGeneration",)}, sglang_version="0.5.9")
    assert fired("DM040", example) == []


@pytest.mark.parametrize(("algorithm", "version", "fires"), [("EAGLE3", "0.5.1", True), ("EAGLE3", "0.4.9", True),
                                                             ("EAGLE3", "0.5.2", False), ("EAGLE", "0.5.1", False)])
def test_dm040_qwen2_eagle3_capture_from_052(algorithm, version, fires):
    argv = ("--model-path", "Qwen/QwQ-32B", "--speculative-algorithm", algorithm, "--speculative-draft-model-path", "d/head")
    example = Example(argv=argv, target={"architectures": ("Qwen2ForCausalLM",)}, sglang_version=version)
    assert (fired("DM040", example) == [Severity.ERROR]) is fires


def test_dm041_on_sgl_jax_at_every_build():
    """sgl-jax's LlamaForCausalLMEagle3 keeps the one-layer check (f671c326 to cddbf6f1): no SGLang window there."""
    from specguard.models import Dialect

    argv = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", "outputs/llama-eagle3", "--disable-overlap-schedule")
    for build in (None, "f671c326", "cddbf6f1"):
        example = Example(argv=argv, draft={**HEAD, "num_hidden_layers": 2}, dialect=Dialect.SGL_JAX, gpu="TPU-v6e", sgl_jax_version=build)
        assert RULES_BY_CODE["DM041"].applies_to(example.context()), build
        (finding,) = RULES_BY_CODE["DM041"].check(example.context())
        assert "sgl-jax's LlamaForCausalLMEagle3" in finding.message, build
    one_layer = Example(argv=argv, draft={**HEAD, "num_hidden_layers": 1}, dialect=Dialect.SGL_JAX, gpu="TPU-v6e")
    assert list(RULES_BY_CODE["DM041"].check(one_layer.context())) == []
