"""Sound fixes: each fix is computed on the launch as it stands after the fixes before it, and
every corrected launch passes a re-check of its own."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS, SHARED, run_cli

LLAMA = HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"
SLIME_SCRIPTS = Path(__file__).parent / "fixtures" / "slime" / "scripts"


@pytest.fixture
def slime_guide_without_context_cap(tmp_path: Path) -> Path:
    """slime's EAGLE3 guide array as published, less its `--sglang-context-length 2048` line: the
    case where a context cap and a memory fix used to be computed on the same stale launch."""
    text = (SHARED / "seeds" / "slime-speculative-decoding.en.md").read_text()
    block = next(m.group(1) for m in re.finditer(r"```(?:bash|sh|shell)[^\n]*\n(.*?)```", text, re.DOTALL) if "SGLANG_ARGS" in m.group(1))
    assert "--sglang-context-length 2048" in block and "--sglang-max-running-requests 48" in block
    script = tmp_path / "slime-guide.sh"
    script.write_text("".join(line for line in block.splitlines(keepends=True) if "--sglang-context-length" not in line))
    return script


@pytest.fixture
def eagle3_draft(tmp_path: Path) -> Path:
    draft = tmp_path / "draft"
    draft.mkdir()
    (draft / "config.json").write_text((DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json").read_text())
    return draft


def test_slime_guide_memory_is_computed_for_the_capped_context(slime_guide_without_context_cap: Path, eagle3_draft: Path) -> None:
    result = run_cli(
        "check", "--script", str(slime_guide_without_context_cap), "--target", str(LLAMA), "--draft", str(eagle3_draft),
        "--gpu", "H100", "--unsafe-fixes", "--explain-memory", "--format", "json",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    [launch] = json.loads(result.stdout)["launches"]
    changes = {c["flag"]: (c["old"], c["new"], c["rule"]) for c in launch["changes"]}
    assert changes["--context-length"] == (None, 2048, "DM002")
    # At 2048 tokens the guide's own memory settings fit: no memory fix sized for 131072 tokens
    # (mem fraction 0.8 -> 0.94, max running requests 48 -> 3) lands next to the cap.
    assert "--mem-fraction-static" not in changes and "--max-running-requests" not in changes
    argv = launch["argv"]
    assert argv[argv.index("--sglang-mem-fraction-static") + 1] == "0.8"
    assert argv[argv.index("--sglang-max-running-requests") + 1] == "48"
    memory = launch["memory"]
    assert memory["launch"] == "corrected" and memory["mem_fraction_static"] == 0.8
    mm002 = [f for f in launch["findings"] if f["code"] == "MM002"]
    # Its cause (131072 tokens) went away with the cap: resolved, but its own memory edits were
    # never made, so it is not reported applied.
    assert mm002 and all(f["resolved"] and not f["applied"] for f in mm002)


def test_a_finding_resolved_by_another_fix_does_not_claim_its_own_edits(slime_guide_without_context_cap: Path, eagle3_draft: Path) -> None:
    result = run_cli(
        "check", "--script", str(slime_guide_without_context_cap), "--target", str(LLAMA), "--draft", str(eagle3_draft),
        "--gpu", "H100", "--unsafe-fixes",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fix (unsafe, applied): raise --mem-fraction-static" not in result.stdout
    assert "its own fix was not made: raise --mem-fraction-static" in result.stdout


def test_without_the_cap_the_memory_fix_is_sized_for_the_long_context(slime_guide_without_context_cap: Path, eagle3_draft: Path) -> None:
    """The same launch with only safe fixes: the context is not capped (DM002's fix is unsafe),
    so the memory finding stands, computed on 131072 tokens."""
    result = run_cli(
        "check", "--script", str(slime_guide_without_context_cap), "--target", str(LLAMA), "--draft", str(eagle3_draft),
        "--gpu", "H100", "--fix", "--format", "json",
    )
    [launch] = json.loads(result.stdout)["launches"]
    assert "--context-length" not in {c["flag"] for c in launch["changes"]}
    assert any(f["code"] == "MM002" and not f["applied"] for f in launch["findings"])


def corrected_passes_recheck(args: list[str], fix: str) -> None:
    """Check with ``fix``, then check the corrected launch (argv and env as printed) with no fix:
    the re-check finds no error the fixed check did not report as remaining, and nothing left
    that the same fixes would still change."""
    split = args.index("--") if "--" in args else len(args)
    first = run_cli("check", *args[:split], fix, "--format", "json", *args[split:])
    assert first.returncode in (0, 1), first.stdout + first.stderr
    document = json.loads(first.stdout)
    launches = document.get("launches", [document])
    for launch in launches:
        env = [arg for key, value in launch["env"].items() for arg in ("--env", f"{key}={value}")]
        options = [a for a in args[:split] if a != "--script" and not a.endswith(".sh")]
        if "location" in launch:  # read from text: re-checked as the corrected command text
            entry = "python3 train.py" if launch["location"]["dialect"] == "slime" else "python3 -m sglang.launch_server"
            corrected = [f"{entry} {shlex.join(launch['argv'])}"]
        else:
            corrected = ["--", *launch["argv"]]
        second = run_cli("check", *options, *env, "--format", "json", *corrected)
        assert second.returncode in (0, 1), second.stdout + second.stderr
        recheck = json.loads(second.stdout)
        remaining = {f["code"] for f in launch["findings"] if f["severity"] == "error" and not f["resolved"]}
        assert {f["code"] for f in recheck["findings"] if f["severity"] == "error"} <= remaining
        again = run_cli("check", *options, *env, fix, "--format", "json", *corrected)
        assert json.loads(again.stdout)["changes"] == [], "the corrected launch is not a fixpoint"


def test_corrected_slime_guide_passes_recheck(slime_guide_without_context_cap: Path, eagle3_draft: Path) -> None:
    corrected_passes_recheck(["--script", str(slime_guide_without_context_cap), "--target", str(LLAMA), "--draft", str(eagle3_draft), "--gpu", "H100"], "--unsafe-fixes")


@pytest.mark.parametrize("script", ["run-glm4.7-30B-A3B.sh", "run-qwen3-next-80B-A3B.sh"])
def test_corrected_slime_scripts_pass_recheck(script: str) -> None:
    corrected_passes_recheck(["--script", str(SLIME_SCRIPTS / script), "--offline", "--gpu", "H100"], "--fix")


def test_corrected_sglang_docs_launch_passes_recheck(eagle3_draft: Path) -> None:
    corrected_passes_recheck(
        ["--gpu", "H100", "--draft", str(eagle3_draft), "--",
         "--model-path", str(LLAMA), "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "5",
         "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "64", "--cuda-graph-max-bs", "8", "--mem-fraction-static", "0.95"],
        "--unsafe-fixes",
    )


def test_corrected_slime_script_keeps_train_py_flags_out_of_sglang_args() -> None:
    result = run_cli("check", "--script", str(SLIME_SCRIPTS / "run-deepseek-r1.sh"), "--offline", "--fix")
    corrected = result.stdout.split("corrected launch:\n", 1)[1]
    array, train = corrected.split("\n)\n", 1)
    assert "--sglang-attn-dp-size 8" in array and "--actor-num-nodes" not in array and "--colocate" not in array
    assert train.startswith("python3 train.py \\\n    --actor-num-nodes 16") and '"${SGLANG_ARGS[@]}"' in train
