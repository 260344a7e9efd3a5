"""DM620 kimi-eagle3-mla-fp8-kv-b-proj."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)

# The MLA EAGLE3 head of Kimi-K2.5 (models/kimi_k25_eagle3.py EntryClass, new in 0.5.12).
MLA_EAGLE3_DRAFT = "Eagle3DeepseekV2ForCausalLM"
# A serialized fp8 checkpoint builds its linear weights as float8_e4m3fn (0.5.12 layers/quantization/fp8.py:203-205,
# :416); other methods are left quiet (their module lists and dtypes are not read here).
FP8 = "fp8"
# The module path Fp8Config tests: the midlayer takes the model's own prefix, so kv_b_proj sits at
# model.self_attn.kv_b_proj (0.5.12 kimi_k25_eagle3.py:95,208-213, deepseek_v2.py:1454; 0.5.23 :106,245-250), not
# at the checkpoint's layers.0.self_attn.kv_b_proj.
KV_B_PROJ_PREFIX = "model.self_attn.kv_b_proj"
DRAFT_QUANT = "--speculative-draft-model-quantization"


def _path_match(ignored: str, prefix: str) -> bool:
    """layers/quantization/utils.py _module_path_match: a match on dotted module-path boundaries (0.5.12 :48-57,
    0.5.23 :48-60 also strips trailing dots)."""
    ignored, prefix = ignored.rstrip("."), prefix.rstrip(".")
    return (
        ignored == prefix
        or prefix.startswith(ignored + ".")
        or f".{ignored}." in f".{prefix}."
    )


def _skips_kv_b_proj(ignored_layers: tuple[str, ...]) -> bool:
    """Fp8Config's is_layer_skipped for kv_b_proj: each ignored entry is tried without and with "model." (0.5.12
    fp8.py:210-220; 0.5.23 :354-364)."""
    for entry in ignored_layers:
        base = entry.removeprefix("model.")
        if _path_match(base, KV_B_PROJ_PREFIX) or _path_match(
            f"model.{base}", KV_B_PROJ_PREFIX
        ):
            return True
    return False


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.draft
    if (
        ctx.algorithm != "EAGLE3"
        or draft is None
        or draft.architecture != MLA_EAGLE3_DRAFT
    ):
        return
    # A typed quantization may replace the checkpoint's for the draft (QT040); an online fp8 leaves bf16 weights at
    # post-load time. Either is left quiet.
    if (
        ctx.spec.has(DRAFT_QUANT)
        or ctx.spec.has("--quantization")
        or draft.quantization != FP8
    ):
        return
    if _skips_kv_b_proj(draft.quantization_ignored or ()):
        return
    yield RULE.finding(
        f"an fp8 checkpoint of the MLA EAGLE3 head ({MLA_EAGLE3_DRAFT}) in SGLang {ctx.version}: its "
        "self_attn.kv_b_proj is built as a float8 weight, and after loading the draft splits that weight into the "
        'absorbed w_kc/w_vc for float dtypes only, so it raises "NotImplementedError: Eagle3 MLA draft '
        'post_load_weights only supports float dtypes, got torch.float8_e4m3fn" and the server does not start. '
        "Use a BF16 export of the draft, or one that stores kv_b_proj unquantized and lists it in "
        "quantization_config.ignored_layers as self_attn.kv_b_proj (the name SGLang's module has; "
        "layers.0.self_attn.kv_b_proj does not match it)",
        flags=("--speculative-draft-model-path",),
    )


KIMI_K25_EAGLE3 = (
    "--model-path",
    "moonshotai/Kimi-K2.5",
    "--tp",
    "8",
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    "/ckpt/kimi-k2.5-eagle3-fp8",
)
KIMI_K25_FACTS = {"architectures": ("KimiK25ForConditionalGeneration",)}
FP8_MLA_DRAFT = {"architectures": (MLA_EAGLE3_DRAFT,), "quantization": FP8}

RULE = Rule(
    check=check,
    code="DM620",
    category=Category.START,
    name="kimi-eagle3-mla-fp8-kv-b-proj",
    summary="An fp8 checkpoint of the MLA EAGLE3 draft (Kimi-K2.5) fails after loading: kv_b_proj must be a float "
    "weight (0.5.12+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE3 with a draft whose config.json `architectures[0]` is Eagle3DeepseekV2ForCausalLM and whose "
        "`quantization_config.quant_method` is fp8, with no `ignored_layers` (or `modules_to_not_convert`) entry "
        "that matches the module path `model.self_attn.kv_b_proj` as Fp8Config matches it (whole dotted segments, "
        "with or without `model.`: `self_attn.kv_b_proj`, `kv_b_proj`, `self_attn` do; the checkpoint's "
        "`layers.0.self_attn.kv_b_proj` does not) and neither `--speculative-draft-model-quantization` nor `--quantization`, SGLang 0.5.12 or later. Other quantization "
        "methods stay quiet.",
        why="0.5.12 added the MLA EAGLE3 head. Its attention builds kv_b_proj with the draft's quant config "
        "(models/deepseek_v2.py:1449-1457); a serialized fp8 config makes that weight float8_e4m3fn unless the "
        "ignored list skips the module (layers/quantization/fp8.py:203-220, :236-248, :416; the match is "
        "layers/quantization/utils.py:48-57,68-106 against the module prefix, model.self_attn.kv_b_proj, since the "
        "midlayer takes the model's prefix, kimi_k25_eagle3.py:95,208-213). `load_weights` then "
        "calls `post_load_weights` (kimi_k25_eagle3.py:450), before the quant method's post-processing, which raises "
        "NotImplementedError for any kv_b_proj dtype but bf16/fp16/fp32 (:452-468). Only modelopt_fp4 is dropped for "
        "the draft (:282-289). Unchanged in 0.5.23 (kimi_k25_eagle3.py:333-339, :501-514). 0.5.11 has no such model.",
        fix="Use a BF16 draft checkpoint, or one that keeps kv_b_proj unquantized. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=KIMI_K25_EAGLE3,
        target=KIMI_K25_FACTS,
        draft=FP8_MLA_DRAFT,
        gpu="H200",
        sglang_version="0.5.12",
    ),
    good=Example(
        argv=KIMI_K25_EAGLE3,
        target=KIMI_K25_FACTS,
        draft={
            **FP8_MLA_DRAFT,
            "quantization_ignored": ("self_attn.kv_b_proj",),
        },
        gpu="H200",
        sglang_version="0.5.12",
    ),
    sources=(
        "sglang 0.5.11: python/sglang/srt/models (no kimi_k25_eagle3.py)",
        "sglang 0.5.12: python/sglang/srt/models/kimi_k25_eagle3.py:80,95,208-213,282-289,450-468; models/deepseek_v2.py:1449-1457",
        "sglang 0.5.12: python/sglang/srt/layers/quantization/fp8.py:203-220,236-248,416; layers/quantization/utils.py:48-106",
        "sglang 0.5.23: python/sglang/srt/models/kimi_k25_eagle3.py:106,245-250,333-339,501-514",
        "sglang 0.5.23: python/sglang/srt/layers/quantization/fp8.py:354-364; layers/quantization/utils.py:48-60",
    ),
    sglang_versions=">=0.5.12",
    log_signatures=(r"Eagle3 MLA draft post_load_weights only supports float dtypes",),
)
