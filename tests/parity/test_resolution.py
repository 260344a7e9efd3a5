"""``specguard.resolution.predict``: the values SGLang will run with, on both sides of each
version boundary it knows. The differential suite checks 0.5.23 against SGLang itself; these
pin the rest without SGLang."""

from __future__ import annotations

import pytest

from specguard.models import Dialect
from specguard.rules.base import Example

LLAMA = {"architectures": ("LlamaForCausalLM",)}
DEEPSEEK = {"architectures": ("DeepseekV3ForCausalLM",), "kv_lora_rank": 512}
T = ("--model-path", "t", "--device", "cuda")
EAGLE = (*T, "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", "d")


def resolve(argv, *, target=LLAMA, draft=None, gpu="H100", version="0.5.23", env=None, dialect=Dialect.SGLANG):
    return Example(argv=argv, target=target, draft=draft, gpu=gpu, sglang_version=version, env=env or {},
                   dialect=dialect).context().resolution


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.5.4", "flashinfer"), ("0.5.5", "fa3"), ("0.5.23", "fa3")],
)
def test_default_backend_picked_before_spec_from_0_5_5(version, expected):
    # Llama auto-chooses topk 4. Before 0.5.5 the default saw that topk (a tree: flashinfer);
    # from 0.5.5 it is chosen before, from the typed topk (none: fa3).
    resolution = resolve(EAGLE, version=version)
    assert resolution.eagle_topk == 4
    assert resolution.attention_backend == expected
    assert "attention_backend" in resolution.set_by


@pytest.mark.parametrize(
    ("version", "topk", "page", "expected"),
    [
        ("0.5.6", "1", None, "flashinfer"),
        ("0.5.6.post1", "1", None, "trtllm_mha"),  # any Blackwell, typed topk 1 or unset
        ("0.5.6.post2", None, None, "trtllm_mha"),
        ("0.5.6.post2", "4", None, "flashinfer"),
        ("0.5.7", None, None, "flashinfer"),  # 0.5.7 wants a typed topk with speculation
        ("0.5.7", "1", None, "trtllm_mha"),
        ("0.5.23", "1", None, "trtllm_mha"),
        ("0.5.23", "1", "16", "flashinfer"),  # topk 1 only counts with page size 1
        ("0.5.23", None, None, "flashinfer"),  # no typed topk: not trtllm_mha
        ("0.5.23", "4", None, "flashinfer"),
    ],
)
def test_default_backend_on_b200(version, topk, page, expected):
    argv = EAGLE + (("--speculative-num-steps", "3", "--speculative-eagle-topk", topk, "--speculative-num-draft-tokens", "4") if topk else ())
    argv += ("--page-size", page) if page else ()
    assert resolve(argv, gpu="B200", version=version).attention_backend == expected


@pytest.mark.parametrize(("version", "expected"), [("0.5.16", "trtllm_mha"), ("0.5.17", "fa4")])
def test_default_backend_for_asymmetric_kv_on_b200(version, expected):
    # K rows 192 wide, V rows 128 (MiMo-V2's shape): 0.5.17 gives such a target fa4.
    target = {**LLAMA, "head_dim": 192, "v_head_dim": 128}
    argv = (*EAGLE, "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
    assert resolve(argv, target=target, gpu="B200", version=version).attention_backend == expected


def test_default_backend_mla_targets():
    mtp = (*T, "--speculative-algorithm", "EAGLE")
    assert resolve(mtp, target=DEEPSEEK, gpu="H100").attention_backend == "fa3"
    b200 = resolve(mtp, target=DEEPSEEK, gpu="B200")
    assert (b200.attention_backend, b200.page_size) == ("trtllm_mla", 64)
    assert resolve(mtp, target=DEEPSEEK, gpu="A100").attention_backend == "triton"


def test_unknown_gpu_predicts_no_backend():
    resolution = resolve(EAGLE, gpu=None)
    assert resolution.attention_backend is None
    assert resolution.cuda_graph_max_bs is None
    assert "attention_backend" not in resolution.set_by


def test_typed_backend_is_kept():
    assert resolve((*EAGLE, "--attention-backend", "triton")).attention_backend == "triton"


@pytest.mark.parametrize(
    ("extra", "gpu", "page"),
    [
        (("--attention-backend", "trtllm_mha"), "B200", 64),
        (("--attention-backend", "trtllm_mha", "--page-size", "32"), "B200", 32),
        (("--speculative-draft-attention-backend", "trtllm_mha"), "A100", 64),
        (("--attention-backend", "fa4"), "B200", 128),  # typed topk unset counts as 0
        (("--attention-backend", "fa4", "--speculative-num-steps", "3", "--speculative-eagle-topk", "4",
          "--speculative-num-draft-tokens", "8"), "B200", 1),
        (("--attention-backend", "fa4"), "H100", 1),  # only on SM100
    ],
)
def test_page_size_forced_by_backend(extra, gpu, page):
    assert resolve((*EAGLE, *extra), gpu=gpu).page_size == page


@pytest.mark.parametrize(
    ("version", "extra", "page"),
    [
        # 0.5.17 adds page size 128 and counts a trtllm_mha draft backend (overrides.py:2081-2094);
        # 0.5.16 kept 16/32/64 for the target phases only (:1732-1741).
        ("0.5.16", ("--attention-backend", "trtllm_mha", "--page-size", "128"), 64),
        ("0.5.17", ("--attention-backend", "trtllm_mha", "--page-size", "128"), 128),
        ("0.5.16", ("--speculative-draft-attention-backend", "trtllm_mha", "--page-size", "8"), 8),
        ("0.5.17", ("--speculative-draft-attention-backend", "trtllm_mha", "--page-size", "8"), 64),
    ],
)
def test_trtllm_mha_page_sizes_by_release(version, extra, page):
    assert resolve((*EAGLE, *extra), gpu="B200", version=version).page_size == page


@pytest.mark.parametrize(
    ("extra", "gpu", "expected"),
    [
        ((), "H100", 256),
        (("--tp-size", "4"), "H100", 512),
        ((), "B200", 512),
        ((), "A100-40GB", 32),
        (("--max-running-requests", "16"), "H100", 16),  # a user-set limit lowers it
        (("--cuda-graph-max-bs-decode", "8"), "H100", 8),
        (("--cuda-graph-bs-decode", "1", "2", "24"), "H100", 24),
    ],
)
def test_cuda_graph_max_bs(extra, gpu, expected):
    resolution = resolve((*EAGLE, *extra), gpu=gpu)
    assert resolution.cuda_graph_max_bs == expected
    # The automatic 48 comes later in SGLang's pipeline and does not lower it.
    if "--max-running-requests" not in extra:
        assert resolution.max_running_requests == 48


@pytest.mark.parametrize(
    ("extra", "gpu", "expected"),
    [
        ((), "A100", "flashinfer"),  # the target's backend
        (("--attention-backend", "triton"), "A100", "triton"),
        (("--speculative-draft-attention-backend", "trtllm_mha"), "A100", "flashinfer"),
        (("--speculative-draft-attention-backend", "trtllm_mha"), "B200", "fa4"),
        (("--attention-backend", "torch_native"), "A100", "flashinfer"),  # not a draft choice
    ],
)
def test_dflash_draft_backend(extra, gpu, expected):
    argv = (*T, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d", *extra)
    resolution = resolve(argv, draft={"architectures": ("DFlashDraftModel",), "block_size": 16}, gpu=gpu)
    assert resolution.draft_attention_backend == expected
    assert (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens) == (1, 1, 16)


QWEN3 = {"architectures": ("Qwen3ForCausalLM",)}
GPT_OSS = {"architectures": ("GptOssForCausalLM",)}


@pytest.mark.parametrize(
    ("target", "version", "expected"),
    [
        # Before 0.4.4.post4 the three are the fields' own defaults, for every target.
        (QWEN3, "0.4.2", (5, 8, 64)),
        (DEEPSEEK, "0.4.4", (5, 4, 8)),
        # 0.4.4.post4-0.4.6.post5: (5, 4, 8) for every architecture.
        (DEEPSEEK, "0.4.6.post5", (5, 4, 8)),
        (DEEPSEEK, "0.4.7", (3, 1, 4)),
        (GPT_OSS, "0.5.0rc2", (5, 4, 8)),
        (GPT_OSS, "0.5.1", (3, 1, 4)),
        # An architecture no list names got the tree until 0.5.7, the chain from 0.5.8.
        (QWEN3, "0.5.7", (5, 4, 8)),
        (QWEN3, "0.5.8", (3, 1, 4)),
        (LLAMA, "0.5.23", (5, 4, 8)),
    ],
)
def test_auto_params_follow_the_release(target, version, expected):
    resolution = resolve(EAGLE, target=target, version=version)
    assert (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens) == expected
    assert resolution.set_by["eagle_topk"]


def test_standalone_always_gets_the_chain():
    standalone = (*T, "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "d")
    resolution = resolve(standalone, target=LLAMA, version="0.5.2")
    assert (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens) == (3, 1, 4)


def test_eagle_draft_backend_is_left_as_given():
    assert resolve(EAGLE).draft_attention_backend is None
    assert resolve((*EAGLE, "--speculative-draft-attention-backend", "fa3")).draft_attention_backend == "fa3"


@pytest.mark.parametrize("algorithm", ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE"])
def test_mtp_target_fills_the_draft_path(algorithm):
    resolution = resolve((*T, "--speculative-algorithm", algorithm), target=DEEPSEEK)
    assert resolution.draft_model_path == "t"


def test_qwen4_exp_is_an_mtp_target():
    resolution = resolve((*T, "--speculative-algorithm", "NEXTN"), target={"architectures": ("Qwen4ExpForConditionalGeneration",)})
    assert resolution.draft_model_path == "t"


def test_lowercase_algorithm_is_upper_cased():
    resolution = resolve((*T, "--speculative-algorithm", "eagle3", "--speculative-draft-model-path", "d"))
    assert resolution.algorithm == "EAGLE3"
    assert resolve((*T, "--speculative-algorithm", "nextn")).set_by["algorithm"] == "NEXTN is an alias of EAGLE"


def test_sgl_jax_defaults_and_no_topk_one_rewrite():
    qwen = ("--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d")
    resolution = resolve(qwen, gpu="TPU-v6e", dialect=Dialect.SGL_JAX, target={"architectures": ("Qwen3ForCausalLM",)})
    assert (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens) == (4, 5, 4)
    assert resolution.attention_backend == "fa"
    chain = resolve((*qwen, "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "8"),
                    gpu="TPU-v6e", dialect=Dialect.SGL_JAX)
    assert chain.num_draft_tokens == 8
    nextn = resolve(("--model-path", "m", "--speculative-algorithm", "NEXTN"), gpu="TPU-v6e", dialect=Dialect.SGL_JAX)
    assert nextn.algorithm == "NEXTN"


@pytest.mark.parametrize(("version", "flag"), [("0.5.13", "--cuda-graph-max-bs="), ("0.5.14", "--cuda-graph-max-bs-decode=")])
def test_rs001_names_the_cuda_graph_flag_of_the_release(version, flag):
    from specguard.rules.resolution.RS001_sglang_will_set_values import RULE

    ctx = Example(argv=EAGLE, target=LLAMA, gpu="H100", sglang_version=version).context()
    (finding,) = RULE.check(ctx)
    assert f"{flag}256" in finding.message
    assert "--attention-backend=fa3" in finding.message


@pytest.mark.parametrize(
    ("extra", "adaptive"),
    [
        ((), True),
        (("--speculative-eagle-topk", "4", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "8"), False),
        (("--tp-size", "2", "--attn-dp-size", "2"), False),
        (("--enable-two-batch-overlap",), False),
    ],
)
def test_adaptive_falls_back_to_static_params_where_sglang_turns_it_off(extra, adaptive):
    resolution = resolve((*EAGLE, "--speculative-adaptive", *extra))
    chain = (3, 1, 4)
    got = (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens)
    assert (got == chain) is adaptive


@pytest.mark.parametrize(("version", "off"), [("0.5.12", True), ("0.5.13", True), ("0.5.14", False)])
def test_frozen_kv_mtp_turns_overlap_off_until_0_5_14(version, off):
    frozen = (*T, "--speculative-algorithm", "FROZEN_KV_MTP", "--speculative-draft-model-path", "d")
    assert resolve(frozen, version=version).disable_overlap_schedule is off


@pytest.mark.parametrize(("version", "expected"), [("0.4.3.post2", None), ("0.4.3.post4", 32), ("0.4.4.post2", 32), ("0.4.4.post4", 48)])
def test_max_running_requests_reset_follows_the_release(version, expected):
    assert resolve(EAGLE, version=version).max_running_requests == expected


DSPARK = (*T, "--speculative-algorithm", "DSPARK", "--speculative-draft-model-path", "d")
DSPARK_DRAFT = {"architectures": ("DSparkDraftModel",)}


@pytest.mark.parametrize(
    ("extra", "draft", "expected_tokens"),
    [
        (("--speculative-dspark-block-size", "3"), None, 4),  # gamma from the flag
        ((), {**DSPARK_DRAFT, "block_size": 5}, 6),  # gamma from the draft config
        ((), DSPARK_DRAFT, 8),  # neither: gamma 7
        (("--speculative-num-steps", "3", "--speculative-eagle-topk", "4"), DSPARK_DRAFT, 8),  # steps and topk forced to 1
        ((), None, None),  # no draft config at hand: only the runtime knows gamma
    ],
)
def test_dspark_sets_one_step_topk_one_and_gamma_plus_one(extra, draft, expected_tokens):
    resolution = resolve((*DSPARK, *extra), draft=draft, version="0.5.16")
    assert (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens) == (1, 1, expected_tokens)
    assert resolution.max_running_requests == 48
    assert "num_draft_tokens" in resolution.set_by


@pytest.mark.parametrize(("version", "mixed"), [("0.5.16", False), ("0.5.18", False), ("0.5.19", True), ("0.5.23", True)])
def test_dspark_turns_mixed_chunk_off_until_0_5_19(version, mixed):
    resolution = resolve((*DSPARK, "--enable-mixed-chunk"), draft=DSPARK_DRAFT, version=version)
    assert resolution.enable_mixed_chunk is mixed


@pytest.mark.parametrize(
    ("algorithm", "version", "overlap_off"),
    [
        ("EAGLE", "0.5.4", True),  # no SGLANG_ENABLE_SPEC_V2 yet
        ("EAGLE", "0.5.4.post1", False),
        ("EAGLE3", "0.5.6.post2", True),  # EAGLE alone before 0.5.7
        ("EAGLE3", "0.5.7", False),
        ("STANDALONE", "0.5.7", True),
        ("STANDALONE", "0.5.8", False),
        ("EAGLE", "0.5.10", False),
        ("EAGLE", "0.5.11", True),  # the flag is kept from 0.5.11
    ],
)
def test_spec_v2_variable_turns_overlap_back_on_before_0_5_11(algorithm, version, overlap_off):
    argv = (*T, "--speculative-algorithm", algorithm, "--speculative-draft-model-path", "d", "--disable-overlap-schedule")
    resolution = resolve(argv, version=version, env={"SGLANG_ENABLE_SPEC_V2": "1"})
    assert resolution.disable_overlap_schedule is overlap_off
    assert resolution.spec_v2_env_overrides_overlap_flag is not overlap_off


@pytest.mark.parametrize(("version", "off"), [("0.5.11", True), ("0.5.13", True), ("0.5.14", False)])
def test_dflash_turns_overlap_off_until_0_5_14(version, off):
    dflash = (*T, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d")
    resolution = resolve(dflash, draft={"architectures": ("DFlashDraftModel",), "block_size": 16}, version=version)
    assert resolution.disable_overlap_schedule is off


@pytest.mark.parametrize(
    ("target", "version", "adaptive"),
    [(LLAMA, "0.5.13", False), (LLAMA, "0.5.14", True), (QWEN3, "0.5.13", True)],
)
def test_adaptive_judged_after_the_automatic_tree_before_0_5_14(target, version, adaptive):
    resolution = resolve((*EAGLE, "--speculative-adaptive"), target=target, version=version)
    assert resolution.adaptive is adaptive
    expected = (3, 1, 4) if adaptive else (5, 4, 8)
    assert (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens) == expected


@pytest.mark.parametrize(
    ("architecture", "before", "first"),
    [
        ("BailingMoeForCausalLM", "0.5.2", "0.5.3rc0"),
        ("BailingMoeV2ForCausalLM", "0.5.2", "0.5.3rc0"),
        ("DeepseekV32ForCausalLM", "0.5.3rc0", "0.5.3rc2"),
        ("Glm4MoeForCausalLM", "0.5.6", "0.5.6.post1"),
        ("MistralLarge3ForCausalLM", "0.5.6", "0.5.6.post1"),
        ("PixtralForConditionalGeneration", "0.5.6", "0.5.6.post1"),
    ],
)
def test_auto_params_chain_lists(architecture, before, first):
    # Each architecture gets the chain from the release whose list names it, the tree before (until 0.5.8).
    target = {"architectures": (architecture,)}
    for version, expected in ((before, (5, 4, 8)), (first, (3, 1, 4))):
        resolution = resolve(EAGLE, target=target, version=version)
        assert (resolution.num_steps, resolution.eagle_topk, resolution.num_draft_tokens) == expected, version


@pytest.mark.parametrize(("version", "page"), [("0.5.21", 128), ("0.5.22", 1)])
def test_fa4_keeps_page_one_for_diffusion_gemma_from_0_5_22(version, page):
    target = {"architectures": ("DiffusionGemmaForBlockDiffusion",)}
    resolution = resolve((*EAGLE, "--attention-backend", "fa4"), target=target, gpu="B200", version=version)
    assert resolution.page_size == page


SLIDING_DFLASH_DRAFT = {"architectures": ("DFlashDraftModel",), "block_size": 16, "num_hidden_layers": 2,
                        "layer_types": ("sliding_attention", "sliding_attention")}


@pytest.mark.parametrize(
    ("version", "draft", "gpu", "expected"),
    [
        ("0.5.16", SLIDING_DFLASH_DRAFT, "B200", "flashinfer"),  # not a draft choice before 0.5.17
        ("0.5.17", SLIDING_DFLASH_DRAFT, "B200", "trtllm_mha"),  # kept for an all-sliding draft
        ("0.5.17", {**SLIDING_DFLASH_DRAFT, "layer_types": ("sliding_attention", "full_attention"), "is_causal": True}, "B200", "trtllm_mha"),
        ("0.5.22", {"architectures": ("DFlashDraftModel",), "block_size": 16}, "B200", "flashinfer"),
        ("0.5.23", {"architectures": ("DFlashDraftModel",), "block_size": 16}, "B200", "fa4"),
    ],
)
def test_dflash_trtllm_mha_draft_backend_by_release(version, draft, gpu, expected):
    argv = (*T, "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d",
            "--speculative-draft-attention-backend", "trtllm_mha")
    assert resolve(argv, draft=draft, gpu=gpu, version=version).draft_attention_backend == expected


# ---- model hooks' defaults (resolution/model_hooks.py) -------------------------------------------------
LONGCAT_FP8 = {"architectures": ("LongcatFlashForCausalLM",), "quantization": "fp8"}


@pytest.mark.parametrize(
    ("version", "gpu", "target", "extra", "expected"),
    [
        ("0.5.15.post1", "B200", LONGCAT_FP8, (), None),  # no such default yet
        ("0.5.16", "B200", LONGCAT_FP8, (), "flashinfer_trtllm"),  # overrides.py:1400-1410
        ("0.5.23", "B200", LONGCAT_FP8, (), "flashinfer_trtllm"),  # :832-842
        ("0.5.23", "H100", LONGCAT_FP8, (), None),  # SM100 only
        ("0.5.23", "B200", {**LONGCAT_FP8, "quant_scale_fmt": "ue8m0"}, (), None),
        ("0.5.23", "B200", LONGCAT_FP8, ("--fp8-gemm-backend", "deep_gemm"), None),
        ("0.5.23", "B200", LONGCAT_FP8, ("--quantization", "unquant"), None),
        ("0.5.23", "B200", {"architectures": ("LongcatFlashForCausalLM",)}, ("--quantization", "modelopt_fp8"), "flashinfer_trtllm"),
        ("0.5.23", "B200", {**LONGCAT_FP8, "architectures": ("DeepseekV3ForCausalLM",)}, (), None),
        # The pass runs only from the DeepSeek-family branch, whose list lacks the NextN class (model_hook.py:267-278).
        ("0.5.16", "B200", {**LONGCAT_FP8, "architectures": ("LongcatFlashForCausalLMNextN",)}, (), None),
        ("0.5.23", "B200", {**LONGCAT_FP8, "architectures": ("LongcatFlashForCausalLMNextN",)}, (), None),
    ],
)
def test_longcat_fp8_gemm_backend_default(version, gpu, target, extra, expected):
    assert resolve((*EAGLE, *extra), target=target, gpu=gpu, version=version).fp8_gemm_runner_backend == expected


KIMI_LINEAR = {"architectures": ("KimiLinearForCausalLM",)}
GLM5_NEXT = {"architectures": ("Glm5NextForConditionalGeneration",)}


@pytest.mark.parametrize(
    ("version", "gpu", "target", "extra", "expected"),
    [
        ("0.5.16", "H100", KIMI_LINEAR, (), None),  # the Kimi hook arrives in 0.5.17
        ("0.5.17", "H100", KIMI_LINEAR, (), "nv_cutedsl"),  # kimi_k3_hook.py:21-28, any GPU
        ("0.5.23", "B200", KIMI_LINEAR, (), "nv_cutedsl"),
        ("0.5.23", "B200", KIMI_LINEAR, ("--linear-attn-verify-backend", "triton"), None),
        ("0.5.21", "B200", GLM5_NEXT, (), None),  # the GLM-5-Next hook arrives in 0.5.22
        ("0.5.22", "B200", GLM5_NEXT, (), "nv_cutedsl"),  # glm5_next_hook.py:18-37
        ("0.5.23", "B200", GLM5_NEXT, (), "nv_cutedsl"),
        ("0.5.23", "H100", GLM5_NEXT, (), None),  # SM100 only
    ],
)
def test_linear_attn_verify_backend_hook_defaults(version, gpu, target, extra, expected):
    resolution = resolve((*EAGLE, *extra), target=target, gpu=gpu, version=version)
    assert resolution.linear_attn_verify_backend == expected
    assert ("linear_attn_verify_backend" in resolution.set_by) == (expected is not None)


def test_linear_attn_verify_backend_needs_a_speculative_algorithm():
    assert resolve(T, target=KIMI_LINEAR, gpu="B200").linear_attn_verify_backend is None


@pytest.mark.parametrize(
    ("version", "gpu", "extra", "expected"),
    [
        ("0.5.16", "B200", (), None),
        ("0.5.17", "B200", (), "trtllm_mha"),  # kimi_k3_hook.py:30-41
        ("0.5.23", "B200", (), "trtllm_mha"),
        ("0.5.23", "H100", (), None),
        ("0.5.23", "B200", ("--speculative-draft-attention-backend", "flashinfer"), "flashinfer"),
    ],
)
def test_kimi_dspark_draft_backend(version, gpu, extra, expected):
    argv = (*T, "--speculative-algorithm", "DSPARK", "--speculative-draft-model-path", "d", *extra)
    resolution = resolve(argv, target=KIMI_LINEAR, gpu=gpu, version=version)
    assert resolution.draft_attention_backend == expected
    # The hook runs before the page constraints, so its trtllm_mha moves page size 1 to 64 (overrides.py:2081-2094).
    assert resolution.page_size == (64 if expected == "trtllm_mha" else 1)



@pytest.mark.parametrize(
    ("version", "extra", "expected"),
    [
        ("0.5.16", (), None),
        ("0.5.17", (), False),  # kimi_k3_hook.py:44-84: capture is on, symm-mem dropped
        ("0.5.18", (), False),
        ("0.5.19", (), None),  # no longer called (cuda_graph_hook.py:461-468)
        ("0.5.18", ("--disable-cuda-graph",), None),  # decode eager: the prefill phase decides, not modelled
        ("0.5.18", ("--disable-cuda-graph", "--cuda-graph-backend-decode", "full"), False),
    ],
)
def test_kimi_symm_mem_dropped_under_cuda_graphs(version, extra, expected):
    argv = (*EAGLE, "--enable-symm-mem", *extra)
    assert resolve(argv, target=KIMI_LINEAR, gpu="B200", version=version).enable_symm_mem is expected
