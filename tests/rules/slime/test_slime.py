"""SL rules beyond their documented examples: spellings, boundaries, fixture pairs, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specguard import engine
from specguard.dialects import render
from specguard.models import Applicability, Dialect, Severity
from specguard.rules import ALL_RULES, RULES_BY_CODE
from specguard.rules.base import Example
from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS, model_dir, run_cli_json

LLAMA31 = HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"
EAGLE3_TEMPLATE = DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json"


def slime(*argv: str, target=None, draft=None, env=None, version=None):
    return Example(argv=("--hf-checkpoint", "/root/model", *argv), target=target, draft=draft,
                   env=env or {}, dialect=Dialect.SLIME, sglang_version=version).context()


def run(code: str, ctx):
    rule = RULES_BY_CODE[code]
    return list(rule.check(ctx)) if rule.applies_to(ctx) else []


def test_sl_rules_do_not_apply_to_sglang_dialect() -> None:
    ctx = Example(argv=("--model-path", "m/m", "--dp-size", "2")).context()
    for code in ("SL001", "SL002", "SL003", "SL004"):
        assert not RULES_BY_CODE[code].applies_to(ctx)


# ----------------------------------------------------------------------------- SL001


@pytest.mark.parametrize(
    "flag,value,severity",
    [
        ("--sglang-model-path", "/root/other", Severity.ERROR),
        ("--sglang-tp-size", "2", Severity.ERROR),
        ("--sglang-tensor-parallel-size", "2", Severity.ERROR),
        ("--sglang-port", "30000", Severity.ERROR),
        ("--sglang-random-seed", "1", Severity.ERROR),
        ("--sglang-nccl-port", "1234", Severity.ERROR),
        ("--sglang-dist-init-addr", "1.2.3.4:5", Severity.ERROR),
        ("--sglang-enable-return-routed-experts", None, Severity.ERROR),
        ("--sglang-enable-memory-saver", None, Severity.ERROR),
        ("--sglang-trust-remote-code", None, Severity.WARNING),
        ("--sglang-skip-server-warmup", None, Severity.WARNING),
    ],
)
def test_sl001_each_skipped_flag(flag: str, value, severity: Severity) -> None:
    argv = (flag,) if value is None else (flag, value)
    found = run("SL001", slime(*argv))
    assert [f.severity for f in found] == [severity]
    assert flag in found[0].message


def test_sl001_slime_spellings_are_fine() -> None:
    ctx = slime("--rollout-num-gpus-per-engine", "4", "--fp16", "--sglang-speculative-algorithm", "EAGLE",
                "--sglang-router-ip", "10.0.0.1", "--sglang-server-concurrency", "256", "--sglang-config", "groups.yaml")
    assert run("SL001", ctx) == []
    assert run("SL003", ctx) == []


def test_sl001_sglang_dtype_is_info_about_older_slime() -> None:
    (found,) = run("SL001", slime("--sglang-dtype", "float16"))
    assert found.severity is Severity.INFO and "2026-01-04" in found.message and "--fp16" in found.message
    assert run("SL001", slime("--fp16")) == []


def test_sl001_fix_removes_only_the_sglang_spelling() -> None:
    ctx = slime("--sglang-random-seed", "7", "--sglang-speculative-algorithm", "EAGLE")
    outcome = engine.check(ALL_RULES, ctx, fix_level=Applicability.SAFE)
    rendered = render(outcome.corrected)
    assert "--sglang-random-seed" not in rendered and "--hf-checkpoint" in rendered


def test_sl001_no_fix_when_the_slime_flag_sets_the_same_field() -> None:
    (found,) = run("SL001", slime("--sglang-tp-size", "2", "--rollout-num-gpus-per-engine", "4"))
    assert found.fix is None  # removing --tp-size would drop --rollout-num-gpus-per-engine too
    (found,) = run("SL001", slime("--sglang-model-path", "/root/x"))
    assert found.fix is None  # --hf-checkpoint is the same field


# ----------------------------------------------------------------------------- SL003


def test_sl003_typo_gets_a_suggestion_and_rename_fix() -> None:
    (found,) = run("SL003", slime("--sglang-speculative-draft-model-pth", "/root/draft"))
    assert "--sglang-speculative-draft-model-path" in found.message
    assert found.fix is not None and found.fix.applicability is Applicability.UNSAFE


def test_sl003_unique_abbreviation_accepted_ambiguous_rejected() -> None:
    assert run("SL003", slime("--sglang-speculative-num-step", "3")) == []
    (found,) = run("SL003", slime("--sglang-speculative-draft", "/root/d"))
    assert "ambiguous" in found.message


def test_sl003_gibberish_without_suggestion_and_unknown_version_quiet() -> None:
    (found,) = run("SL003", slime("--sglang-zzqq-frobnicate", "1"))
    assert found.fix is None
    assert run("SL003", slime("--sglang-zzqq-frobnicate", "1", version="0.5.1")) == []  # no flag table shipped


def test_sl003_does_not_double_report_skipped_flags() -> None:
    assert run("SL003", slime("--sglang-tp-size", "2")) == []


# ----------------------------------------------------------------------------- SL004


@pytest.mark.parametrize(
    "argv,fires",
    [
        (("--sglang-dp-size", "1"), False),
        (("--sglang-dp-size", "2"), True),
        (("--sglang-data-parallel-size", "2"), True),
        (("--sglang-dp-size", "2", "--sglang-enable-dp-attention"), False),
        ((), False),
    ],
)
def test_sl004_boundaries(argv, fires: bool) -> None:
    assert bool(run("SL004", slime(*argv))) is fires


# ----------------------------------------------------------------------------- SL002


SPEC = ("--sglang-speculative-algorithm", "EAGLE3", "--sglang-speculative-draft-model-path", "/root/draft",
        "--sglang-context-length", "2048")
T, D = {"max_position_embeddings": 131072}, {"max_position_embeddings": 2048}


@pytest.mark.parametrize(
    "extra,severity",
    [
        ((), Severity.WARNING),
        (("--rollout-max-response-len", "1024"), Severity.WARNING),
        (("--rollout-max-response-len", "2048"), Severity.ERROR),
        (("--rollout-max-response-len", "2047", "--rollout-max-prompt-len", "1"), None),
        (("--rollout-max-response-len", "1024", "--rollout-max-prompt-len", "1025"), Severity.ERROR),
        (("--rollout-max-response-len", "1024", "--rollout-max-context-len", "2048"), Severity.ERROR),  # prompt default 2047
        (("--rollout-max-response-len", "1024", "--rollout-max-context-len", "2048", "--rollout-max-prompt-len", "1024"), None),
        (("--rollout-max-response-len", "1024", "--rollout-max-context-len", "2049"), Severity.ERROR),
        (("--rollout-max-response-len", "1024", "--rollout-max-context-len", "1500"), Severity.ERROR),
        (("--rollout-max-response-len", "4096", "--sglang-allow-auto-truncate"), Severity.WARNING),
    ],
)
def test_sl002_budget(extra, severity) -> None:
    found = run("SL002", slime(*SPEC, *extra, target=T, draft=D))
    assert [f.severity for f in found] == ([] if severity is None else [severity])


def test_sl002_quiet_when_draft_is_not_shorter_or_unknown_or_env_set() -> None:
    assert run("SL002", slime(*SPEC, target={"max_position_embeddings": 2048}, draft=D)) == []
    assert run("SL002", slime(*SPEC, target=T, draft={})) == []
    assert run("SL002", slime(*SPEC, target=T, draft=D, env={"SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN": "1"})) == []
    assert run("SL002", slime("--sglang-speculative-algorithm", "EAGLE", target=T, draft=D)) == []  # MTP: no separate draft


def test_sl002_smaller_sglang_context_is_the_cap() -> None:
    argv = ("--sglang-speculative-algorithm", "EAGLE3", "--sglang-speculative-draft-model-path", "/root/draft",
            "--sglang-context-length", "1024", "--rollout-max-response-len", "1024")
    (found,) = run("SL002", slime(*argv, target=T, draft=D))
    assert found.severity is Severity.ERROR and "1024 tokens" in found.message


# ----------------------------------------------------------------------------- end to end


def test_cli_end_to_end_slime_llama31_eagle3(tmp_path: Path) -> None:
    draft_dir = model_dir(tmp_path, "sglang-EAGLE3-LLaMA3.1-Instruct-8B", json.loads(EAGLE3_TEMPLATE.read_text()))
    code, out = run_cli_json(
        "check", "--sglang-version", "0.5.23", "--gpu", "H100", "--offline", "--",
        "--hf-checkpoint", str(LLAMA31), "--rollout-num-gpus-per-engine", "1",
        "--sglang-tp-size", "1", "--sglang-dp-size", "2",
        "--sglang-speculative-algorithm", "EAGLE3", "--sglang-speculative-draft-model-path", str(draft_dir),
        "--sglang-speculative-num-steps", "5", "--sglang-speculative-eagle-topk", "8",
        "--sglang-speculative-num-draft-tokens", "32", "--sglang-dtype", "float16",
        "--sglang-context-length", "2048", "--sglang-speculative-draft-modl-revision", "main",
        "--rollout-max-response-len", "4096",
    )
    found = {}
    for f in out["findings"]:
        found.setdefault(f["code"], f["severity"])
    assert code != 0
    assert found.get("SL001") == "error"  # --sglang-tp-size
    assert found.get("SL002") == "error"  # 4096 > 2048
    assert found.get("SL003") == "error"  # typo
    assert found.get("SL004") == "error"  # dp 2 without dp attention
    assert "DM001" not in found and "DM002" not in found  # dtype and context given


# ----------------------------------------------------------------------------- SL080

MTP_CHAIN = ("--sglang-speculative-algorithm", "EAGLE", "--sglang-speculative-num-steps", "2",
             "--sglang-speculative-eagle-topk", "1", "--sglang-speculative-num-draft-tokens", "3")


@pytest.mark.parametrize(("version", "flag"), [
    ("0.5.2", None),  # no CPU backup at all before 0.5.3
    ("0.5.3", "--enable-weights-cpu-backup"),
    ("0.5.5", "--enable-weights-cpu-backup"),
    ("0.5.5.post3", "--enable-draft-weights-cpu-backup"),
    ("0.5.23", "--enable-draft-weights-cpu-backup"),
])
def test_sl080_backup_flag_by_release(version, flag):
    findings = run("SL080", slime(*MTP_CHAIN, "--colocate", version=version))
    assert len(findings) == 1 and findings[0].severity is Severity.WARNING
    if flag is None:
        assert findings[0].fix is None and "0.5.3" in findings[0].message
    else:
        assert findings[0].flags == (flag,)
        assert findings[0].fix.edits[0].name == flag
        assert "--sglang-" + flag[2:] in findings[0].message


@pytest.mark.parametrize("offload", [("--colocate",), ("--offload-rollout",), ("--offload",)])
def test_sl080_every_way_slime_offloads_rollout(offload):
    assert run("SL080", slime(*MTP_CHAIN, *offload, version="0.5.23"))


@pytest.mark.parametrize("extra", [
    (),  # not colocated, not offloaded: the engine keeps its weights
    ("--colocate", "--no-offload-rollout"),
    ("--colocate", "--debug-rollout-only"),
    ("--colocate", "--sglang-enable-draft-weights-cpu-backup"),
    ("--colocate", "--sglang-enable-weights-cpu-backup"),
    ("--colocate", "--mtp-num-layers", "1"),  # Megatron holds the MTP layer: weight sync refills it
    ("--colocate", "--mtp-num-layers", "1", "--enable-mtp-training"),
])
def test_sl080_quiet(extra):
    assert run("SL080", slime(*MTP_CHAIN, *extra, version="0.5.23")) == []


def test_sl080_ngram_has_no_draft_weights():
    assert run("SL080", slime("--sglang-speculative-algorithm", "NGRAM", "--colocate", version="0.5.23")) == []


def test_sl080_only_slime():
    ctx = Example(argv=("--model-path", "m/m", "--speculative-algorithm", "EAGLE")).context()
    assert not RULES_BY_CODE["SL080"].applies_to(ctx)
