"""DM008 draft-architecture-does-not-match-algorithm."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from enum import Enum

from specguard.models import Applicability, Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    Rule,
    RuleDocs,
    set_flags,
)
from specguard.rules.draft_model._common import (
    DFLASH_HEADS,
    EAGLE1_HEADS,
    EAGLE3_HEADS,
    GEMMA4_ASSISTANTS,
    UNREGISTERED_EAGLE3_NAMES,
    is_mtp_module,
)
from specguard.rules.examples import LLAMA31_8B, LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import DRAFT_CHECKPOINT_ALGORITHMS


class DraftKind(Enum):
    """What a draft's ``architectures[0]`` says it is, most specific first."""

    VLLM_EAGLE3_NAME = "an EAGLE3 head under a name SGLang does not register"
    EAGLE3_HEAD = "an EAGLE3 head"
    EAGLE1_HEAD = "an EAGLE-1 head"
    DFLASH = "a DFlash draft"
    GEMMA4_ASSISTANT = "a Gemma 4 assistant"
    PLAIN_LM = "an ordinary causal LM class"
    OTHER = "any other class"


def draft_kinds(arch: str) -> tuple[DraftKind, ...]:
    """Every kind ``arch`` belongs to, most specific first (a Gemma 4 assistant is also a ``...ForCausalLM``)."""
    kinds = [
        kind
        for kind, member in (
            (DraftKind.VLLM_EAGLE3_NAME, arch in UNREGISTERED_EAGLE3_NAMES),
            (DraftKind.EAGLE3_HEAD, arch in EAGLE3_HEADS),
            (DraftKind.EAGLE1_HEAD, arch in EAGLE1_HEADS),
            (DraftKind.DFLASH, arch in DFLASH_HEADS),
            (DraftKind.GEMMA4_ASSISTANT, arch in GEMMA4_ASSISTANTS),
            (DraftKind.PLAIN_LM, arch.endswith("ForCausalLM") and not is_mtp_module(arch)),
        )
        if member
    ]
    return (*kinds, DraftKind.OTHER)


def _declares_reduced_draft_vocab(ctx: CheckContext) -> bool:
    draft = ctx.draft
    return (
        draft is not None
        and draft.draft_vocab_size is not None
        and draft.vocab_size is not None
        and draft.draft_vocab_size < draft.vocab_size
    )


def _use(right: str, message: str, trained: str = "head") -> Finding:
    return RULE.finding(
        message,
        flags=("--speculative-algorithm",),
        fix=set_flags(f"use {right}, the algorithm this {trained} was trained for", Applicability.UNSAFE,
                      speculative_algorithm=right),
    )


def _eagle3_vllm_name(ctx: CheckContext, arch: str) -> Finding:
    right = UNREGISTERED_EAGLE3_NAMES[arch]
    return RULE.finding(
        f"the draft's architectures say {arch} (the vLLM/AngelSlim name), which SGLang "
        f"{ctx.env.sglang_version} does not register: loading the draft fails with 'Model architectures "
        f"['{arch}'] are not supported' after the target has loaded. Change architectures in the "
        f"draft's config.json to [\"{right}\"], as the SGLang copies of these heads do",
        flags=("--speculative-draft-model-path",),
    )


def _eagle3_with_eagle1_head(ctx: CheckContext, arch: str) -> Finding:
    return _use("EAGLE", f"EAGLE3 with an EAGLE-1 head ({arch}): the target sends three captured hidden states "
                "(3 x hidden) and the EAGLE-1 fc expects embedding + one hidden state, so the first draft "
                f"forward fails with a shape error after loading. Use {ctx.flag('--speculative-algorithm')} EAGLE")


def _eagle_family_with_dflash(ctx: CheckContext, arch: str) -> Finding:
    worker = "EAGLE3" if ctx.algorithm == "EAGLE3" else "EAGLE"
    return _use("DFLASH", f"{worker} with a DFlash draft ({arch}): the {worker} worker cannot drive it. "
                f"Use {ctx.flag('--speculative-algorithm')} DFLASH", trained="draft")


def _eagle3_with_plain_lm(ctx: CheckContext, arch: str) -> Finding:
    if arch == "LlamaForCausalLM" and ctx.draft is not None and ctx.draft.num_hidden_layers == 1:
        return RULE.finding(
            "the EAGLE3 draft's architectures say LlamaForCausalLM (an original yuhuili upload): SGLang "
            "loads it as a plain one-layer Llama, skips its fc and d2t weights, and its lm_head has "
            "draft_vocab_size rows, so loading fails or the draft ignores the target's hidden states. "
            "Set architectures to [\"LlamaForCausalLMEagle3\"] in its config.json (as the lmsys/jamesliu1 "
            "copies do)",
            flags=("--speculative-draft-model-path",),
        )
    # The EAGLE3 worker calls draft.set_embed() and reads draft.hot_token_id (eagle_worker_v2.py:353-369);
    # in 0.5.23 only llama.py has set_embed and only llama_eagle3.py has hot_token_id.
    return RULE.finding(
        f"EAGLE3 with a draft whose architectures say {arch}, an ordinary causal LM class: SGLang builds "
        f"that class, so an EAGLE3 head's weights (midlayer.*, fc, d2t) do not load into it (KeyError "
        "'midlayer...'), and a real language model lacks the set_embed / hot_token_id the EAGLE3 worker "
        "calls; either way it fails after the target has loaded. If it is an EAGLE3 head exported with the "
        "target's class name, set architectures to [\"LlamaForCausalLMEagle3\"] in its config.json; if it "
        f"is a small model of the target's family, use {ctx.flag('--speculative-algorithm')} STANDALONE",
        flags=("--speculative-draft-model-path",),
    )


def _eagle_with_eagle3_head(ctx: CheckContext, arch: str) -> Finding:
    return _use("EAGLE3", f"EAGLE with an EAGLE3 head ({arch}): SGLang accepts it, but the target then captures no "
                "auxiliary hidden states, the head skips its fc layer and drafts from features it was never "
                f"trained on, so almost nothing is accepted. Use {ctx.flag('--speculative-algorithm')} EAGLE3")


def _eagle_with_plain_lm(ctx: CheckContext, arch: str) -> Finding:
    layers = ctx.draft.num_hidden_layers if ctx.draft is not None else None
    if layers == 1:
        hint = (f"if it is an EAGLE head uploaded with a plain name (yuhuili/EAGLE-*), set architectures to "
                f"[\"{arch}Eagle\"] in its config.json as the lmsys/sglang-EAGLE copies do")
    else:
        hint = f"if it is a small model of the target's family, use {ctx.flag('--speculative-algorithm')} STANDALONE"
    return RULE.finding(
        f"EAGLE with a plain causal LM draft ({arch}, {layers or '?'} layers): "
        "SGLang loads it as an ordinary model that ignores the target's hidden states (its fc weights, "
        f"if any, are skipped), so acceptance is near zero; {hint}",
        flags=("--speculative-draft-model-path",),
    )


def _standalone_with_head(ctx: CheckContext, arch: str) -> Finding:
    right = "EAGLE" if arch in EAGLE1_HEADS else "EAGLE3"
    return _use(right, f"STANDALONE with an EAGLE head ({arch}): a head has no standalone forward (it needs the "
                f"target's hidden states, which the STANDALONE worker never passes), so the draft fails or "
                f"drafts nonsense. Use {ctx.flag('--speculative-algorithm')} {right}")


def _standalone_with_non_lm(ctx: CheckContext, arch: str) -> Finding:
    return RULE.finding(
        f"STANDALONE with a {arch} draft, which is not a standalone language model. Use the algorithm "
        "it was trained for",
        flags=("--speculative-algorithm",),
    )


def _dflash_with_other(ctx: CheckContext, arch: str) -> Finding:
    return RULE.finding(
        f"DFLASH needs a DFlash draft (architectures DFlashDraftModel), but the draft is {arch}: the DFLASH "
        "worker reads block_size and dflash_config.target_layer_ids from it and cannot run another kind "
        "of draft",
        flags=("--speculative-algorithm", "--speculative-draft-model-path"),
    )


_K = DraftKind
# The algorithm x draft-kind matrix: the first of the draft's kinds (most specific first) with an entry
# decides; None is a right pairing, no entry falls through to the next kind, and the last kind (OTHER)
# has an entry only where every remaining draft is wrong.
MATRIX: dict[tuple[str, DraftKind], Callable[[CheckContext, str], Finding] | None] = {
    ("EAGLE3", _K.VLLM_EAGLE3_NAME): _eagle3_vllm_name,
    ("EAGLE3", _K.EAGLE3_HEAD): None,
    ("EAGLE3", _K.EAGLE1_HEAD): _eagle3_with_eagle1_head,
    ("EAGLE3", _K.DFLASH): _eagle_family_with_dflash,
    ("EAGLE3", _K.PLAIN_LM): _eagle3_with_plain_lm,
    ("EAGLE", _K.VLLM_EAGLE3_NAME): _eagle_with_eagle3_head,
    ("EAGLE", _K.EAGLE3_HEAD): _eagle_with_eagle3_head,
    ("EAGLE", _K.EAGLE1_HEAD): None,
    ("EAGLE", _K.DFLASH): _eagle_family_with_dflash,
    ("EAGLE", _K.PLAIN_LM): _eagle_with_plain_lm,
    ("STANDALONE", _K.VLLM_EAGLE3_NAME): _standalone_with_head,
    ("STANDALONE", _K.EAGLE3_HEAD): _standalone_with_head,
    ("STANDALONE", _K.EAGLE1_HEAD): _standalone_with_head,
    ("STANDALONE", _K.DFLASH): _standalone_with_non_lm,
    ("STANDALONE", _K.GEMMA4_ASSISTANT): _standalone_with_non_lm,
    ("STANDALONE", _K.PLAIN_LM): None,
    ("DFLASH", _K.DFLASH): None,
    ("DFLASH", _K.OTHER): _dflash_with_other,
}


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = ctx.algorithm
    if algorithm not in DRAFT_CHECKPOINT_ALGORITHMS or ctx.draft is None:
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        return
    arch = ctx.draft.architecture
    if algorithm == "EAGLE" and _declares_reduced_draft_vocab(ctx) and arch not in EAGLE3_HEADS | UNREGISTERED_EAGLE3_NAMES.keys():
        # Only EAGLE3 heads are trained on a reduced vocabulary: an EAGLE-1 head's lm_head spans the
        # target's whole vocabulary (llama_eagle.py never reads draft_vocab_size; llama_eagle3.py:306-318 does).
        yield _use("EAGLE3", f"EAGLE with a draft whose config.json declares draft_vocab_size {ctx.draft.draft_vocab_size} "
                   f"below vocab_size {ctx.draft.vocab_size}: that is an EAGLE3 head (EAGLE-1 heads share the target's "
                   "whole vocabulary). Under EAGLE the target captures no auxiliary hidden states and the draft's logits "
                   "do not fit the target's vocabulary, so CUDA-graph capture or the first draft step fails. "
                   f"Use {ctx.flag('--speculative-algorithm')} EAGLE3")
        return
    if arch is None:
        return
    for kind in draft_kinds(arch):
        if (algorithm, kind) in MATRIX:
            verdict = MATRIX[(algorithm, kind)]
            if verdict is not None:
                yield verdict(ctx, arch)
            return


RULE = Rule(
    check=check,
    code="DM008",
    category=Category.START,
    name="draft-architecture-does-not-match-algorithm",
    summary="The draft's architecture is not the kind of draft the algorithm runs",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Compares the draft's `architectures[0]` with the algorithm: EAGLE3 wants an EAGLE3 head "
        "(`LlamaForCausalLMEagle3`), EAGLE an EAGLE-1 head (`LlamaForCausalLMEagle`, "
        "`Qwen2ForCausalLMEagle`, ...) or an MTP module, DFLASH a `DFlashDraftModel`, STANDALONE an "
        "ordinary language model. Under EAGLE3 any ordinary causal-LM class is wrong (an EAGLE3 head exported "
        "with the target's class name, such as `Qwen3ForCausalLM`, included); under EAGLE a draft whose config "
        "declares `draft_vocab_size` below `vocab_size` is an EAGLE3 head whatever its class.",
        why="SGLang accepts any pairing at argument time (P10, cases dm:P01-P03) and loads the draft by its "
        "`architectures`. A wrong head either fails after the target has loaded (EAGLE-1 head under EAGLE3: "
        "fc shape mismatch; `Eagle3LlamaForCausalLM`, the vLLM/AngelSlim name, is not registered in 0.5.23 - "
        "only `LlamaForCausalLMEagle3` is, `models/llama_eagle3.py:387`) or runs with near-zero acceptance "
        "(an EAGLE3 head under EAGLE skips its fc because the target captures no aux states; yuhuili's "
        "original uploads say plain `LlamaForCausalLM`, which SGLang loads as an ordinary one-layer Llama "
        "that ignores the hidden states - the lmsys/jamesliu1 copies only rename `architectures`). All "
        "cases are errors: even the silent ones make speculation slower than none.",
        fix="When the head is a known kind, specguard proposes the algorithm it was trained for; renamed "
        "heads need their config.json edited.",
        fix_safety="Unsafe: it changes the algorithm.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "EAGLE",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B"),
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3,
        draft={"architectures": ("LlamaForCausalLMEagle3",)},
    ),
    sources=(
        "design: sglang-spec-checks.md P10 (cases dm:P01, P02, P03)",
        "design: dialects.md §4 (draft naming: LlamaForCausalLMEagle3, Eagle3LlamaForCausalLM, LlamaForCausalLMEagle)",
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle3.py:238-247, 387",
        "sglang 0.5.23: python/sglang/srt/models/llama_eagle.py:91, 153",
        "sglang 0.5.23: python/sglang/srt/models/dflash.py:1317",
        "sglang 0.5.23: python/sglang/srt/models/llama.py:929-941 (set_eagle3_layers_to_capture)",
        "fixture: shared/fixtures/draft-templates/Tencent-AngelSlim/qwen3-32b-eagle3.json (Eagle3LlamaForCausalLM)",
        "https://github.com/sgl-project/sglang/issues/9135 (an EAGLE3 head whose config says Qwen3ForCausalLM: KeyError 'midlayer.self_attn.qkv_proj.weight' in qwen3.py)",
        "https://github.com/sgl-project/sglang/issues/12421 (EAGLE with a draft_vocab_size 32000 EAGLE3 head: logits 32000 vs 151936 in draft-extend graph capture)",
        "https://github.com/sgl-project/sglang/issues/36528 (EAGLE3 on a plain Qwen2/Llama class: no set_embed / no hot_token_id)",
        "sglang 0.5.23: python/sglang/srt/speculative/eagle_worker_v2.py:353-369 (set_embed, hot_token_id); models/llama_eagle3.py:306-318 (draft_vocab_size)",
    ),
    # The matrix is SGLang's registry and workers; sgl-jax has its own (python/sgl_jax/srt/models),
    # which specguard has not read, so an sgl-jax launch is not judged by SGLang's.
    dialects=SGLANG_DIALECTS,
)
