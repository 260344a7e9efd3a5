"""AB rules: GPU gates, version boundaries of the page-tree backend list, predicted defaults."""

from __future__ import annotations

import pytest

from specguard import engine
from specguard.models import Applicability, Severity
from specguard.rules import ALL_RULES
from specguard.rules.attention import (
    AB001_fa3_unsupported_gpu as AB001,
)
from specguard.rules.attention import (
    AB002_tree_paged_backend_unsupported as AB002,
)
from specguard.rules.attention import (
    AB003_trtllm_mha_tree_draft as AB003,
)
from specguard.rules.attention import (
    AB004_trtllm_mha_unsupported_gpu as AB004,
)
from specguard.rules.attention import (
    AB006_draft_backend_not_a_choice as AB006,
)
from specguard.rules.attention import (
    AB008_fa4_page_forced_under_tree_draft as AB008,
)
from specguard.rules.attention.backends import default_backend
from specguard.rules.base import Example
from tests.conftest import HF_CONFIGS, run_cli_json

LLAMA = {"architectures": ["LlamaForCausalLM"]}
EAGLE3 = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
          "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")
TREE = ("--speculative-num-steps", "5", "--speculative-eagle-topk", "8", "--speculative-num-draft-tokens", "32")
CHAIN = ("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


def fired(rule, *argv, gpu=None, version=None, target=None):
    ctx = Example(argv=argv, gpu=gpu, sglang_version=version, target=target).context()
    return list(rule.check(ctx)) if rule.applies_to(ctx) else []


@pytest.mark.parametrize(("gpu", "expected"), [("H100", False), ("A100", False), ("L40S", False), ("A10G", False),
                                               ("B200", True), ("B300", True), ("MI300X", True), ("TPU", True)])
def test_ab001_fa3_gpu_gate(gpu, expected):
    assert bool(fired(AB001.RULE, *EAGLE3, *CHAIN, "--attention-backend", "fa3", gpu=gpu)) is expected


def test_ab001_unknown_gpu_is_quiet_and_mla_on_ampere_fires():
    assert fired(AB001.RULE, *EAGLE3, *CHAIN, "--attention-backend", "fa3") == []
    mla = {"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512}
    assert fired(AB001.RULE, "--model-path", "deepseek-ai/DeepSeek-V3", "--speculative-algorithm", "EAGLE",
                 "--attention-backend", "fa3", gpu="A100", target=mla)


def test_ab001_draft_backend_fix_drops_the_flag():
    [finding] = fired(AB001.RULE, *EAGLE3, *CHAIN, "--speculative-draft-attention-backend", "fa3", gpu="B200")
    assert [(e.name, e.value) for e in finding.fix.edits] == [("--speculative-draft-attention-backend", None)]


@pytest.mark.parametrize(
    ("version", "backend", "expected"),
    [
        ("0.5.1", "triton", False),  # no check before 0.5.2rc0
        ("0.5.1.post3", "triton", False),
        ("0.5.2rc0", "triton", True),  # 0.5.2rc0 server_args.py:752-759 (specguard began at 0.5.2 final before)
        ("0.5.2", "triton", True),
        ("0.5.5", "fa3", True),  # flashinfer only up to 0.5.5
        ("0.5.6", "fa3", False),
        ("0.5.12", "triton", True),  # triton joins in 0.5.13
        ("0.5.13", "triton", False),
        ("0.5.23", "flashinfer", False),
        ("0.5.23", "fa4", True),
    ],
)
def test_ab002_backend_list_by_version(version, backend, expected):
    argv = (*EAGLE3, *TREE, "--page-size", "16", "--attention-backend", backend)
    assert bool(fired(AB002.RULE, *argv, gpu="H100", version=version)) is expected


def test_ab002_unset_backend_failed_before_0_5_5_and_is_fine_on_cuda_after():
    argv = (*EAGLE3, *TREE, "--page-size", "16")
    assert fired(AB002.RULE, *argv, gpu="H100", version="0.5.4")
    assert fired(AB002.RULE, *argv, gpu="H100", version="0.5.5") == []
    [rocm] = fired(AB002.RULE, *argv, gpu="MI300X", version="0.5.23")  # aiter by default
    assert rocm.fix.edits[0].value == "triton"
    [unknown] = fired(AB002.RULE, *argv, version="0.5.23")
    assert unknown.severity is Severity.INFO


def test_ab002_auto_topk_and_ngram():
    # No topk typed: Llama gets topk 4 from SGLang.
    argv = (*EAGLE3, "--page-size", "16", "--attention-backend", "torch_native")
    assert fired(AB002.RULE, *argv, gpu="A100", target=LLAMA)
    assert fired(AB002.RULE, *argv, gpu="A100", target={"architectures": ["Qwen3ForCausalLM"]}) == []
    ngram = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "NGRAM", "--page-size", "16")
    assert fired(AB002.RULE, *ngram, "--attention-backend", "triton", gpu="A100")
    assert fired(AB002.RULE, *ngram, "--attention-backend", "flashinfer", gpu="A100") == []
    assert fired(AB002.RULE, *ngram, "--attention-backend", "triton", "--speculative-ngram-max-bfs-breadth", "1",
                 gpu="A100") == []


def test_ab002_fix_is_accepted_by_every_rule():
    ctx = Example(argv=(*EAGLE3, *TREE, "--page-size", "16", "--attention-backend", "fa4"), gpu="B200").context()
    outcome = engine.check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    after = ctx.with_spec(outcome.corrected)
    assert after.spec.get("attention_backend") == "flashinfer"
    assert not [f for f in engine.run_rules(ALL_RULES, after) if f.code.startswith("AB") and f.severity is Severity.ERROR]


def test_ab003_and_ab004():
    assert fired(AB003.RULE, *EAGLE3, "--attention-backend", "trtllm_mha", gpu="B200", target=LLAMA)  # auto topk 4
    assert fired(AB003.RULE, *EAGLE3, *CHAIN, "--attention-backend", "trtllm_mha", gpu="B200") == []
    assert fired(AB004.RULE, *EAGLE3, *CHAIN, "--decode-attention-backend", "trtllm_mha", gpu="L4")
    assert fired(AB004.RULE, *EAGLE3, *CHAIN, "--attention-backend", "trtllm_mha", gpu="H20") == []
    assert fired(AB004.RULE, *EAGLE3, *CHAIN, "--attention-backend", "trtllm_mha") == []


def test_ab006_suggests_the_close_choice():
    [finding] = fired(AB006.RULE, *EAGLE3, *CHAIN, "--speculative-draft-attention-backend", "flashinfr")
    assert "did you mean flashinfer" in finding.message


def test_ab008_only_when_topk_is_left_to_sglang():
    argv = (*EAGLE3, "--attention-backend", "fa4")
    assert fired(AB008.RULE, *argv, gpu="B200", target=LLAMA)
    assert fired(AB008.RULE, *argv, *TREE, gpu="B200", target=LLAMA) == []  # typed topk 8 keeps page 1
    assert fired(AB008.RULE, *argv, gpu="H100", target=LLAMA) == []
    assert fired(AB008.RULE, *argv, gpu="B200", target={"architectures": ["Qwen3ForCausalLM"]}) == []


@pytest.mark.parametrize(
    ("gpu", "version", "argv", "expected"),
    [
        ("H100", "0.5.23", (), "fa3"),
        ("H100", "0.5.23", TREE, "flashinfer"),
        ("H100", "0.5.4", (), "flashinfer"),  # decided after the automatic topk 4 before 0.5.5
        ("B200", "0.5.23", CHAIN, "trtllm_mha"),
        ("B200", "0.5.6", CHAIN, "flashinfer"),
        ("B200", "0.5.23", (), "flashinfer"),
        ("MI300X", "0.5.23", (), "aiter"),
        ("A100", "0.5.23", (), "flashinfer"),
        (None, "0.5.23", (), None),
    ],
)
def test_default_backend_prediction(gpu, version, argv, expected):
    ctx = Example(argv=(*EAGLE3, *argv), gpu=gpu, sglang_version=version, target=LLAMA).context()
    assert default_backend(ctx) == expected


def test_cli_end_to_end_fa3_on_blackwell():
    llama = str(HF_CONFIGS / "meta-llama" / "Llama-3.1-8B-Instruct")
    code, doc = run_cli_json("check", "--offline", "--gpu", "B200", "--sglang-version", "0.5.23", "--",
                             "--model-path", llama, "--speculative-algorithm", "NGRAM", "--attention-backend", "fa3")
    assert code == 1
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["AB001"]
    code, doc = run_cli_json("check", "--offline", "--unsafe-fixes", "--gpu", "B200", "--sglang-version", "0.5.23", "--",
                             "--model-path", llama, "--speculative-algorithm", "NGRAM", "--attention-backend", "fa3")
    assert code == 0
    assert doc["argv"][doc["argv"].index("--attention-backend") + 1] == "flashinfer"


# AB060: fa3's draft backend asserted topk == 1 in 0.4.5.post1-post2 (issue 5491).
from specguard.rules.attention import AB060_fa3_draft_backend_chain_only as AB060

FA3_TREE = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d",
            "--speculative-num-steps", "3", "--speculative-eagle-topk", "2", "--speculative-num-draft-tokens", "8",
            "--attention-backend", "fa3")


@pytest.mark.parametrize(("version", "expected"), [("0.4.5", False), ("0.4.5.post1", True), ("0.4.5.post2", True), ("0.4.5.post3", False), ("0.4.6", False)])
def test_ab060_assert_by_version(version, expected):
    assert bool(fired(AB060.RULE, *FA3_TREE, gpu="H100", version=version)) is expected


def test_ab060_chain_and_other_backends_are_quiet():
    base = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d")
    chain = (*base, *CHAIN, "--attention-backend", "fa3")
    assert fired(AB060.RULE, *chain, gpu="H100", version="0.4.5.post1") == []
    flashinfer = (*FA3_TREE[:-1], "flashinfer")
    assert fired(AB060.RULE, *flashinfer, gpu="H100", version="0.4.5.post1") == []


# AB061: aiter + EAGLE on a non-MLA target in 0.5.6.post2-0.5.9 (issue 16027, PR 19362).
from specguard.rules.attention import AB061_aiter_eagle_graph_non_mla as AB061

AITER_EAGLE = ("--model-path", "m", "--speculative-algorithm", "EAGLE", *CHAIN, "--attention-backend", "aiter")
MHA = {"architectures": ("LlamaForCausalLM",), "num_attention_heads": 32}
MLA = {"architectures": ("DeepseekV3ForCausalLM",), "kv_lora_rank": 512}


@pytest.mark.parametrize(("version", "expected"), [("0.5.6", False), ("0.5.6.post2", True), ("0.5.9", True), ("0.5.10", False)])
def test_ab061_versions(version, expected):
    assert bool(fired(AB061.RULE, *AITER_EAGLE, gpu="MI300X", version=version, target=MHA)) is expected


def test_ab061_mla_graphs_off_and_unknown_target():
    assert fired(AB061.RULE, *AITER_EAGLE, gpu="MI300X", version="0.5.9", target=MLA) == []
    assert fired(AB061.RULE, *AITER_EAGLE, "--disable-cuda-graph", gpu="MI300X", version="0.5.9", target=MHA) == []
    [unknown] = fired(AB061.RULE, *AITER_EAGLE, gpu="MI300X", version="0.5.9")
    assert unknown.severity is Severity.WARNING
    [known] = fired(AB061.RULE, *AITER_EAGLE, gpu="MI300X", version="0.5.9", target=MHA)
    assert known.severity is Severity.ERROR


def test_ab061_persist_off_warns_of_garbled_output():
    ctx = Example(argv=AITER_EAGLE, gpu="MI300X", sglang_version="0.5.9", target=MHA, env={"SGLANG_AITER_MLA_PERSIST": "0"}).context()
    [finding] = AB061.RULE.check(ctx)
    assert finding.severity is Severity.WARNING and "garbled" in finding.message


# AB062: ROCm EAGLE verify/draft without TP synchronisation (issues 28815, 31071; PRs 34238, 35079).
from specguard.rules.attention import AB062_rocm_eagle_tp_rank_divergence as AB062

ROCM_EAGLE = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")


@pytest.mark.parametrize(("version", "flag"), [("0.5.12.post1", "--tp-size"), ("0.5.17", "--tp-size"), ("0.5.18", "--speculative-num-steps")])
def test_ab062_by_version(version, flag):
    [finding] = fired(AB062.RULE, *ROCM_EAGLE, "--tp", "2", gpu="MI350X", version=version)
    assert finding.flags == (flag,) and finding.severity is Severity.WARNING


def test_ab062_quiet_cases():
    assert fired(AB062.RULE, *ROCM_EAGLE, "--tp", "2", gpu="H100", version="0.5.17") == []  # CUDA has the kernel
    assert fired(AB062.RULE, *ROCM_EAGLE, gpu="MI355X", version="0.5.17") == []  # tp 1
    # DP attention over all ranks: attention TP 1.
    assert fired(AB062.RULE, *ROCM_EAGLE, "--tp", "8", "--dp", "8", "--enable-dp-attention", gpu="MI355X", version="0.5.17") == []
    chain2 = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1",
              "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "2", "--tp", "4")
    assert fired(AB062.RULE, *chain2, gpu="MI355X", version="0.5.23") == []


def test_ab007_ngram_torch_native_is_an_error_from_0_5_18():
    ngram = ("--model-path", "m", "--speculative-algorithm", "NGRAM", "--attention-backend", "torch_native")
    from specguard.rules.attention import (
        AB007_torch_native_disables_cuda_graph as AB007,
    )
    [crash] = fired(AB007.RULE, *ngram, gpu="H100", version="0.5.18")
    assert crash.severity is Severity.ERROR and "warmup" in crash.message
    [slow] = fired(AB007.RULE, *ngram, gpu="H100", version="0.5.17")
    assert slow.severity is Severity.WARNING


# AB063: the BF16 NextN draft MoE of DeepSeek-family FP4 targets inherits flashinfer_trtllm on CUDA (issues 30209,
# 31093, 32377; PR 30210).
from specguard.rules.attention import (
    AB063_fp4_nextn_draft_moe_on_trtllm_blackwell as AB063,
)

GLM_FP4_MTP = ("--model-path", "m", "--tp", "8", "--quantization", "modelopt_fp4", "--speculative-algorithm", "EAGLE",
               "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
GLM_DSA = {"architectures": ("GlmMoeDsaForCausalLM",)}


@pytest.mark.parametrize(("gpu", "extra", "expected"), [
    ("B200", (), True),  # automatic flashinfer_trtllm on SM100
    ("B300", (), True),
    (None, ("--moe-runner-backend", "flashinfer_trtllm"), True),  # typed: the GPU need not be known
    ("H200", (), False),  # no automatic trtllm on Hopper
    ("B200", ("--moe-a2a-backend", "deepep"), False),  # an A2A backend keeps auto off flashinfer_trtllm
    ("B200", ("--speculative-moe-runner-backend", "triton"), False),
    ("MI355X", ("--moe-runner-backend", "flashinfer_trtllm"), False),  # ROCm picks triton itself
])
def test_ab063_draft_moe_runner(gpu, extra, expected):
    assert bool(fired(AB063.RULE, *GLM_FP4_MTP, *extra, gpu=gpu, version="0.5.15", target=GLM_DSA)) is expected


def test_ab063_needs_fp4_and_the_family():
    no_fp4 = tuple(a for a in GLM_FP4_MTP if a not in ("--quantization", "modelopt_fp4"))
    assert fired(AB063.RULE, *no_fp4, gpu="B200", version="0.5.15", target=GLM_DSA) == []
    assert fired(AB063.RULE, *GLM_FP4_MTP, gpu="B200", version="0.5.15", target={"architectures": ("Qwen3MoeForCausalLM",)}) == []
    assert fired(AB063.RULE, *GLM_FP4_MTP, gpu="B200", version="0.5.15") == []  # unknown target
    assert fired(AB063.RULE, *GLM_FP4_MTP, gpu="B200", version="0.5.9", target=GLM_DSA) == []  # 0.5.7-0.5.9 chose triton on SM100
    assert fired(AB063.RULE, *GLM_FP4_MTP, gpu="B200", version="0.5.10", target=GLM_DSA) != []


# AB064: MiniMax-M3 sparse attention has no ROCm target-verify path before 0.5.22 (issue 33383).
from specguard.rules.attention import AB064_minimax_m3_sparse_verify_rocm as AB064

M3_EAGLE3 = ("--model-path", "m", "--tp", "4", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
             "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
M3 = {"architectures": ("MiniMaxM3SparseForCausalLM",)}


@pytest.mark.parametrize(("gpu", "version", "expected"), [
    ("MI355X", "0.5.16", True), ("MI300X", "0.5.21", True), ("MI355X", "0.5.22", False), ("H200", "0.5.21", False),
])
def test_ab064_rocm_until_0_5_22(gpu, version, expected):
    assert bool(fired(AB064.RULE, *M3_EAGLE3, gpu=gpu, version=version, target=M3)) is expected


# AB065: aiter's custom all-reduce hangs the EAGLE verify on ROCm (PR 29313).
from specguard.rules.attention import (
    AB065_rocm_eagle_custom_allreduce_verify_hang as AB065,
)


def test_ab065_rocm_tp_without_rccl():
    assert fired(AB065.RULE, *ROCM_EAGLE, "--tp", "4", gpu="MI355X", version="0.5.13")
    assert fired(AB065.RULE, *ROCM_EAGLE, "--tp", "4", "--disable-custom-all-reduce", gpu="MI355X", version="0.5.13") == []
    assert fired(AB065.RULE, *ROCM_EAGLE, gpu="MI355X", version="0.5.13") == []  # tp 1
    assert fired(AB065.RULE, *ROCM_EAGLE, "--tp", "4", gpu="H200", version="0.5.13") == []
    assert fired(AB065.RULE, *ROCM_EAGLE, "--tp", "4", gpu="MI355X", version="0.5.13",
                 target={"architectures": ("MiniMaxM3SparseForCausalLM",)}) == []  # SGLang turns it off itself
