"""AB200 eagle-on-intel-xpu-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS
from specguard.sglang_facts.changes import XPU_TREE_KERNELS

# The draft worker's DraftBackendFactory builds a multi-step decode backend and a draft-extend
# backend from two maps of names and raises ValueError for a name missing from them
# (draft_utils.py `_create_backend`). intel_xpu, an --attention-backend choice from 0.5.4, is in
# neither map from 0.5.4 to 0.5.19; 0.5.20 adds it to both (draft_utils.py:100, 131).
BACKEND = "intel_xpu"
TYPED = ("--speculative-draft-attention-backend", "--attention-backend", "--prefill-attention-backend",
         "--decode-attention-backend")


def _looked_up(ctx: CheckContext) -> tuple[str | None, str | None]:
    """The names the factory looks up: (decode, draft extend). A draft backend replaces both; else
    decode reads the decode backend and the extend reads the prefill one, or the decode one under
    --speculative-attention-mode decode (each phase falls back to --attention-backend). The decode
    map is read only for more than one draft step (0.5.19 draft_utils.py:79-82); SGLang's own
    choice of steps, when none is given, is more than one."""
    attention = ctx.spec.get("attention_backend")
    draft = ctx.spec.get("speculative_draft_attention_backend")
    decode = draft or ctx.spec.get("decode_attention_backend") or attention
    extend_phase = decode if ctx.spec.last_value("--speculative-attention-mode") == "decode" else (
        ctx.spec.get("prefill_attention_backend") or attention)
    steps = ctx.spec.get("speculative_num_steps")
    return (decode if steps is None or steps > 1 else None), draft or extend_phase


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or BACKEND not in _looked_up(ctx):
        return
    typed = [flag for flag in TYPED if ctx.spec.last_value(flag) == BACKEND]
    # Before the XPU tree kernels, EAGLE on XPU fails with any draft backend (AB251): triton is no way out there.
    other_backend = (
        f"give the draft another backend with {ctx.flag('--speculative-draft-attention-backend')} triton, or drop "
        f"{ctx.flag('--speculative-algorithm')}"
        if XPU_TREE_KERNELS.present_in(ctx.version)
        else f"drop {ctx.flag('--speculative-algorithm')} (before {XPU_TREE_KERNELS.first_release} EAGLE on XPU fails "
        "with any draft backend: the tree kernels are CUDA/ROCm-only)"
    )
    yield RULE.finding(
        f"{', '.join(ctx.flag(f) for f in typed)} {BACKEND} with {ctx.algorithm}: SGLang {ctx.env.sglang_version}'s "
        f"draft worker has no {BACKEND} draft backend, so it raises ValueError 'EAGLE is not supported in (decode) "
        f"attention backend {BACKEND}' while the server starts, after the target has loaded (on an XPU without "
        f"XMX SGLang swaps {BACKEND} for triton first). SGLang 0.5.20 adds the XPU draft backends; on this release "
        f"{other_backend}",
        flags=(*typed, "--speculative-algorithm"),
    )


XPU_EAGLE3 = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--device", "xpu", "--attention-backend", BACKEND,
              "--page-size", "64", "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")

RULE = Rule(
    check=check,
    code="AB200",
    category=Category.START,
    name="eagle-on-intel-xpu-refused",
    summary="EAGLE/EAGLE3/STANDALONE with the intel_xpu attention backend is refused before SGLang 0.5.20",
    severity=Severity.ERROR,
    sglang_versions=">=0.5.4,<0.5.20",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE whose draft decode or draft-extend backend is intel_xpu "
        "(`--speculative-draft-attention-backend`, or the per-phase backends, or `--attention-backend`), "
        "SGLang 0.5.4 through 0.5.19.",
        why="The draft worker's `DraftBackendFactory` looks the draft's backend name up in a decode map and "
        "a draft-extend map and raises `ValueError('EAGLE is not supported in decode attention backend "
        "intel_xpu')` for a missing name (0.5.19 `speculative/draft_utils.py:42-59`, maps at :88-135). "
        "intel_xpu became an `--attention-backend` choice in 0.5.4 and is in neither map from 0.5.4 (`draft_utils.py`) "
        "to 0.5.19; the XPU backend itself asserted it did not support speculative decoding "
        "(0.5.19 `layers/attention/xpu_backend.py:123-126`). 0.5.20 adds intel_xpu to both maps "
        "(`draft_utils.py:100, 131, 290-295, 488-493`) and drops the assert. SGLang replaces intel_xpu with "
        "triton on an XPU without XMX (0.5.19 `arg_groups/overrides.py:1329-1337`), where the launch starts.",
        fix="Give the draft another backend (`--speculative-draft-attention-backend triton`, from 0.5.15, where "
        "SGLang has XPU tree kernels: AB251), upgrade to 0.5.20, or serve without speculative decoding.",
        fix_safety="No automatic fix: which backend the draft should run is the user's choice.",
    ),
    bad=Example(argv=XPU_EAGLE3, sglang_version="0.5.19"),
    good=Example(argv=XPU_EAGLE3, sglang_version="0.5.20"),
    sources=(
        "sglang 0.5.3.post3: python/sglang/srt/server_args.py (no intel_xpu attention backend)",
        "sglang 0.5.4: python/sglang/srt/speculative/draft_utils.py (no intel_xpu in the draft backend maps)",
        "sglang 0.5.19: python/sglang/srt/speculative/draft_utils.py:42-59, 88-135; layers/attention/xpu_backend.py:123-126",
        "sglang 0.5.20: python/sglang/srt/speculative/draft_utils.py:100, 131, 290-295, 488-493",
    ),
    log_signatures=(r"EAGLE is not supported in (decode )?attention backend intel_xpu",),
)
