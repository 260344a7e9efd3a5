"""JX rules where data cannot say it: every JX rule together on the validated TPU command, the
dialect gate, the CLI, the sgl-jax build. Each rule's own cases are data: tests/rules/cases/JX*.yaml."""

from __future__ import annotations

import pytest

from specguard import engine
from specguard.models import Dialect, Severity
from specguard.rules import ALL_RULES
from specguard.rules.base import Example
from specguard.rules.sgl_jax import (
    JX001_paged_kv_needs_fa as JX001,
)
from specguard.rules.sgl_jax import (
    JX002_overlap_scheduler_speculative as JX002,
)
from specguard.rules.sgl_jax import (
    JX003_sglang_only_attention_backend as JX003,
)
from specguard.rules.sgl_jax import (
    JX004_chain_draft_tokens_not_rewritten as JX004,
)
from specguard.rules.sgl_jax import (
    JX005_sgl_jax_dflash_constraints as JX005,
)
from specguard.rules.sgl_jax import (
    JX006_tree_draft_unusable_on_tpu as JX006,
)
from specguard.rules.sgl_jax import (
    JX007_algorithm_not_in_sgl_jax as JX007,
)
from specguard.rules.sgl_jax import (
    JX080_dflash_grammar_backend_default as JX080,
)
from tests.conftest import HF_CONFIGS, run_cli_json

BASE = ("--model-path", "Qwen/Qwen3-32B", "--speculative-draft-model-path", "AngelSlim/Qwen3-32B_eagle3")
CHAIN = ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4")
VALIDATED = (*BASE, "--speculative-algorithm", "EAGLE3", *CHAIN, "--attention-backend", "fa", "--page-size", "64",
             "--disable-overlap-schedule", "--tp-size", "4", "--dtype", "bfloat16")


def fired(rule, *argv, dialect=Dialect.SGL_JAX):
    ctx = Example(argv=argv, dialect=dialect, gpu="TPU-v6e").context()
    return list(rule.check(ctx)) if rule.applies_to(ctx) else []


def test_the_validated_tpu_command_is_clean_for_every_jx_rule():
    ctx = Example(argv=VALIDATED, dialect=Dialect.SGL_JAX, gpu="TPU-v6e").context()
    assert [f for f in engine.run_rules(ALL_RULES, ctx) if f.code.startswith("JX")] == []


@pytest.mark.parametrize("rule", [JX001, JX002, JX003, JX004, JX005, JX006, JX007, JX080])
def test_jx_rules_never_fire_for_sglang_dialect(rule):
    assert fired(rule.RULE, *rule.RULE.bad.argv, dialect=Dialect.SGLANG) == []


def test_cli_end_to_end_sgl_jax_dialect():
    qwen = str(HF_CONFIGS / "Qwen" / "Qwen3-32B")
    argv = ("--model-path", qwen, "--speculative-algorithm", "EAGLE3", *CHAIN, "--attention-backend", "fa3",
            "--page-size", "64")
    code, doc = run_cli_json("check", "--offline", "--dialect", "sgl-jax", "--gpu", "TPU-v6e", "--", *argv)
    errors = {f["code"] for f in doc["findings"] if f["severity"] == "error"}
    assert code == 1 and "JX003" in errors and not any(c.startswith(("AB", "VB")) for c in errors)
    code, doc = run_cli_json("check", "--offline", "--unsafe-fixes", "--dialect", "sgl-jax", "--gpu", "TPU-v6e", "--", *argv)
    assert doc["argv"][doc["argv"].index("--attention-backend") + 1] == "fa"
    assert not [f for f in doc["findings"] if f["code"].startswith("JX") and f["severity"] == "error" and not f["resolved"]]


def test_sp001_is_sglang_auto_choice_not_sgl_jax():
    """sgl-jax fills unset steps/topk/draft tokens with fixed defaults; SGLang's partial-set crash does not apply."""
    from specguard.rules.spec_params import SP001_spec_params_partially_set as SP001

    argv = (*BASE, "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3")
    assert fired(SP001.RULE, *argv) == []
    assert fired(SP001.RULE, *argv, dialect=Dialect.SGLANG) != []


# ----------------------------------------------------------------------------- the sgl-jax build


def _jx(module, *argv: str, build: str | None = None):
    ctx = Example(argv=argv, dialect=Dialect.SGL_JAX, gpu="TPU-v6e", sgl_jax_version=build).context()
    return list(module.RULE.check(ctx)) if module.RULE.applies_to(ctx) else []


def test_jx002_a_build_before_1293_needs_the_flag_even_for_a_supported_chain() -> None:
    supported = (*BASE, "--speculative-algorithm", "EAGLE3", *CHAIN, "--attention-backend", "fa")
    (before,) = _jx(JX002, *supported, build="2026-06-23")
    assert before.severity is Severity.ERROR and "predates sglang-jax #1293" in before.message
    assert before.fix is not None
    (after,) = _jx(JX002, *supported, build="0348ee13")  # the commit of #1534 itself
    assert after.severity is Severity.INFO
    (unknown,) = _jx(JX002, *supported)  # no build named: the HEAD the rules were read at
    assert unknown.severity is Severity.INFO and "builds before that change" in unknown.message
    assert _jx(JX002, *supported, "--disable-overlap-schedule", build="2026-06-23") == []


def test_jx002_eagle3_on_fa_may_overlap_only_from_1534() -> None:
    """The ledger's 0348ee13 unit: #1293 let NEXTN chains overlap, EAGLE3 on fa came with #1534."""
    supported = (*BASE, "--speculative-algorithm", "EAGLE3", *CHAIN, "--attention-backend", "fa")
    for build in ("b735f16e", "4406938a", "2026-08-20"):
        (between,) = _jx(JX002, *supported, build=build)
        assert between.severity is Severity.ERROR and "predates sglang-jax #1534" in between.message, build
        assert between.fix is not None
    (from_1534,) = _jx(JX002, *supported, build="0348ee13")
    assert from_1534.severity is Severity.INFO and "since sglang-jax #1534" in from_1534.message
    nextn = (*BASE, "--speculative-algorithm", "NEXTN", *CHAIN)
    assert _jx(JX002, *nextn, build="b735f16e") == []


def test_jx007_choices_follow_the_build() -> None:
    dflash = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "z-lab/Qwen3-8B-DFlash-b16")
    assert _jx(JX007, *dflash) == []
    assert _jx(JX007, *dflash, build="4406938a") == []  # #1467 brought DFLASH
    (before,) = _jx(JX007, *dflash, build="v0.0.3rc98")
    assert "not in this sgl-jax build (2026-05-27" in before.message and "DFLASH" not in before.message.split("choices: ")[1]
    eagle3 = (*BASE, "--speculative-algorithm", "EAGLE3")
    (pypi,) = _jx(JX007, *eagle3, build="0.0.1.post1")
    assert "predates speculative decoding" in pypi.message and "PyPI" in pypi.message
    assert _jx(JX007, *eagle3, build="f671c326") == []


def test_jx007_nextn_passes_argparse_but_has_no_worker_before_1192() -> None:
    nextn = (*BASE, "--speculative-algorithm", "NEXTN", *CHAIN)
    for build in ("f671c326", "v0.0.3rc98", "2026-05-27"):
        (finding,) = _jx(JX007, *nextn, build=build)
        assert "KeyError: 'NEXTN'" in finding.message and "#1192" in finding.message, build
    for build in ("2026-05-28", "b735f16e", None):
        assert _jx(JX007, *nextn, build=build) == [], build


# A launch whose facts are at hand (the target's config.json; NEXTN needs no draft path).
LOCAL_NEXTN = ("--model-path", str(HF_CONFIGS / "Qwen" / "Qwen3-32B"), "--speculative-algorithm", "NEXTN", *CHAIN)


def test_sgl_jax_build_named_on_the_command_line() -> None:
    argv = ("check", "--dialect", "sgl-jax", "--gpu", "TPU-v6e", "--offline", "--sgl-jax-version", "v0.0.3rc98",
            "--", *LOCAL_NEXTN)
    code, report = run_cli_json(*argv)
    assert report["environment"]["sgl_jax_build"] == "2026-05-27"  # the tag's code is main's of 2026-05-27
    assert report["environment"]["sgl_jax_build_source"].startswith("given: v0.0.3rc98")
    assert code == 1 and [f["severity"] for f in report["findings"] if f["code"] == "JX002"] == ["error"]
    code, report = run_cli_json(*[a if a != "v0.0.3rc98" else "2026-07-01" for a in argv])
    assert report["environment"]["sgl_jax_build"] == "2026-07-01"
    assert not [f for f in report["findings"] if f["code"] == "JX002"]  # a NEXTN chain may overlap since #1293


def test_sgl_jax_build_unknown_is_said_and_a_bad_one_is_an_error() -> None:
    from tests.conftest import run_cli

    launch = ("--", *LOCAL_NEXTN, "--disable-overlap-schedule")
    _code, report = run_cli_json("check", "--dialect", "sgl-jax", "--offline", *launch)
    assert report["environment"]["sgl_jax_build"] is None
    assert "give --sgl-jax-version" in report["environment"]["sgl_jax_build_source"]
    human = run_cli("check", "--dialect", "sgl-jax", "--offline", *launch)
    assert "sgl-jax build unknown" in human.stdout and "SGLang 0.5" not in human.stdout.splitlines()[0]
    bad = run_cli("check", "--dialect", "sgl-jax", "--offline", "--sgl-jax-version", "not-a-build", *launch)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--sgl-jax-version not-a-build" in bad.stderr
    assert "Traceback" not in bad.stderr
    wrong = run_cli("check", "--offline", "--sgl-jax-version", "2026-07-01", "--", *LOCAL_NEXTN)
    assert wrong.returncode == 2 and "not an sgl-jax launch" in wrong.stderr


@pytest.mark.parametrize("draft_class", ["Eagle3LlamaForCausalLM", "Qwen3ForCausalLMEagle3"])
@pytest.mark.parametrize("form", ["dialect", "module"])
def test_local_model_dirs_are_not_judged_by_sglangs_registry(tmp_path, draft_class: str, form: str) -> None:
    """SGLang's registry lacks both draft classes (DM008, VB012 on an SGLang launch); sgl-jax
    loads from its own, so an sgl-jax launch gets neither rule."""
    import json

    from tests.conftest import DRAFT_TEMPLATES, model_dir

    draft_config = json.loads((DRAFT_TEMPLATES / "sgl-project-SpecForge" / "qwen3-32b-eagle3.json").read_text())
    draft = model_dir(tmp_path, "draft", {**draft_config, "architectures": [draft_class]})
    target = HF_CONFIGS / "Qwen" / "Qwen3-32B"
    args = ["--model-path", str(target), "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(draft), *CHAIN]
    _, sglang = run_cli_json("check", "--offline", "--", *args)
    assert {"DM008", "VB012"} & {f["code"] for f in sglang["findings"]}
    if form == "dialect":
        _, doc = run_cli_json("check", "--offline", "--dialect", "sgl-jax", "--", *args)
    else:
        _, doc = run_cli_json("check", "--offline", " ".join(["python -m sgl_jax.launch_server", *args]))
    assert not {"DM008", "VB012"} & {f["code"] for f in doc["findings"]}
