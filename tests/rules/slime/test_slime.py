"""SL rules where data cannot say it: the dialect gate across the family and a whole slime launch
through the CLI. The spellings and boundaries are cases in tests/rules/cases/SL*.yaml."""

from __future__ import annotations

import json
from pathlib import Path

from specguard.rules import RULES_BY_CODE
from specguard.rules.base import Example
from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS, model_dir, run_cli_json

SLIME_SCRIPTS = Path(__file__).parents[2] / "cli" / "fixtures" / "slime" / "scripts"

LLAMA31 = HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"
EAGLE3_TEMPLATE = DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json"


def test_sl_rules_do_not_apply_to_sglang_dialect() -> None:
    ctx = Example(argv=("--model-path", "m/m", "--dp-size", "2")).context()
    for code in ("SL001", "SL002", "SL003", "SL004", "SL005", "SL080"):
        assert not RULES_BY_CODE[code].applies_to(ctx)


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


def test_cli_script_with_a_misspelled_slime_flag(tmp_path: Path) -> None:
    """slime's MiMo EAGLE script with one of its own flags misspelled: checked as a script, the
    typo is named with its correction; Megatron's flags in the same script are not reported."""
    text = (SLIME_SCRIPTS / "run-mimo-7B-rl-eagle.sh").read_text()
    assert "--rollout-max-response-len 8192" in text and "--tensor-model-parallel-size 2" in text
    script = tmp_path / "run-mimo-7B-rl-eagle.sh"
    script.write_text(text.replace("--rollout-max-response-len 8192", "--rollout-max-respons-len 8192"))
    for extra, named in ((("--slime-version", "v0.3.1"), "slime v0.3.1"), ((), "no --slime-version given")):
        _code, out = run_cli_json("check", "--script", str(script), "--offline", "--gpu", "H100", *extra)
        [launch] = out["launches"]
        sl005 = [f for f in launch["findings"] if f["code"] == "SL005"]
        assert len(sl005) == 1, sl005
        assert sl005[0]["severity"] == "warning" and named in sl005[0]["message"]
        assert "did you mean --rollout-max-response-len?" in sl005[0]["message"]
        assert "ignore_unknown_args" in sl005[0]["message"]
