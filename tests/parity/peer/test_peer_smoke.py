"""Smoke test of the SGLang peer: the 5 examples of sglang-spec-checks.md section 4.

Runs SGLang 0.5.23's own prepare_server_args -> resolve_once -> check_server_args through
tests/parity/peer/sglang_peer.py in the SGLang venv (scripts/sglang_env/setup.sh creates it;
$SPECGUARD_SGLANG_PYTHON points at another).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_specguard_peer_{name}", HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


client = _load("client")
make_models = _load("make_models")

SGLANG_PY = client.find_sglang_python()

# Without SGLang's environment these fail (tests/parity/conftest.py), unless opted out.
pytestmark = pytest.mark.sglang

MAX_RUNNING_48 = (
    "WARNING: Max running requests is reset to 48 for speculative decoding. "
    "You can override this by explicitly setting --max-running-requests."
)


def _cases(m: Path) -> list[dict]:
    t = ["--model-path", f"{m}/llama31-8b-bf16", "--device", "cuda"]
    e = ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", f"{m}/eagle-llama31-draft-fp16-2k"]
    return [
        {"name": "ex1-eagle-llama-auto-params-h100-sim", "argv": t + e, "simulate": client.H100},
        {
            "name": "ex2-topk1-num-draft-tokens-rewritten",
            "argv": t
            + ["--speculative-algorithm", "NEXTN", "--speculative-draft-model-path", f"{m}/eagle-llama31-draft-fp16-2k",
               "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "16"],
        },
        {"name": "ex3-num-steps-only-crashes-resolution", "argv": t + e + ["--speculative-num-steps", "3"]},
        {
            "name": "ex4-ngram-page16-triton-rejected",
            "argv": t + ["--speculative-algorithm", "NGRAM", "--page-size", "16", "--attention-backend", "triton"],
        },
        {
            "name": "ex5-unchecked-draft-ctx-dtype-specv2-env",
            "argv": t + e + ["--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
                             "--speculative-num-draft-tokens", "8", "--context-length", "32768"],
            "env": {"SGLANG_ENABLE_SPEC_V2": "1"},
        },
    ]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    m = tmp_path_factory.mktemp("models")
    make_models.write_models(m)
    cases = _cases(m)
    res = client.run_cases(cases, SGLANG_PY)
    return {r["name"]: r for r in res}, m


def _sub(d: dict, keys) -> dict:
    return {k: d.get(k) for k in keys}


def test_ex1_eagle_llama_auto_params_h100(results):
    res, m = results
    r = res["ex1-eagle-llama-auto-params-h100-sim"]
    assert r["accepted"] and r["stage"] == "ok", r
    assert _sub(r["resolved"], [
        "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
        "speculative_num_draft_tokens", "speculative_draft_model_path", "speculative_draft_attention_backend",
        "attention_backend", "prefill_attention_backend", "decode_attention_backend",
        "cuda_graph_max_bs", "cuda_graph_decode_backend", "disable_overlap_schedule", "enable_mixed_chunk",
        "max_running_requests", "page_size", "context_length", "dtype", "mem_fraction_static", "device",
    ]) == {
        "speculative_algorithm": "EAGLE", "speculative_num_steps": 5, "speculative_eagle_topk": 4,
        "speculative_num_draft_tokens": 8, "speculative_draft_model_path": f"{m}/eagle-llama31-draft-fp16-2k",
        "speculative_draft_attention_backend": None, "attention_backend": "fa3",
        "prefill_attention_backend": None, "decode_attention_backend": None,
        "cuda_graph_max_bs": 256, "cuda_graph_decode_backend": "full", "disable_overlap_schedule": False,
        "enable_mixed_chunk": False, "max_running_requests": 48, "page_size": 1, "context_length": None,
        "dtype": "auto", "mem_fraction_static": 0.835, "device": "cuda",
    }
    sb = r["set_by"]
    assert sb["speculative_algorithm"] == "handle_speculative_decoding"
    assert sb["speculative_num_steps"] == sb["speculative_eagle_topk"] == sb["speculative_num_draft_tokens"] \
        == "_handle_eagle_family.auto_params"
    assert sb["attention_backend"] == "_attention_backend_default"
    assert sb["max_running_requests"] == "_handle_eagle_family"
    assert sb["page_size"] == "_page_size_default"
    assert sb["mem_fraction_static"] == "_handle_gpu_memory_settings"
    assert r["warnings"] == [MAX_RUNNING_48]


def test_ex2_topk1_num_draft_tokens_rewritten(results):
    r = results[0]["ex2-topk1-num-draft-tokens-rewritten"]
    assert r["accepted"] and r["stage"] == "ok", r
    assert _sub(r["resolved"], [
        "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
        "attention_backend", "cuda_graph_max_bs", "max_running_requests", "page_size", "mem_fraction_static",
        "disable_overlap_schedule", "enable_mixed_chunk",
    ]) == {
        "speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 1,
        "speculative_num_draft_tokens": 4, "attention_backend": "triton", "cuda_graph_max_bs": 160,
        "max_running_requests": 48, "page_size": 1, "mem_fraction_static": 0.95,
        "disable_overlap_schedule": False, "enable_mixed_chunk": False,
    }
    assert r["set_by"]["speculative_num_draft_tokens"] == "_handle_eagle_family"
    assert r["warnings"] == [
        MAX_RUNNING_48,
        "WARNING: speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1",
    ]


def test_ex3_num_steps_only_crashes_resolution(results):
    r = results[0]["ex3-num-steps-only-crashes-resolution"]
    assert not r["accepted"] and r["stage"] == "resolve", r
    assert r["exc_type"] == "TypeError"
    assert r["message"] == "'>' not supported between instances of 'NoneType' and 'int'"
    assert r["raised_at"] == "sglang/srt/arg_groups/speculative_hook.py:1274"
    assert r["raised_in"] == "_handle_eagle_family"
    assert r["warnings"] == [MAX_RUNNING_48]


def test_ex4_ngram_page16_triton_rejected(results):
    r = results[0]["ex4-ngram-page16-triton-rejected"]
    assert not r["accepted"] and r["stage"] == "resolve", r
    assert r["exc_type"] == "ValueError"
    assert r["message"] == (
        "speculative_eagle_topk(10) > 1 with page_size(16) > 1 is unstable and produces incorrect results "
        "for paged attention backends. This combination is only supported for the 'flashinfer' backend."
    )
    assert r["raised_at"] == "sglang/srt/arg_groups/speculative_hook.py:1361"
    assert r["raised_in"] == "_handle_ngram"
    assert r["warnings"] == [
        MAX_RUNNING_48,
        ("WARNING: speculative_num_draft_tokens is set to 12 by default for ngram speculative decoding. "
        "You can override this by explicitly setting --speculative-num-draft-tokens."),
        "WARNING: The mixed chunked prefill are disabled because of using ngram speculative decoding.",
    ]


def test_ex5_unchecked_draft_ctx_dtype_specv2_env(results):
    r = results[0]["ex5-unchecked-draft-ctx-dtype-specv2-env"]
    assert r["accepted"] and r["stage"] == "ok", r
    assert _sub(r["resolved"], [
        "speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
        "attention_backend", "cuda_graph_max_bs", "max_running_requests", "context_length", "dtype",
        "mem_fraction_static", "disable_overlap_schedule",
    ]) == {
        "speculative_algorithm": "EAGLE", "speculative_num_steps": 3, "speculative_eagle_topk": 4,
        "speculative_num_draft_tokens": 8, "attention_backend": "triton", "cuda_graph_max_bs": 160,
        "max_running_requests": 48, "context_length": 32768, "dtype": "auto", "mem_fraction_static": 0.95,
        "disable_overlap_schedule": False,
    }
    # User-given values are not re-declared by resolution.
    assert "speculative_num_steps" not in r["set_by"]
    assert r["warnings"] == [MAX_RUNNING_48]


def test_parse_error_is_reported_at_parse_stage(results, tmp_path):
    # P01: the pre-0.5.2x flag is an ambiguous prefix in 0.5.23.
    m = results[1]
    (r,) = client.run_cases(
        [{"name": "p01", "argv": ["--model-path", f"{m}/llama31-8b-bf16", "--device", "cuda",
                                  "--cuda-graph-max-bs", "8"]}],
        SGLANG_PY,
    )
    assert not r["accepted"] and r["stage"] == "parse" and r["exc_type"] == "SystemExit"
    assert r["message"] == (
        "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill"
    )
