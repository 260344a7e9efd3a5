"""MM rules on the seed's OOM recipes, real fixtures, versions and unknown facts."""

from __future__ import annotations

import pytest

from specguard import engine
from specguard.dialects import parse
from specguard.environment import gpu_by_name
from specguard.facts import load_facts
from specguard.models import Applicability, Dialect, Environment, Severity
from specguard.rules import ALL_RULES
from specguard.rules.base import CheckContext
from specguard.rules.memory import MM001, MM002, MM003, MM004, RULES
from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS

LLAMA31 = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
EAGLE3_DRAFT = str(DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json")
LLAMA2 = str(HF_CONFIGS / "meta-llama" / "Llama-2-7b-chat-hf")
EAGLE_LLAMA2 = str(HF_CONFIGS / "yuhuili" / "EAGLE-llama2-chat-7B")
DEEPSEEK_V3 = str(HF_CONFIGS / "deepseek-ai" / "DeepSeek-V3")

# seed: sglang-speculative-decoding.md, "OOM Troubleshooting", Step 3, verbatim.
AGGRESSIVE_TREE = ("--speculative-num-steps", "5", "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "64")
CONSERVATIVE_TREE = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
# seed: "Quick OOM recovery recipe", verbatim (placeholders filled in below; --log-level dropped).
RECOVERY_RECIPE = (
    "--speculative-algorithm", "EAGLE",
    *CONSERVATIVE_TREE,
    "--cuda-graph-max-bs", "2",
    "--mem-fraction-static", "0.5",
    "--max-running-requests", "4",
)
# seed: the EAGLE3 launch pattern the docs use (--mem-fraction-static 0.7 --cuda-graph-max-bs 8).
SEED_EXAMPLE_MEMORY = ("--mem-fraction-static", "0.7", "--cuda-graph-max-bs", "8")


def context(argv, target, draft, gpu, version="0.5.23") -> CheckContext:
    env = Environment(sglang_version=version, gpu=gpu_by_name(gpu) if gpu else None)
    spec = parse(tuple(argv), Dialect.SGLANG)
    return CheckContext.build(spec, load_facts(target), load_facts(draft) if draft else None, env)


def mm_findings(ctx: CheckContext):
    return [f for rule in RULES if rule.applies_to(ctx) for f in rule.check(ctx)]


def loud(findings):
    return [f for f in findings if f.severity in (Severity.ERROR, Severity.WARNING)]


def llama31_eagle3(*extra: str) -> tuple[str, ...]:
    return ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", *extra)


# ------------------------------------------------------------------------------ seed recipes


def test_aggressive_tree_on_small_gpu_fires() -> None:
    ctx = context(llama31_eagle3(*AGGRESSIVE_TREE, *SEED_EXAMPLE_MEMORY, "--dtype", "float16"), LLAMA31, EAGLE3_DRAFT, "L4")
    codes = {f.code for f in loud(mm_findings(ctx))}
    # An L4 shows 22.5 GiB: the aggressive tree either does not fit at all (MM001) or leaves a KV
    # pool short of the requested concurrency (MM002); either way an OOM rule speaks up.
    assert codes & {"MM001", "MM002"} and "MM003" in codes


def test_aggressive_tree_breaks_the_headroom_where_the_conservative_tree_fits() -> None:
    """On an L4 with --mem-fraction-static 0.9 the aggressive tree's verify logits and kv_indices
    buffers outgrow the headroom; the conservative tree with the same memory split does not."""
    memory = ("--mem-fraction-static", "0.9", "--context-length", "2048", "--dtype", "float16")
    aggressive = context(llama31_eagle3(*AGGRESSIVE_TREE, *memory), LLAMA31, EAGLE3_DRAFT, "L4")
    conservative = context(llama31_eagle3(*CONSERVATIVE_TREE, *memory), LLAMA31, EAGLE3_DRAFT, "L4")
    errors = [f for f in mm_findings(aggressive) if f.code == "MM001"]
    assert errors and errors[0].severity is Severity.ERROR
    assert "CUDA graph capture" in errors[0].message
    assert errors[0].fix is not None and errors[0].fix.edits[0].name == "--mem-fraction-static"
    assert errors[0].fix.edits[0].value < 0.9  # step 1 lowers it
    assert not [f for f in mm_findings(conservative) if f.code == "MM001"]


def test_recovery_recipe_is_quiet_on_the_gpu_it_is_meant_for() -> None:
    """The recipe's 0.5 fraction is meant for a large GPU: on an H100 with the Llama-3.1 + EAGLE3
    pair (context capped at the draft's 2048, as DM002 requires) no memory rule warns."""
    argv = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-draft-model-path", "draft",
            *RECOVERY_RECIPE, "--context-length", "2048")
    ctx = context(argv, LLAMA31, EAGLE3_DRAFT, "H100", version="0.5.13")
    assert loud(mm_findings(ctx)) == []
    # MM003 notes, as info, that batches 3-4 run without graphs: the recipe chose that.
    assert [f.severity for f in mm_findings(ctx)] == [Severity.INFO]


def test_recovery_recipe_is_quiet_for_the_seeds_eagle_pair_on_a100_40gb() -> None:
    argv = ("--model-path", "meta-llama/Llama-2-7b-chat-hf", "--speculative-draft-model-path", "lmsys/sglang-EAGLE-llama2-chat-7B",
            *RECOVERY_RECIPE)
    ctx = context(argv, LLAMA2, EAGLE_LLAMA2, "A100-40GB", version="0.5.13")
    assert loud(mm_findings(ctx)) == []


def test_recovery_recipe_does_not_fit_an_l4_with_an_8b_model() -> None:
    """0.5 x 23 GiB cannot hold 15.7 GiB of weights: SGLang would raise after loading (0.5.13: when it sizes the
    target's pool, before the draft loads); step 1 raises the fraction."""
    argv = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-draft-model-path", "draft",
            *RECOVERY_RECIPE, "--context-length", "2048")
    ctx = context(argv, LLAMA31, EAGLE3_DRAFT, "L4", version="0.5.13")
    errors = [f for f in mm_findings(ctx) if f.code == "MM001"]
    assert errors and "Not enough memory. Please try to increase --mem-fraction-static" in errors[0].message
    assert errors[0].fix is not None and errors[0].fix.edits[0].value > 0.5


# ------------------------------------------------------------------------------ fixes


@pytest.mark.parametrize(("version", "flag"), [("0.5.13", "--cuda-graph-max-bs"), ("0.5.23", "--cuda-graph-max-bs-decode")])
def test_step_two_uses_the_versions_flag(version: str, flag: str) -> None:
    """A 30 GiB-class budget where step 1 alone cannot make room: steps 2+ are spelled for the version."""
    argv = llama31_eagle3(*AGGRESSIVE_TREE, "--mem-fraction-static", "0.6", "--max-running-requests", "48")
    ctx = context(argv, LLAMA31, EAGLE3_DRAFT, "L4", version=version)
    error = next(f for f in mm_findings(ctx) if f.code == "MM001")
    names = [e.name for e in error.fix.edits]
    assert names[0] == "--mem-fraction-static"
    if len(names) > 1:
        assert flag in names or "--speculative-num-steps" in names or "--max-running-requests" in names
        assert ({"--cuda-graph-max-bs", "--cuda-graph-max-bs-decode"} - {flag}).isdisjoint(names)


def test_fix_removes_the_old_graph_flag_where_it_no_longer_parses() -> None:
    argv = llama31_eagle3(*AGGRESSIVE_TREE, "--mem-fraction-static", "0.99", "--cuda-graph-max-bs", "48", "--context-length", "2048")
    ctx = context(argv, LLAMA31, EAGLE3_DRAFT, "L4", version="0.5.23")
    error = next(f for f in mm_findings(ctx) if f.code == "MM001")
    edits = {e.name: e.value for e in error.fix.edits}
    if "--cuda-graph-max-bs-decode" in edits:
        assert edits["--cuda-graph-max-bs"] is None


def test_unsafe_fixes_leave_no_memory_error() -> None:
    argv = llama31_eagle3(*AGGRESSIVE_TREE, "--mem-fraction-static", "0.85", "--context-length", "2048", "--dtype", "float16")
    ctx = context(argv, LLAMA31, EAGLE3_DRAFT, "L4")
    outcome = engine.check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    after = ctx.with_spec(outcome.corrected)
    assert not [f for f in MM001.RULE.check(after)]


# ------------------------------------------------------------------------------ real fixtures


def test_deepseek_v3_fp8_does_not_fit_one_h100_node_but_fits_h200() -> None:
    argv = ("--model-path", "deepseek-ai/DeepSeek-V3", "--speculative-algorithm", "EAGLE", "--tp-size", "8", "--trust-remote-code")
    h100 = context(argv, DEEPSEEK_V3, None, "H100")
    h200 = context(argv, DEEPSEEK_V3, None, "H200")
    assert [f.code for f in mm_findings(h100) if f.severity is Severity.ERROR] == ["MM001"]
    assert loud(mm_findings(h200)) == []


def test_default_launch_on_h100_is_quiet() -> None:
    ctx = context(llama31_eagle3(), LLAMA31, EAGLE3_DRAFT, "H100")
    assert loud(mm_findings(ctx)) == []


# ------------------------------------------------------------------------------ unknowns


@pytest.mark.parametrize("gpu", [None, "TPU", "cpu"])
def test_unknown_gpu_memory_stays_quiet(gpu) -> None:
    ctx = context(llama31_eagle3(*AGGRESSIVE_TREE, "--mem-fraction-static", "0.99"), LLAMA31, EAGLE3_DRAFT, gpu)
    assert [f for f in MM001.RULE.check(ctx)] == []
    assert [f for f in MM002.RULE.check(ctx)] == []


def test_unknown_target_shape_stays_quiet() -> None:
    from specguard.models import ModelFacts

    env = Environment(sglang_version="0.5.23", gpu=gpu_by_name("L4"))
    ctx = CheckContext.build(parse(llama31_eagle3("--mem-fraction-static", "0.1"), Dialect.SGLANG), ModelFacts(source="x"), None, env)
    assert mm_findings(ctx) == [] or all(f.code in ("MM003", "MM004") for f in mm_findings(ctx))


def test_no_speculation_no_graph_rules() -> None:
    ctx = context(("--model-path", "m", "--cuda-graph-bs-decode", "1", "2", "4", "32"), LLAMA31, None, "H100")
    assert [f for f in MM003.RULE.check(ctx)] == [] and [f for f in MM004.RULE.check(ctx)] == []


# ------------------------------------------------------------------------------ graph batch sizes


def test_slime_workaround_list_has_no_gaps() -> None:
    """seed: slime-speculative-decoding.en.md: $(seq 1 32) $(seq 40 8 64) $(seq 80 16 160)."""
    sizes = [*range(1, 33), *range(40, 65, 8), *range(80, 161, 16)]
    argv = llama31_eagle3("--cuda-graph-bs-decode", *map(str, sizes), "--max-running-requests", "160")
    assert [f for f in MM004.RULE.check(context(argv, LLAMA31, EAGLE3_DRAFT, "H100"))] == []


def test_gappy_list_fires_and_fix_uses_old_spelling_before_0_5_14() -> None:
    argv = llama31_eagle3("--cuda-graph-bs", "1", "2", "4", "8", "16", "32", "--max-running-requests", "48")
    findings = list(MM004.RULE.check(context(argv, LLAMA31, EAGLE3_DRAFT, "H100", version="0.5.13")))
    assert findings and findings[0].fix.edits[0].name == "--cuda-graph-bs"
    assert "17-25 -> 32" in findings[0].message


def test_mrr_above_graph_bs_is_a_warning_only_when_sglang_chose_the_48() -> None:
    auto = context(llama31_eagle3(*SEED_EXAMPLE_MEMORY), LLAMA31, EAGLE3_DRAFT, "H100", version="0.5.13")
    chosen = context(llama31_eagle3(*SEED_EXAMPLE_MEMORY, "--max-running-requests", "16"), LLAMA31, EAGLE3_DRAFT, "H100", version="0.5.13")
    assert [f.severity for f in MM003.RULE.check(auto)] == [Severity.WARNING]
    assert [(f.severity, f.fix) for f in MM003.RULE.check(chosen)] == [(Severity.INFO, None)]


def test_small_gpu_default_graph_max_bs_is_eight() -> None:
    """Below 20 GiB SGLang captures up to 8 (memory_hook.py); the auto 48 then runs eager above 8."""
    from specguard.resolution.cuda_graph import default_graph_max_bs

    assert default_graph_max_bs(16 * 1024, 1) == 8
    assert default_graph_max_bs(24 * 1024 * 0.99, 1) == 48
    assert default_graph_max_bs(80 * 1024 * 0.99, 8) == 512
