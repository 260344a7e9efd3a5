"""Which SGLang a launch is checked against, as a user sees it: inferred from its flags, given,
pinned in a requirements file, newer than known; and the flags of other releases named."""

from __future__ import annotations

from pathlib import Path

from specguard.environment import NEWEST_KNOWN_SGLANG
from tests.conftest import HF_CONFIGS, run_cli, run_cli_json

LLAMA = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
# The seed guide's EAGLE example, verbatim (seeds/sglang-speculative-decoding.md, "EAGLE-2 Decoding").
SEED_EAGLE = (
    "python3 -m sglang.launch_server --model meta-llama/Llama-2-7b-chat-hf --speculative-algorithm EAGLE "
    "--speculative-draft-model-path lmsys/sglang-EAGLE-llama2-chat-7B --speculative-num-steps 3 "
    "--speculative-eagle-topk 4 --speculative-num-draft-tokens 16 --mem-fraction-static 0.7 "
    "--cuda-graph-max-bs 8 --log-level warning"
)
# slime's guide (seeds/slime-speculative-decoding.en.md) with the cuda-graph flag slime scripts pass.
SLIME = ("--", "--hf-checkpoint", LLAMA, "--sglang-speculative-algorithm", "NGRAM", "--sglang-cuda-graph-max-bs", "8")


def _errors_about(doc: dict, flag: str) -> list[dict]:
    return [f for f in doc["findings"] if f["severity"] == "error" and any(flag in name for name in f["flags"])]


def test_seed_example_without_version_is_checked_as_the_release_that_accepts_it():
    _code, doc = run_cli_json("check", "--offline", SEED_EAGLE)
    env = doc["environment"]
    assert (env["sglang_version"], env["sglang_version_source"]) == ("0.5.19", "inferred from flags")
    assert env["sglang_version_range"] == ["0.4.1.post5", "0.5.19"]
    assert _errors_about(doc, "--cuda-graph-max-bs") == []
    human = run_cli("check", "--offline", SEED_EAGLE).stdout
    assert "SGLang 0.5.19 (inferred from flags)" in human and "accepted by 0.4.1.post5 to 0.5.19" in human


def test_the_same_launch_on_0_5_23_gets_the_migration_error_and_the_corrected_flag():
    _code, doc = run_cli_json("check", "--offline", "--sglang-version", "0.5.23", "--fix", SEED_EAGLE)
    assert doc["environment"]["sglang_version_source"] == "given"
    [finding] = _errors_about(doc, "--cuda-graph-max-bs")
    assert finding["code"] == "VB003" and finding["applied"]
    assert "--cuda-graph-max-bs-decode" in doc["argv"] and "--cuda-graph-max-bs" not in doc["argv"]


def test_slime_launch_without_version_is_inferred_too():
    _code, doc = run_cli_json("check", "--offline", *SLIME)
    assert doc["environment"]["sglang_version_source"] == "inferred from flags"
    assert _errors_about(doc, "--cuda-graph-max-bs") == []


def test_flags_from_releases_that_never_coexisted_are_named():
    code, doc = run_cli_json("check", "--offline", "--", "--model-path", LLAMA, "--speculative-algorithm", "NGRAM",
                             "--enable-flashinfer-mla", "--cuda-graph-max-bs-decode", "8")
    env = doc["environment"]
    assert (env["sglang_version"], env["sglang_version_source"]) == (NEWEST_KNOWN_SGLANG, "default")
    assert "--enable-flashinfer-mla (0.4.3 to 0.4.7)" in env["sglang_version_note"]
    assert "--cuda-graph-max-bs-decode (from 0.5.14)" in env["sglang_version_note"]
    [vb010] = [f for f in doc["findings"] if f["code"] == "VB010"]
    assert vb010["severity"] == "error" and "exists in 0.4.3 to 0.4.7" in vb010["message"]
    assert code == 1


def test_a_flag_that_arrives_later_names_its_release_and_the_rename():
    _code, doc = run_cli_json("check", "--offline", "--sglang-version", "0.5.5", "--", "--model-path", LLAMA,
                             "--speculative-algorithm", "NGRAM", "--cuda-graph-max-bs-decode", "8")
    [finding] = _errors_about(doc, "--cuda-graph-max-bs")
    assert "added in 0.5.14" in finding["message"]
    assert finding["fix"]["edits"][1] == {"flag": "--cuda-graph-max-bs", "value": "8"}


def test_a_renamed_flag_of_the_history_gets_the_new_spelling():
    _code, doc = run_cli_json("check", "--offline", "--sglang-version", "0.5.23", "--", "--model-path", LLAMA,
                             "--nsa-prefill-backend", "flashmla_sparse")
    [finding] = [f for f in doc["findings"] if f["code"] == "VB010"]
    assert "exists in 0.5.4 to 0.5.19; 0.5.20 renamed it --dsa-prefill-backend" in finding["message"]
    assert finding["fix"]["edits"][1]["flag"] == "--dsa-prefill-backend"


def test_version_newer_than_known_is_checked_as_the_newest_with_a_warning():
    _code, doc = run_cli_json("check", "--offline", "--sglang-version", "0.6.0", "--", "--model-path", LLAMA)
    env = doc["environment"]
    assert env["sglang_version"] == NEWEST_KNOWN_SGLANG and env["sglang_version_source"] == "given"
    assert "0.6.0 is newer than the newest release specguard knows" in env["sglang_version_note"]


def test_requirements_file_names_the_version(tmp_path: Path):
    pinned = tmp_path / "requirements.txt"
    pinned.write_text("torch==2.8.0\nsglang[all]==0.5.5  # the release we deploy\n", encoding="utf-8")
    _code, doc = run_cli_json("check", "--offline", "--requirements", str(pinned), "--", "--model-path", LLAMA)
    assert doc["environment"]["sglang_version"] == "0.5.5"
    assert doc["environment"]["sglang_version_source"] == f"requirements file {pinned}"
    # --sglang-version wins.
    _code, doc = run_cli_json("check", "--offline", "--requirements", str(pinned), "--sglang-version", "0.5.9", "--", "--model-path", LLAMA)
    assert doc["environment"]["sglang_version"] == "0.5.9"


def test_requirements_file_without_a_pin_is_bad_input(tmp_path: Path):
    unpinned = tmp_path / "requirements.txt"
    unpinned.write_text("sglang>=0.5\n", encoding="utf-8")
    result = run_cli("check", "--offline", "--requirements", str(unpinned), "--", "--model-path", LLAMA)
    assert result.returncode == 2 and "pins no sglang release" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def test_slime_version_names_the_sglang_its_docker_image_pins():
    _code, doc = run_cli_json("check", "--offline", "--slime-version", "v0.3.0", *SLIME)
    env = doc["environment"]
    assert env["sglang_version"] == "0.5.12.post1"
    assert env["sglang_version_source"] == "slime v0.3.0 (slimerl/sglang:v0.5.12.post1-cu129: docker/Dockerfile at bf14dc21f: image tag)"
    # slime v0.3.0's SGLang still accepts --sglang-cuda-graph-max-bs.
    assert _errors_about(doc, "--cuda-graph-max-bs") == []
    result = run_cli("check", "--offline", "--slime-version", "v0.1.0", *SLIME)
    assert result.returncode == 2 and "--slime-version v0.1.0: no SGLang pin known" in result.stderr + result.stdout
    # A commit of slime's history: its Dockerfile then built FROM slimerl/sglang:v0.5.13-cu129.
    _code, doc = run_cli_json("check", "--offline", "--slime-version", "474861aaf", *SLIME)
    assert doc["environment"]["sglang_version"] == "0.5.13"
    assert doc["environment"]["sglang_version_source"].startswith("slime 474861aaf (slimerl/sglang:v0.5.13-cu129")
    unknown = run_cli("check", "--offline", "--slime-version", "deadbeef0", *SLIME)
    assert unknown.returncode == 2 and "a commit of github.com/THUDM/slime" in unknown.stderr + unknown.stdout
