"""DM rules beyond their documented examples: boundaries, real fixtures, unknown facts, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specguard.facts import facts_from_file, load_facts
from specguard.models import Dialect, ModelFacts, Severity
from specguard.records import replace
from specguard.rules import RULES_BY_CODE
from specguard.rules.base import CheckContext, Example
from specguard.rules.draft_model._common import derived_context_length, is_hub_reference
from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS, model_dir, run_cli_json

LLAMA31 = HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"
QWEN3_32B = HF_CONFIGS / "Qwen" / "Qwen3-32B"
QWEN3_235B = HF_CONFIGS / "Qwen" / "Qwen3-235B-A22B"
QWEN25_7B = HF_CONFIGS / "Qwen" / "Qwen2.5-7B-Instruct"
DEEPSEEK_V3 = HF_CONFIGS / "deepseek-ai" / "DeepSeek-V3"
LLAMA2 = HF_CONFIGS / "meta-llama" / "Llama-2-7b-chat-hf"
YUHUILI_EAGLE = HF_CONFIGS / "yuhuili" / "EAGLE-llama2-chat-7B"
SPECFORGE = DRAFT_TEMPLATES / "sgl-project-SpecForge"
ANGELSLIM_QWEN3_32B = DRAFT_TEMPLATES / "Tencent-AngelSlim" / "qwen3-32b-eagle3.json"


def codes(rule_code: str, ctx: CheckContext) -> list[tuple[str, Severity]]:
    rule = RULES_BY_CODE[rule_code]
    if not rule.applies_to(ctx):
        return []
    return [(f.code, f.severity) for f in rule.check(ctx)]


def findings(rule_code: str, ctx: CheckContext):
    return list(RULES_BY_CODE[rule_code].check(ctx))


def ctx_of(argv, target: ModelFacts | None, draft: ModelFacts | None, dialect=Dialect.SGLANG, env=None, **kw) -> CheckContext:
    base = Example(argv=tuple(argv), dialect=dialect, env=env or {}, **kw).context()
    return CheckContext.build(base.spec, target, draft, base.env)


def facts(path: Path, **update) -> ModelFacts:
    loaded = load_facts(str(path)) if path.is_dir() else facts_from_file(path, source=str(path))
    return replace(loaded, **update) if update else loaded


def ex(argv, target=None, draft=None, **kw) -> CheckContext:
    return Example(argv=tuple(argv), target=target, draft=draft, **kw).context()


EAGLE3 = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d/draft")
STANDALONE = ("--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "d/draft")


# ----------------------------------------------------------------------------- DM003 vocab


def test_dm003_eagle3_specforge_template_matches_llama31() -> None:
    ctx = ctx_of(("--model-path", str(LLAMA31), *EAGLE3), facts(LLAMA31), facts(SPECFORGE / "llama3-8B-eagle3.json"))
    assert findings("DM003", ctx) == []  # vocab 128256 both; draft_vocab_size 32000 is fine


def test_dm003_eagle3_llama_head_on_qwen_target_is_error() -> None:
    ctx = ctx_of(("--model-path", str(QWEN3_32B), *EAGLE3), facts(QWEN3_32B), facts(SPECFORGE / "llama3-8B-eagle3.json"))
    found = findings("DM003", ctx)
    assert [f.severity for f in found] == [Severity.ERROR]
    assert "128256" in found[0].message and "151936" in found[0].message and "32000" in found[0].message


def test_dm003_standalone_padding_difference_same_family_is_warning() -> None:
    ctx = ex(("--model-path", "Qwen/Qwen2.5-7B-Instruct", *STANDALONE),
             {"vocab_size": 152064, "model_type": "qwen2"}, {"vocab_size": 151936, "model_type": "qwen2"}, sglang_version="0.5.14")
    assert codes("DM003", ctx) == [("DM003", Severity.WARNING)]


def test_dm003_standalone_draft_larger_vocab_is_error_even_same_family() -> None:
    ctx = ex(("--model-path", "t/t", *STANDALONE),
             {"vocab_size": 151936, "model_type": "qwen2"}, {"vocab_size": 152064, "model_type": "qwen2"}, sglang_version="0.5.14")
    assert codes("DM003", ctx) == [("DM003", Severity.ERROR)]


def test_dm003_standalone_real_fixtures_llama_target_qwen_draft() -> None:
    ctx = ctx_of(("--model-path", str(LLAMA31), *STANDALONE), facts(LLAMA31), facts(QWEN25_7B), sglang_version="0.5.14")
    assert codes("DM003", ctx) == [("DM003", Severity.ERROR)]


def test_dm003_leaves_standalone_to_sglang_s_own_check_from_0_5_15() -> None:
    ctx = ctx_of(("--model-path", str(LLAMA31), *STANDALONE), facts(LLAMA31), facts(QWEN25_7B), sglang_version="0.5.15")
    assert findings("DM003", ctx) == []
    assert codes("DM410", ctx) == [("DM410", Severity.ERROR)]


@pytest.mark.parametrize("target,draft", [({"vocab_size": None}, {"vocab_size": 32000}), ({"vocab_size": 32000}, {"vocab_size": None})])
def test_dm003_unknown_vocab_is_quiet(target, draft) -> None:
    assert findings("DM003", ex(("--model-path", "t/t", *STANDALONE), target, draft)) == []


def test_dm003_quiet_without_speculation_and_for_ngram() -> None:
    t, d = {"vocab_size": 1}, {"vocab_size": 2}
    assert findings("DM003", ex(("--model-path", "t/t"), t, d)) == []
    assert findings("DM003", ex(("--model-path", "t/t", "--speculative-algorithm", "NGRAM"), t, d)) == []


# ----------------------------------------------------------------------------- DM004 hidden size


def test_dm004_real_fixtures() -> None:
    llama_head = facts(SPECFORGE / "llama3-8B-eagle3.json")
    assert findings("DM004", ctx_of(("--model-path", str(LLAMA31), *EAGLE3), facts(LLAMA31), llama_head)) == []
    wrong = ctx_of(("--model-path", str(QWEN3_32B), *EAGLE3), facts(QWEN3_32B), llama_head)
    assert codes("DM004", wrong) == [("DM004", Severity.ERROR)]
    angel = facts(ANGELSLIM_QWEN3_32B)
    assert findings("DM004", ctx_of(("--model-path", str(QWEN3_32B), *EAGLE3), facts(QWEN3_32B), angel)) == []


def test_dm004_eagle1_yuhuili_llama2_pair_matches() -> None:
    argv = ("--model-path", str(LLAMA2), "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", str(YUHUILI_EAGLE))
    assert findings("DM004", ctx_of(argv, facts(LLAMA2), facts(YUHUILI_EAGLE))) == []


def test_dm004_kimi_mla_head_is_exempt_and_standalone_ignored() -> None:
    t = {"hidden_size": 7168}
    assert findings("DM004", ex(("--model-path", "t/t", *EAGLE3), t, {"hidden_size": 4096, "architectures": ("Eagle3DeepseekV2ForCausalLM",)})) == []
    assert findings("DM004", ex(("--model-path", "t/t", *STANDALONE), t, {"hidden_size": 4096})) == []


# ----------------------------------------------------------------------------- DM005 / DM006 missing draft path


@pytest.mark.parametrize("algorithm", ["EAGLE3", "STANDALONE", "DFLASH"])
def test_dm005_fires_for_each_separate_draft_algorithm(algorithm: str) -> None:
    ctx = ex(("--model-path", "t/t", "--speculative-algorithm", algorithm), {"architectures": ("LlamaForCausalLM",)})
    assert codes("DM005", ctx) == [("DM005", Severity.ERROR)]


def test_dm005_eagle3_on_deepseek_proposes_eagle() -> None:
    ctx = ctx_of(("--model-path", str(DEEPSEEK_V3), "--speculative-algorithm", "EAGLE3"), facts(DEEPSEEK_V3), None)
    (found,) = findings("DM005", ctx)
    assert found.fix is not None and found.fix.edits[0].value == "EAGLE"


def test_dm005_quiet_for_eagle_and_with_a_draft_path() -> None:
    assert findings("DM005", ex(("--model-path", "t/t", "--speculative-algorithm", "EAGLE"), {"architectures": ("LlamaForCausalLM",)})) == []
    assert findings("DM005", ex(("--model-path", "t/t", *EAGLE3), {"architectures": ("LlamaForCausalLM",)})) == []


def test_dm006_real_fixtures() -> None:
    nextn = ("--speculative-algorithm", "NEXTN")
    assert codes("DM006", ctx_of(("--model-path", str(QWEN3_32B), *nextn), facts(QWEN3_32B), None)) == [("DM006", Severity.ERROR)]
    assert findings("DM006", ctx_of(("--model-path", str(DEEPSEEK_V3), *nextn), facts(DEEPSEEK_V3), None)) == []
    # Qwen3MoeForCausalLM is rewritten to Qwen3MoeForCausalLMMTP by SGLang: not this rule's call.
    assert findings("DM006", ctx_of(("--model-path", str(QWEN3_235B), *nextn), facts(QWEN3_235B), None)) == []


def test_dm006_mimo_without_draft_path_is_fine() -> None:
    # slime's run-mimo-7B-rl-eagle.sh: SGLang loads MiMoMTP from the target checkpoint.
    target = {"architectures": ("MiMoForCausalLM",), "num_nextn_predict_layers": 1}
    assert findings("DM006", ex(("--model-path", "XiaomiMiMo/MiMo-7B-RL", "--speculative-algorithm", "EAGLE"), target)) == []
    target_no_key = {"architectures": ("MiMoForCausalLM",)}
    assert findings("DM006", ex(("--model-path", "XiaomiMiMo/MiMo-7B-RL", "--speculative-algorithm", "EAGLE"), target_no_key)) == []


def test_dm006_boundaries() -> None:
    argv = ("--model-path", "t/t", "--speculative-algorithm", "EAGLE")
    assert findings("DM006", ex(argv, {"architectures": ("FooForCausalLM",), "num_nextn_predict_layers": 1})) == []
    assert codes("DM006", ex(argv, {"architectures": ("FooForCausalLM",), "num_nextn_predict_layers": 0})) == [("DM006", Severity.ERROR)]
    assert codes("DM006", ex(argv, {"architectures": ("Glm4MoeForCausalLM",), "num_nextn_predict_layers": 0})) == [("DM006", Severity.WARNING)]
    assert findings("DM006", ex(argv, {"architectures": ("Qwen3NextForCausalLM",), "num_nextn_predict_layers": 0})) == []
    assert findings("DM006", ex(argv, {})) == []  # nothing known
    assert findings("DM006", ex(argv, None)) == []


# ----------------------------------------------------------------------------- DM007 token map


def test_dm007_fix_removes_the_flag_and_is_safe() -> None:
    (found,) = findings("DM007", RULES_BY_CODE["DM007"].bad.context())
    assert found.fix is not None and found.fix.applicability.value == "safe"
    assert found.fix.edits[0].name == "--speculative-token-map" and found.fix.edits[0].value is None


# ----------------------------------------------------------------------------- DM008 architecture


@pytest.mark.parametrize(
    "algorithm,arch,layers,severity,fix_to",
    [
        ("EAGLE3", "Eagle3LlamaForCausalLM", 1, Severity.ERROR, None),
        ("EAGLE3", "LlamaForCausalLMEagle", 1, Severity.ERROR, "EAGLE"),
        ("EAGLE3", "LlamaForCausalLM", 1, Severity.ERROR, None),
        ("EAGLE3", "LlamaForCausalLMEagle3", 1, None, None),
        ("EAGLE", "LlamaForCausalLMEagle3", 1, Severity.ERROR, "EAGLE3"),
        ("EAGLE", "LlamaForCausalLMEagle", 1, None, None),
        ("EAGLE", "LlamaForCausalLM", 1, Severity.ERROR, None),
        ("EAGLE", "Qwen2ForCausalLM", 24, Severity.ERROR, None),
        ("EAGLE", "DeepseekV3ForCausalLMNextN", 1, None, None),
        ("EAGLE", "DeepseekV3ForCausalLM", 61, None, None),
        ("STANDALONE", "LlamaForCausalLMEagle3", 1, Severity.ERROR, "EAGLE3"),
        ("STANDALONE", "LlamaForCausalLMEagle", 1, Severity.ERROR, "EAGLE"),
        ("STANDALONE", "Qwen2ForCausalLM", 24, None, None),
        ("DFLASH", "DFlashDraftModel", 1, None, None),
        ("DFLASH", "LlamaForCausalLMEagle3", 1, Severity.ERROR, None),
    ],
)
def test_dm008_pairings(algorithm, arch, layers, severity, fix_to) -> None:
    ctx = ex(("--model-path", "t/t", "--speculative-algorithm", algorithm, "--speculative-draft-model-path", "d/d"),
             None, {"architectures": (arch,), "num_hidden_layers": layers})
    found = findings("DM008", ctx)
    if severity is None:
        assert found == []
        return
    assert [f.severity for f in found] == [severity]
    if fix_to is not None:
        assert found[0].fix is not None and found[0].fix.edits[0].value == fix_to


def test_dm008_real_fixtures() -> None:
    argv = ("--model-path", str(QWEN3_32B), *EAGLE3)
    assert codes("DM008", ctx_of(argv, facts(QWEN3_32B), facts(ANGELSLIM_QWEN3_32B))) == [("DM008", Severity.ERROR)]
    assert findings("DM008", ctx_of(argv, facts(QWEN3_32B), facts(SPECFORGE / "qwen3-32b-eagle3.json"))) == []
    yuhuili = ("--model-path", str(LLAMA2), "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", str(YUHUILI_EAGLE))
    (found,) = findings("DM008", ctx_of(yuhuili, facts(LLAMA2), facts(YUHUILI_EAGLE)))
    assert "LlamaForCausalLMEagle" in found.message
    dflash = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d/d")
    assert findings("DM008", ctx_of(dflash, None, facts(SPECFORGE / "qwen3-8b-dflash.json"))) == []


def test_dm008_unknown_architecture_is_quiet() -> None:
    assert findings("DM008", ex(("--model-path", "t/t", *EAGLE3), None, {})) == []


# ----------------------------------------------------------------------------- DM009 remote code


COMMIT = "67caf31f9062d7ab64872e0a111d499bc16cd205"


def test_dm009_boundaries() -> None:
    hub = {"has_remote_code": True, "revision": COMMIT}
    base = ("--model-path", "XiaomiMiMo/MiMo-7B-RL", "--speculative-algorithm", "EAGLE")
    assert findings("DM009", ex(base, hub)) == []  # no --trust-remote-code
    assert codes("DM009", ex((*base, "--trust-remote-code"), hub)) == [("DM009", Severity.WARNING)]
    assert codes("DM009", ex((*base, "--trust-remote-code", "--revision", "main"), hub)) == [("DM009", Severity.WARNING)]
    assert findings("DM009", ex((*base, "--trust-remote-code", "--revision", COMMIT), hub)) == []
    assert findings("DM009", ex((*base, "--trust-remote-code"), {"has_remote_code": False, "revision": COMMIT})) == []
    # a local org/name directory: read without a hub snapshot commit
    assert findings("DM009", ex((*base, "--trust-remote-code"), {"has_remote_code": True})) == []
    assert findings("DM009", ex(("--model-path", "/models/mimo", "--trust-remote-code"), {"has_remote_code": True})) == []


def test_dm009_draft_needs_its_own_pin() -> None:
    argv = ("--model-path", "/models/qwen3", "--trust-remote-code", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", "AngelSlim/Qwen3-32B_eagle3")
    draft = {"has_remote_code": True, "revision": COMMIT}
    (found,) = findings("DM009", ex(argv, {"has_remote_code": True}, draft))
    assert "--speculative-draft-model-revision" in found.message
    assert findings("DM009", ex((*argv, "--speculative-draft-model-revision", COMMIT), {"has_remote_code": True}, draft)) == []


def test_dm009_slime_always_trusts_remote_code() -> None:
    argv = ("--hf-checkpoint", "XiaomiMiMo/MiMo-7B-RL", "--sglang-speculative-algorithm", "EAGLE")
    (found,) = findings("DM009", ex(argv, {"has_remote_code": True, "revision": COMMIT}, dialect=Dialect.SLIME))
    assert "slime" in found.message and "--sglang-revision" in found.message


def test_is_hub_reference() -> None:
    assert is_hub_reference("org/name", None)
    assert not is_hub_reference("/abs/path", None)
    assert not is_hub_reference("./rel/path", None)
    assert not is_hub_reference("org/name", ModelFacts(source="org/name"))
    assert is_hub_reference("org/name", ModelFacts(source="org/name", revision=COMMIT))


# ----------------------------------------------------------------------------- DM010 draft path on MTP target


def test_dm010_separate_nextn_checkpoint_is_info_without_fix() -> None:
    argv = ("--model-path", str(DEEPSEEK_V3), "--speculative-algorithm", "NEXTN",
            "--speculative-draft-model-path", "lmsys/DeepSeek-V3-NextN")
    (found,) = findings("DM010", ctx_of(argv, facts(DEEPSEEK_V3), None))
    assert found.severity is Severity.INFO and found.fix is None


def test_dm010_quiet_for_mistral_large3_and_eagle3() -> None:
    mistral = {"architectures": ("MistralLarge3ForCausalLM",)}
    argv = ("--model-path", "m/m", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "m/eagle")
    assert findings("DM010", ex(argv, mistral)) == []
    ds = {"architectures": ("DeepseekV3ForCausalLM",)}
    assert findings("DM010", ex(("--model-path", "ds/ds", *EAGLE3), ds)) == []


# ----------------------------------------------------------------------------- DM011 Gemma4


def test_dm011_unified_assistant_and_other_algorithms() -> None:
    draft = {"architectures": ("Gemma4UnifiedAssistantForCausalLM",)}
    assert codes("DM011", ex(("--model-path", "g/g", *EAGLE3), None, draft)) == [("DM011", Severity.ERROR)]
    assert findings("DM011", ex(("--model-path", "g/g", "--speculative-algorithm", "NEXTN", "--speculative-draft-model-path", "d/d"), None, draft)) == []
    assert findings("DM011", ex(("--model-path", "g/g", *EAGLE3), None, {})) == []


# ----------------------------------------------------------------------------- DM012 context above target


def test_derived_context_length_rules() -> None:
    assert derived_context_length(facts(LLAMA31)) == 131072  # llama3 rope: factor ignored
    assert derived_context_length(facts(DEEPSEEK_V3)) == 163840  # yarn with original_max_position_embeddings
    assert derived_context_length(ModelFacts(source="x", max_position_embeddings=4096, rope_scaling={"type": "linear", "factor": 2.0})) == 8192
    assert derived_context_length(ModelFacts(source="x")) is None


@pytest.mark.parametrize("length,expected", [(131072, []), (131073, [("DM012", Severity.ERROR)])])
def test_dm012_boundary_with_real_llama31(length: int, expected) -> None:
    ctx = ctx_of(("--model-path", str(LLAMA31), "--context-length", str(length)), facts(LLAMA31), None)
    assert codes("DM012", ctx) == expected


def test_dm012_rope_factor_extends_the_limit_and_env_downgrades() -> None:
    target = {"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}
    assert findings("DM012", ex(("--model-path", "t/t", "--context-length", "8192"), target)) == []
    assert codes("DM012", ex(("--model-path", "t/t", "--context-length", "8193"), target)) == [("DM012", Severity.ERROR)]
    env = {"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"}
    assert codes("DM012", ex(("--model-path", "t/t", "--context-length", "8193"), target, env=env)) == [("DM012", Severity.WARNING)]
    assert findings("DM012", ex(("--model-path", "t/t", "--context-length", "8193"), {})) == []


# ----------------------------------------------------------------------------- DM013 aux layers


def test_dm013_real_templates() -> None:
    head = facts(SPECFORGE / "qwen3-235B-A22B-eagle3.json")
    assert findings("DM013", ctx_of(("--model-path", str(QWEN3_235B), *EAGLE3), facts(QWEN3_235B), head)) == []
    assert codes("DM013", ctx_of(("--model-path", str(QWEN3_32B), *EAGLE3), facts(QWEN3_32B), head)) == [("DM013", Severity.ERROR)]


@pytest.mark.parametrize("ids,fires", [((1, 31, 62), False), ((1, 31, 63), True), ((-1, 2, 3), True)])
def test_dm013_boundary(ids, fires: bool) -> None:
    ctx = ex(("--model-path", "t/t", *EAGLE3), {"num_hidden_layers": 64}, {"eagle_aux_hidden_state_layer_ids": ids})
    assert bool(findings("DM013", ctx)) is fires


# ----------------------------------------------------------------------------- DM001 with both dtype spellings


def test_dm001_transformers5_dtype_key(tmp_path: Path) -> None:
    config = json.loads((LLAMA31 / "config.json").read_text())
    config["dtype"] = config.pop("torch_dtype")
    target_dir = model_dir(tmp_path, "llama31-tf5", config)
    target = load_facts(str(target_dir))
    assert target.dtype_key == "dtype" and target.dtype == "bfloat16"
    draft = facts(SPECFORGE / "llama3-8B-eagle3.json")
    (found,) = findings("DM001", ctx_of(("--model-path", str(target_dir), *EAGLE3), target, draft))
    assert "(dtype)" in found.message and "(torch_dtype)" in found.message


# ----------------------------------------------------------------------------- end to end


def test_cli_end_to_end_eagle3_head_on_wrong_target(tmp_path: Path) -> None:
    draft_dir = model_dir(tmp_path, "llama-eagle3", json.loads((SPECFORGE / "llama3-8B-eagle3.json").read_text()))
    code, out = run_cli_json(
        "check", "--sglang-version", "0.5.23", "--gpu", "H100", "--offline", "--",
        "--model-path", str(QWEN3_32B), "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", str(draft_dir),
    )
    found = {f["code"]: f["severity"] for f in out["findings"]}
    assert code != 0
    assert found.get("DM003") == "error" and found.get("DM004") == "error"


def test_cli_end_to_end_mtp_on_non_mtp_target() -> None:
    code, out = run_cli_json("check", "--sglang-version", "0.5.23", "--gpu", "H100", "--offline", "--",
                             "--model-path", str(QWEN3_32B), "--speculative-algorithm", "NEXTN")
    assert code != 0
    assert any(f["code"] == "DM006" and f["severity"] == "error" for f in out["findings"])


# DM044: the FR-Spec token map gathers a vocab-sharded lm_head with global ids.
TOKEN_MAP_EAGLE = ("--model-path", "meta-llama/Meta-Llama-3-8B-Instruct", "--speculative-algorithm", "EAGLE",
                   "--speculative-draft-model-path", "lmsys/sglang-EAGLE-LLaMA3-Instruct-8B",
                   "--speculative-token-map", "thunlp/LLaMA3-Instruct-8B-FR-Spec/freq_32768.pt")


def _dm044(argv, version="0.5.23"):
    from specguard.rules import RULES_BY_CODE
    from specguard.rules.base import Example as _Example

    ctx = _Example(argv=argv, sglang_version=version).context()
    return [f.severity.value for f in RULES_BY_CODE["DM044"].check(ctx)]


def test_dm044_fires_with_tp_above_one_in_old_and_new_releases():
    assert _dm044(TOKEN_MAP_EAGLE + ("--tp-size", "2"), "0.4.5") == ["error"]
    assert _dm044(TOKEN_MAP_EAGLE + ("--tp", "8")) == ["error"]


def test_dm044_quiet_for_tp1_eagle3_no_map_and_dp_lm_head():
    assert _dm044(TOKEN_MAP_EAGLE) == []
    eagle3 = tuple("EAGLE3" if a == "EAGLE" else a for a in TOKEN_MAP_EAGLE)
    assert _dm044(eagle3 + ("--tp-size", "8")) == []
    no_map = TOKEN_MAP_EAGLE[:-2] + ("--tp-size", "4")
    assert _dm044(no_map) == []
    assert _dm044(TOKEN_MAP_EAGLE + ("--tp-size", "4", "--enable-dp-attention", "--dp-size", "4",
                                     "--enable-dp-lm-head")) == []


def test_dm044_nextn_is_the_eagle_worker_too():
    nextn = tuple("NEXTN" if a == "EAGLE" else a for a in TOKEN_MAP_EAGLE)
    assert _dm044(nextn + ("--tp-size", "2")) == ["error"]


# DM008 extensions: EAGLE3 on any ordinary causal-LM class; EAGLE on a reduced-vocabulary (EAGLE3) head.
def test_dm008_eagle3_head_saved_as_qwen3_class_is_error() -> None:
    argv = ("--model-path", "Qwen/Qwen3-14B", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", "Qwen3-14B-EAGLE3")
    got = codes("DM008", ex(argv, draft={"architectures": ("Qwen3ForCausalLM",), "hidden_size": 5120}))
    assert got == [("DM008", Severity.ERROR)]
    good = codes("DM008", ex(argv, draft={"architectures": ("LlamaForCausalLMEagle3",)}))
    assert good == []


def test_dm008_eagle_with_reduced_draft_vocab_is_error_without_architectures() -> None:
    argv = ("--model-path", "Qwen/Qwen3-30B-A3B", "--speculative-algorithm", "EAGLE",
            "--speculative-draft-model-path", "AngelSlim/Qwen3-a3B_eagle3")
    got = findings("DM008", ex(argv, draft={"vocab_size": 151936, "draft_vocab_size": 32000}))
    assert [f.severity for f in got] == [Severity.ERROR] and "EAGLE3" in got[0].message
    full_vocab = codes("DM008", ex(argv, draft={"vocab_size": 151936, "draft_vocab_size": 151936}))
    assert full_vocab == []
    eagle1 = codes("DM008", ex(argv, draft={"architectures": ("LlamaForCausalLMEagle",), "vocab_size": 128256}))
    assert eagle1 == []


def test_dm008_every_registered_eagle3_head_is_right_under_eagle3() -> None:
    """The MLA EAGLE3 head (Kimi K2.5/K2.6 ``*-eagle3-mla``, ``models/kimi_k25_eagle3.py:523`` EntryClass) is
    named ``...ForCausalLM``; DM008's old if/elif ladder reached the ordinary-causal-LM branch for it under
    EAGLE3 and called a correct pairing an error. The matrix decides by the most specific kind first."""
    argv = ("--model-path", "moonshotai/Kimi-K2.5", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", "lightseekorg/kimi-k2.5-eagle3-mla")
    assert codes("DM008", ex(argv, draft={"architectures": ("Eagle3DeepseekV2ForCausalLM",)})) == []
    eagle = ("--model-path", "moonshotai/Kimi-K2.5", "--speculative-algorithm", "EAGLE",
             "--speculative-draft-model-path", "lightseekorg/kimi-k2.5-eagle3-mla")
    (found,) = findings("DM008", ex(eagle, draft={"architectures": ("Eagle3DeepseekV2ForCausalLM",)}))
    assert found.fix is not None and "EAGLE3" in found.fix.title


def test_dm008_matrix_pairs() -> None:
    """One draft of each kind under each draft-checkpoint algorithm: which pairings are errors."""
    kinds = {
        "LlamaForCausalLMEagle3": {"EAGLE3": False, "EAGLE": True, "STANDALONE": True, "DFLASH": True},
        "Eagle3LlamaForCausalLM": {"EAGLE3": True, "EAGLE": True, "STANDALONE": True, "DFLASH": True},
        "LlamaForCausalLMEagle": {"EAGLE3": True, "EAGLE": False, "STANDALONE": True, "DFLASH": True},
        "DFlashDraftModel": {"EAGLE3": True, "EAGLE": True, "STANDALONE": True, "DFLASH": False},
        "Gemma4AssistantForCausalLM": {"EAGLE3": True, "EAGLE": True, "STANDALONE": True, "DFLASH": True},
        "Qwen3ForCausalLM": {"EAGLE3": True, "EAGLE": True, "STANDALONE": False, "DFLASH": True},
        "DeepseekV3ForCausalLMNextN": {"EAGLE3": False, "EAGLE": False, "STANDALONE": False, "DFLASH": True},
    }
    for arch, by_algorithm in kinds.items():
        for algorithm, wrong in by_algorithm.items():
            argv = ("--model-path", "t/t", "--speculative-algorithm", algorithm, "--speculative-draft-model-path", "d/d")
            got = codes("DM008", ex(argv, draft={"architectures": (arch,), "num_hidden_layers": 2}))
            assert bool(got) is wrong, (arch, algorithm, got)
