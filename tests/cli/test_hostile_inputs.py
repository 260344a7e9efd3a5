"""Hostile input, table-driven: each row builds its input in tmp_path, runs the real CLI in a
subprocess, and must get exit code 2 and one line on stderr that names the file (and key) or the
option, never a traceback or "internal error"; a flag value SGLang refuses (a 5000-digit --tp-size
too) is instead one VB013 error finding that names the flag, exit 1, beside every other finding. The inputs: numbers too long for Python's int
parser, nesting too deep for its json module, NaN and 1e999, shapes that are no shapes, names that
lead out of a model folder, non-regular files, binary text, a full cache disk, and values of the
right type that specguard cannot interpret (``torch_dtype: banana16``)."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import DRAFT_TEMPLATES, HF_CONFIGS, REPO, run_cli

LLAMA = HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct"
LLAMA_CONFIG = json.loads((LLAMA / "config.json").read_text())
DSV3_CONFIG = json.loads((HF_CONFIGS / "deepseek-ai" / "DeepSeek-V3" / "config.json").read_text())
QWEN_CONFIG = json.loads((HF_CONFIGS / "Qwen" / "Qwen2.5-7B-Instruct" / "config.json").read_text())
EAGLE3_CONFIG = json.loads((DRAFT_TEMPLATES / "sgl-project-SpecForge" / "llama3-8B-eagle3.json").read_text())
DIGITS = "9" * 5000
DEEP = "[" * 200_000 + "]" * 200_000
TIMEOUT = 30


@dataclass(frozen=True)
class Row:
    id: str
    # Writes the input under the given folder; returns the argv after `specguard` and the strings
    # the one error line must hold (the file and key, or the flag).
    build: Callable[[Path], tuple[list[str], list[str]]]
    env: dict[str, str] = field(default_factory=dict)
    # A flag value SGLang refuses is a VB013 error finding (exit 1), not unreadable input: the
    # row then holds the finding to the same standard (no traceback, the value not echoed whole).
    refused: bool = False


# --------------------------------------------------------------------------------------------
# Builders


def _with(config: dict, dotted: str, value: object) -> dict:
    changed = json.loads(json.dumps(config))
    *parents, last = dotted.split(".")
    section = changed
    for key in parents:
        section = section.setdefault(key, {})
    section[last] = value
    return changed


def preset_snapshot_key(id: str, dotted: str, value: object) -> Row:
    """A user's preset whose target snapshot (a config.json beside it) holds the bad value."""

    def build(tmp: Path) -> tuple[list[str], list[str]]:
        (tmp / "snapshot.json").write_text(json.dumps(_with(LLAMA_CONFIG, dotted, value)))
        (tmp / "mine.yaml").write_text(
            "name: mine\ndescription: a user's preset\nsources: [here]\nruntime: sglang\n"
            "target: {model: org/target, config: snapshot.json, config_source: here}\n"
            "flags:\n  speculative-algorithm: NGRAM\n"
        )
        return ["check", "--offline", "--gpu", "H100", "--preset", str(tmp / "mine.yaml")], [str(tmp / "snapshot.json"), dotted]

    return Row(id, build)


def _eagle3(draft: Path) -> list[str]:
    return ["check", "--offline", "--gpu", "H100", "--", "--model-path", str(LLAMA), "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", str(draft)]


def target_key(id: str, dotted: str, value: object, base: dict = LLAMA_CONFIG) -> Row:
    """The target's config.json with ``dotted`` set to ``value`` (JSON); named file and key."""

    def build(tmp: Path) -> tuple[list[str], list[str]]:
        (tmp / "t").mkdir()
        (tmp / "t" / "config.json").write_text(json.dumps(_with(base, dotted, value)))
        args = ["check", "--offline", "--gpu", "H100", "--explain-memory", "--", "--model-path", str(tmp / "t")]
        if base is DSV3_CONFIG:
            args += ["--tp-size", "8", "--trust-remote-code"]
        return args, [str(tmp / "t" / "config.json"), dotted]

    return Row(id, build)


def draft_key(id: str, dotted: str, value: object) -> Row:
    def build(tmp: Path) -> tuple[list[str], list[str]]:
        (tmp / "d").mkdir()
        (tmp / "d" / "config.json").write_text(json.dumps(_with(EAGLE3_CONFIG, dotted, value)))
        return _eagle3(tmp / "d"), [str(tmp / "d" / "config.json"), dotted]

    return Row(id, build)


def _draft_dir(tmp: Path) -> Path:
    draft = tmp / "d"
    draft.mkdir()
    (draft / "config.json").write_text(json.dumps(EAGLE3_CONFIG))
    return draft


def header(id: str, text: str, *culprits: str) -> Row:
    """A draft whose model.safetensors holds ``text`` as its JSON header."""

    def build(tmp: Path) -> tuple[list[str], list[str]]:
        draft = _draft_dir(tmp)
        raw = text.encode()
        raw += b" " * (-len(raw) % 8)
        (draft / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw)
        return _eagle3(draft), [str(draft / "model.safetensors"), *culprits]

    return Row(id, build)


def tensor(id: str, info: str, *culprits: str) -> Row:
    return header(id, '{"fc.weight": ' + info + "}", "fc.weight", *culprits)


def index(id: str, text: str | bytes, *culprits: str) -> Row:
    """A draft whose model.safetensors.index.json holds ``text``."""

    def build(tmp: Path) -> tuple[list[str], list[str]]:
        draft = _draft_dir(tmp)
        (draft / "model.safetensors.index.json").write_bytes(text if isinstance(text, bytes) else text.encode())
        return _eagle3(draft), [str(draft / "model.safetensors.index.json"), *culprits]

    return Row(id, build)


def shard_link(id: str, link_to: str, *, indexed: bool) -> Row:
    """A draft whose shard is a symlink to a file outside the folder."""

    def build(tmp: Path) -> tuple[list[str], list[str]]:
        draft = _draft_dir(tmp)
        os.symlink(link_to, draft / "model-00001-of-00001.safetensors")
        if indexed:
            (draft / "model.safetensors.index.json").write_text(json.dumps({"weight_map": {"fc.weight": "model-00001-of-00001.safetensors"}}))
            return _eagle3(draft), [str(draft / "model.safetensors.index.json"), "fc.weight", link_to]
        return _eagle3(draft), [str(draft / "model-00001-of-00001.safetensors"), link_to]

    return Row(id, build)


def special_shard(id: str, make: Callable[[Path], None], *culprits: str) -> Row:
    def build(tmp: Path) -> tuple[list[str], list[str]]:
        draft = _draft_dir(tmp)
        make(draft / "model.safetensors")
        return _eagle3(draft), [str(draft / "model.safetensors"), *culprits]

    return Row(id, build)


def tokenizer(id: str, text: str, *culprits: str) -> Row:
    """A STANDALONE draft of the target's vocabulary size, whose tokenizer.json (compared with the
    target's, DM130) holds ``text``."""

    def build(tmp: Path) -> tuple[list[str], list[str]]:
        for name in ("t", "d"):
            (tmp / name).mkdir()
            (tmp / name / "config.json").write_text(json.dumps(QWEN_CONFIG))
        (tmp / "t" / "tokenizer.json").write_text('{"model": {"vocab": {"a": 0}}}')
        (tmp / "d" / "tokenizer.json").write_text(text)
        args = ["check", "--offline", "--gpu", "H100", "--", "--model-path", str(tmp / "t"), "--speculative-algorithm", "STANDALONE",
                "--speculative-draft-model-path", str(tmp / "d")]
        return args, [str(tmp / "d" / "tokenizer.json"), *culprits]

    return Row(id, build)


def flag(id: str, *server_args: str) -> Row:
    def build(tmp: Path) -> tuple[list[str], list[str]]:
        return ["check", "--offline", "--gpu", "H100", "--format", "json", "--", "--model-path", str(LLAMA), *server_args], [server_args[0]]

    return Row(id, build, refused=True)


def option(id: str, *args: str, culprit: str) -> Row:
    def build(tmp: Path) -> tuple[list[str], list[str]]:
        return ["check", "--offline", "--gpu", "H100", *args, "--", "--model-path", str(LLAMA)], [culprit]

    return Row(id, build)


def requirements(id: str, text: str) -> Row:
    def build(tmp: Path) -> tuple[list[str], list[str]]:
        (tmp / "requirements.txt").write_text(text)
        args = ["check", "--offline", "--gpu", "H100", "--requirements", str(tmp / "requirements.txt"), "--", "--model-path", str(LLAMA)]
        return args, [f"requirements file {tmp / 'requirements.txt'}"]

    return Row(id, build)


def pasted(id: str, command: str, culprit: str) -> Row:
    def build(tmp: Path) -> tuple[list[str], list[str]]:
        return ["check", "--offline", "--gpu", "H100", command.replace("{model}", str(LLAMA))], [culprit]

    return Row(id, build)


# --------------------------------------------------------------------------------------------
# The table

ROWS = [
    # --- 5000-digit numbers: Python's int parser refuses them (int_max_str_digits; config.json: test_bad_inputs)
    option("sglang-version-5000-digits", "--sglang-version", f"0.5.{DIGITS}", culprit="--sglang-version"),
    option("sglang-version-post-5000-digits", "--sglang-version", f"0.5.23.post{DIGITS}", culprit="--sglang-version"),
    option("sgl-jax-version-5000-digits", "--dialect", "sgl-jax", "--sgl-jax-version", f"0.0.{DIGITS}", culprit="--sgl-jax-version"),
    pasted("docker-tag-5000-digits", f"docker run lmsysorg/sglang:v0.5.{DIGITS} python3 -m sglang.launch_server --model-path {{model}}", "docker image tag"),
    option("gpu-count-5000-digits", "--gpu-count", DIGITS, culprit="--gpu-count"),
    option("gpu-count-400-digits", "--gpu-count", "9" * 400, culprit="--gpu-count"),
    requirements("requirements-5000-digits", f"torch==2.9\nsglang==0.5.{DIGITS}\n"),
    flag("flag-int-5000-digits", "--tp-size", DIGITS),
    flag("flag-int-400-digits", "--context-length", "9" * 400),
    flag("flag-int-past-int64", "--speculative-num-steps", str(2**63)),
    flag("flag-graph-bs-past-int64", "--cuda-graph-max-bs", "9" * 400),
    header("header-5000-digits", '{"fc.weight": {"dtype": "BF16", "shape": [' + DIGITS + '], "data_offsets": [0, 0]}}', "too long"),
    index("index-5000-digits", '{"weight_map": {"fc.weight": ' + DIGITS + "}}", "too long"),
    # --- 200,000-deep JSON: Python's json module raises RecursionError (config.json: test_bad_inputs)
    header("header-deep", '{"a": ' + DEEP + "}", "nested too deeply"),
    index("index-deep", '{"weight_map": ' + DEEP + "}", "nested too deeply"),
    tokenizer("tokenizer-deep", '{"model": ' + DEEP + "}", "nested too deeply"),
    tokenizer("tokenizer-5000-digits", '{"model": {"vocab": {"a": ' + DIGITS + "}}}", "too long"),
    tokenizer("tokenizer-added-tokens-number", '{"model": {"vocab": {"a": 0}}, "added_tokens": 5}', "added_tokens"),
    # --- safetensors shapes and dtypes that are none
    tensor("shape-string", '{"dtype": "BF16", "shape": "4096", "data_offsets": [0, 0]}', "shape"),
    tensor("shape-number", '{"dtype": "BF16", "shape": 4096, "data_offsets": [0, 0]}', "shape"),
    tensor("shape-float", '{"dtype": "BF16", "shape": [4096.5, 2], "data_offsets": [0, 0]}', "shape"),
    tensor("shape-negative", '{"dtype": "BF16", "shape": [-1, 4096], "data_offsets": [0, 0]}', "shape"),
    tensor("shape-bool", '{"dtype": "BF16", "shape": [true], "data_offsets": [0, 0]}', "shape"),
    tensor("shape-past-int64", '{"dtype": "BF16", "shape": [' + str(2**64) + '], "data_offsets": [0, 0]}', "shape"),
    tensor("shape-string-size", '{"dtype": "BF16", "shape": ["4096"], "data_offsets": [0, 0]}', "shape"),
    tensor("shape-missing", '{"dtype": "BF16", "data_offsets": [0, 0]}', "shape"),
    tensor("dtype-number", '{"dtype": 16, "shape": [1], "data_offsets": [0, 0]}', "dtype"),
    tensor("tensor-not-object", "[1, 2]", "not an object"),
    header("shape-nan", '{"fc.weight": {"dtype": "BF16", "shape": [NaN], "data_offsets": [0, 0]}}', "NaN"),
    header("shape-1e999", '{"fc.weight": {"dtype": "BF16", "shape": [1e999], "data_offsets": [0, 0]}}', "1e999"),
    header("header-not-object", "[1, 2, 3]", "safetensors header"),
    special_shard("header-binary", lambda p: p.write_bytes(struct.pack("<Q", 8) + b"\xff\xfe\xfd\xfc\x00\x01\x02\x03"), "safetensors header"),
    special_shard("header-cut-short", lambda p: p.write_bytes(struct.pack("<Q", 4096) + b'{"a": '), "ends inside"),
    # --- non-regular files where a shard is read
    special_shard("shard-fifo", lambda p: os.mkfifo(p), "FIFO"),
    special_shard("shard-directory", lambda p: p.mkdir(), "directory"),
    # --- names that lead out of the model folder
    index("index-dotdot", json.dumps({"weight_map": {"fc.weight": "../../../../etc/passwd"}}), "fc.weight", "../../../../etc/passwd"),
    index("index-absolute", json.dumps({"weight_map": {"fc.weight": "/etc/hostname"}}), "fc.weight", "/etc/hostname"),
    index("index-dev-zero", json.dumps({"weight_map": {"fc.weight": "/dev/zero"}}), "fc.weight", "/dev/zero"),
    index("index-home", json.dumps({"weight_map": {"fc.weight": "~/.ssh/id_rsa"}}), "fc.weight", "~/.ssh/id_rsa"),
    index("index-nul", json.dumps({"weight_map": {"fc.weight": "model\u0000.safetensors"}}), "fc.weight"),
    index("index-entry-number", json.dumps({"weight_map": {"fc.weight": 5}}), "fc.weight"),
    index("index-binary", b'{"weight_map": {"\xff\xfe": "x"}}', "UTF-8"),
    shard_link("index-shard-symlink-out", "/etc/hostname", indexed=True),
    shard_link("glob-shard-symlink-out", "/etc/hostname", indexed=False),
    # --- config.json values specguard cannot interpret: refused, never guessed
    target_key("torch-dtype-unknown", "torch_dtype", "banana16"),
    target_key("torch-dtype-short-name", "torch_dtype", "bf16"),
    target_key("torch-dtype-prefixed", "torch_dtype", "torch.bfloat16"),
    target_key("torch-dtype-integer-type", "torch_dtype", "int8"),
    target_key("dtype-unknown", "dtype", "fp9"),
    target_key("text-config-dtype-unknown", "text_config.torch_dtype", "banana16"),
    target_key("intermediate-size-string", "intermediate_size", "14336"),
    target_key("intermediate-size-negative", "intermediate_size", -14336),
    target_key("intermediate-size-float", "intermediate_size", 14336.5),
    target_key("intermediate-size-huge", "intermediate_size", 10**400),
    target_key("hidden-size-huge", "hidden_size", 10**400),
    target_key("rope-theta-huge", "rope_theta", 10**400),
    target_key("rope-theta-negative", "rope_theta", -500000.0),
    target_key("rope-scaling-string", "rope_scaling", "llama3"),
    target_key("rope-scaling-factor-string", "rope_scaling.factor", "8"),
    target_key("rope-scaling-factor-negative", "rope_scaling.factor", -8.0),
    target_key("rope-scaling-factor-zero", "rope_scaling.factor", 0),
    target_key("rope-scaling-factor-1e308", "rope_scaling.factor", 1e308),
    target_key("rope-scaling-original-max-string", "rope_scaling.original_max_position_embeddings", "8192"),
    target_key("rope-scaling-type-number", "rope_scaling.rope_type", 3),
    target_key("rope-parameters-theta-string", "rope_parameters.rope_theta", "1e6"),
    target_key("quantization-config-string", "quantization_config", "fp8"),
    target_key("quant-method-number", "quantization_config.quant_method", 8),
    target_key("auto-map-string", "auto_map", "modeling.Model"),
    target_key("text-config-string", "text_config", "llama"),
    target_key("model-type-number", "model_type", 3),
    target_key("experts-string", "n_routed_experts", "256", DSV3_CONFIG),
    target_key("experts-negative", "num_experts", -1, DSV3_CONFIG),
    target_key("experts-per-token-zero", "num_experts_per_tok", 0, DSV3_CONFIG),
    target_key("moe-intermediate-float", "moe_intermediate_size", 2048.0, DSV3_CONFIG),
    target_key("dense-layers-negative", "first_k_dense_replace", -3, DSV3_CONFIG),
    target_key("shared-experts-bool", "n_shared_experts", True, DSV3_CONFIG),
    target_key("kv-lora-rank-list", "kv_lora_rank", [512], DSV3_CONFIG),
    target_key("q-lora-rank-zero", "q_lora_rank", 0, DSV3_CONFIG),
    target_key("qk-rope-dim-string", "qk_rope_head_dim", "64", DSV3_CONFIG),
    target_key("qk-nope-dim-negative", "qk_nope_head_dim", -128, DSV3_CONFIG),
    target_key("v-head-dim-object", "v_head_dim", {"a": 1}, DSV3_CONFIG),
    target_key("nextn-layers-string", "num_nextn_predict_layers", "1", DSV3_CONFIG),
    target_key("index-share-string", "index_share_for_mtp_iteration", "yes", DSV3_CONFIG),
    preset_snapshot_key("preset-snapshot-dtype-unknown", "torch_dtype", "banana16"),
    preset_snapshot_key("preset-snapshot-intermediate-string", "intermediate_size", "14336"),
    draft_key("target-hidden-size-string", "target_hidden_size", "4096"),
    draft_key("aux-states-zero", "num_aux_hidden_states", 0),
    draft_key("aux-layer-ids-strings", "eagle_config.eagle_aux_hidden_state_layer_ids", ["1", "15", "29"]),
    draft_key("aux-layer-ids-string", "eagle_config.eagle_aux_hidden_state_layer_ids", "1,15,29"),
    draft_key("eagle-config-list", "eagle_config", [1]),
    draft_key("block-size-negative", "block_size", -16),
    draft_key("dflash-block-size-float", "dflash_config.block_size", 16.0),
    draft_key("draft-vocab-size-huge", "draft_vocab_size", 10**400),
    # --- flag values the checks read as numbers, out of what SGLang can use
    flag("mem-fraction-above-one", "--mem-fraction-static", "5"),
    flag("mem-fraction-zero", "--mem-fraction-static", "0"),
    flag("mem-fraction-negative", "--mem-fraction-static", "-0.5"),
    flag("mem-fraction-1e308", "--mem-fraction-static", "1e308"),
    flag("graph-max-bs-unlistable", "--cuda-graph-max-bs", str(10**15)),
    flag("graph-max-bs-decode-unlistable", "--cuda-graph-max-bs-decode", str(10**15)),
    flag("graph-bs-unlistable", "--cuda-graph-bs", "1", "2", str(10**15)),
    # --- flag values an older release's own parser refuses (its choices, from the release history)
]


def _assert_one_clean_line(result: subprocess.CompletedProcess, culprits: list[str]) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 2, output[-2000:]
    assert "Traceback" not in output and "internal error" not in output, output[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("specguard: error: ")
    assert len(lines[0]) < 1000, "a pasted value is echoed whole"
    for culprit in culprits:
        assert culprit in lines[0], lines[0]


def test_the_table_is_large_enough() -> None:
    assert len(ROWS) >= 90
    assert len({row.id for row in ROWS}) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_hostile_input(row: Row, tmp_path: Path) -> None:
    args, culprits = row.build(tmp_path)
    result = run_cli(*args, env=row.env, timeout=TIMEOUT)
    if row.refused:
        _assert_one_clean_finding(result, culprits)
    else:
        _assert_one_clean_line(result, culprits)


def _assert_one_clean_finding(result: subprocess.CompletedProcess, culprits: list[str]) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output[-2000:]
    assert "Traceback" not in output and "internal error" not in output, output[-2000:]
    [refused] = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "VB013"]
    assert refused["severity"] == "error" and len(refused["message"]) < 1000, "a pasted value is echoed whole"
    for culprit in culprits:
        assert culprit in refused["message"], refused["message"]


# --------------------------------------------------------------------------------------------
# --prompts of specguard accept (the reference runtime reads it after loading the tiny models)

PROMPTS = [
    ("prompts-binary.txt", b"\xff\xfe\x00 not text\n\nsecond\n", "not UTF-8"),
    ("prompts-deep.jsonl", ('{"prompt": ' + DEEP + "}\n").encode(), "nested too deeply"),
    ("prompts-5000-digits.jsonl", ('{"prompt": "a", "n": ' + DIGITS + "}\n").encode(), "too long"),
    ("prompts-nan.jsonl", b'{"prompt": "a", "temperature": NaN}\n', "NaN"),
    ("prompts-messages-not-list.jsonl", b'{"messages": "hello"}\n', "messages"),
    ("prompts-messages-numbers.jsonl", b'{"messages": [1, 2]}\n', "messages"),
    ("prompts-fifo.jsonl", None, "FIFO"),
]


@pytest.mark.parametrize(("name", "content", "culprit"), PROMPTS, ids=[p[0] for p in PROMPTS])
def test_hostile_prompts_file(name: str, content: bytes | None, culprit: str, tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("tokenizers")
    path = tmp_path / name
    if content is None:
        os.mkfifo(path)
    else:
        path.write_bytes(content)
    result = run_cli("accept", "--target", "tiny:target", "--algorithm", "NGRAM", "--prompts", str(path), "--max-new-tokens", "4",
                     timeout=180)
    _assert_one_clean_line(result, [f"--prompts {path}", culprit])


# --------------------------------------------------------------------------------------------
# A full disk where specguard writes: the HF cache (a config.json download) and its own tiny-model
# cache. A real full filesystem: a 4 KiB tmpfs, mounted in a user and mount namespace.

UNSHARE = shutil.which("unshare")


def _full_disk_works(directory: Path) -> bool:
    if UNSHARE is None:
        return False
    probe = subprocess.run(
        [UNSHARE, "--user", "--map-root-user", "--mount", "sh", "-c", f"mount -t tmpfs -o size=4k tmpfs {directory} && ! head -c 65536 /dev/zero > {directory}/f"],
        capture_output=True, timeout=TIMEOUT,
    )
    return probe.returncode == 0


def _on_full_disk(directory: Path, argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """``argv`` run with ``directory`` a full filesystem (the CLI's clean, offline environment otherwise)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "HF_"))}
    base.update({"NO_COLOR": "1", "COLUMNS": "200", **env})
    script = f'mount -t tmpfs -o size=4k tmpfs "{directory}" && exec "$@"'
    return subprocess.run([UNSHARE or "unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script, "sh", *argv],
                          capture_output=True, text=True, env=base, cwd=REPO, timeout=120)


def test_a_full_hf_cache_disk_is_one_line_naming_the_cache(tmp_path: Path, llama_hub: str) -> None:
    """Before: "OSError while fetching config.json", and for a catalog model the catalog silently stood in."""
    cache = tmp_path / "hub"
    cache.mkdir()
    if not _full_disk_works(cache):
        pytest.skip("no user namespaces here to mount a small tmpfs")
    argv = [sys.executable, "-m", "specguard", "check", "--gpu", "H100", "--", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]
    result = _on_full_disk(cache, argv, {"HF_ENDPOINT": llama_hub, "HF_HUB_CACHE": str(cache), "HF_HUB_DISABLE_TELEMETRY": "1"})
    _assert_one_clean_line(result, [str(cache), "No space left on device"])


def test_a_full_tiny_model_cache_disk_is_one_line_naming_the_cache(tmp_path: Path) -> None:
    """The tiny models' shards are written by Python, so a full disk is an OSError the cache
    reports (safetensors' save_file raised a SafetensorError: "internal error")."""
    pytest.importorskip("torch")
    cache = tmp_path / "cache"
    cache.mkdir()
    if not _full_disk_works(cache):
        pytest.skip("no user namespaces here to mount a small tmpfs")
    code = (
        "import sys, torch\n"
        "from pathlib import Path\n"
        "from specguard.errors import InputError\n"
        "from specguard.runtime.tiny import _ensure_built, _write_safetensors\n"
        "root = Path(sys.argv[1])\n"
        "try:\n"
        "    _ensure_built(root, root / 'tiny-x', lambda d: _write_safetensors(d / 'model.safetensors', {'w': torch.zeros(65536)}), print)\n"
        "except InputError as error:\n"
        "    print('specguard: error: ' + error.one_line(), file=sys.stderr)\n"
        "    sys.exit(2)\n"
    )
    result = _on_full_disk(cache, [sys.executable, "-c", code, str(cache)], {})
    _assert_one_clean_line(result, [f"cannot write the tiny-model cache at {cache}", "No space left on device"])
