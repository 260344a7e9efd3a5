"""AB110 eagle-on-intel-amx-refused."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.attention.backends import SGLANG_DIALECTS
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

# The EAGLE draft worker builds its multi-step decode and draft-extend attention backends from a
# map of backend names and raises ValueError for a name missing from it. intel_amx (the CPU
# backend, a choice from 0.4.7, and what `--device cpu` picks when no backend is given) is missing
# from 0.4.7 (eagle_worker.py:155-236) to 0.5.15.post1 (speculative/draft_utils.py:36-37, maps at
# :41-106); 0.5.16 adds it to both maps (draft_utils.py:52, 78).
BACKEND = "intel_amx"


def _draft_backends(ctx: CheckContext) -> tuple[set[str | None], bool]:
    """The backends the draft worker looks up (the per-phase flags, else the attention backend)
    and whether the attention backend was left to ``--device cpu``."""
    attention = ctx.spec.get("attention_backend")
    defaulted = attention is None and ctx.spec.get("device") == "cpu"
    if defaulted:
        attention = BACKEND
    phases = (ctx.spec.get("prefill_attention_backend"), ctx.spec.get("decode_attention_backend"))
    return {phase or attention for phase in phases}, defaulted


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in EAGLE_WORKER_ALGORITHMS or ctx.spec.get("speculative_draft_attention_backend") is not None:
        return
    backends, defaulted = _draft_backends(ctx)
    if backends != {BACKEND}:
        return
    if defaulted:
        how = (
            f"{ctx.flag('--device')} cpu with no {ctx.flag('--attention-backend')} runs {BACKEND} on an x86 host "
            "(torch_native on Arm, which the draft worker refuses as well)"
        )
        flags: tuple[str, ...] = ("--device",)
    else:
        typed = [f for f in ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")
                 if ctx.spec.has(f)]
        how = f"{', '.join(ctx.flag(f) for f in typed)} {BACKEND}"
        flags = tuple(typed)
    yield RULE.finding(
        f"{how}, and SGLang {ctx.env.sglang_version}'s EAGLE draft worker has no {BACKEND} draft backend: it raises "
        f"ValueError 'EAGLE is not supported in attention backend {BACKEND}' (or 'decode attention backend') when "
        f"the server starts. Speculative decoding on {BACKEND} needs SGLang 0.5.16 or later; on this release drop "
        f"{ctx.flag('--speculative-algorithm')}.",
        flags=(*flags, "--speculative-algorithm"),
    )


CPU_EAGLE3 = ("--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--device", "cpu",
              "--speculative-algorithm", "EAGLE3",
              "--speculative-draft-model-path", "lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B")

RULE = Rule(
    check=check,
    code="AB110",
    category=Category.START,
    name="eagle-on-intel-amx-refused",
    summary="EAGLE/EAGLE3 on the intel_amx (CPU) attention backend is refused before SGLang 0.5.16",
    severity=Severity.ERROR,
    sglang_versions=">=0.4.7,<0.5.16",
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="EAGLE, EAGLE3 (NEXTN) or STANDALONE whose draft attention backend is intel_amx: typed as "
        "`--attention-backend` (and not overridden by `--prefill-attention-backend`, "
        "`--decode-attention-backend` or `--speculative-draft-attention-backend`), or left to `--device cpu`, "
        "on SGLang 0.4.7 through 0.5.15.post1.",
        why="The EAGLE draft worker picks its multi-step decode and draft-extend attention backends from a map "
        "of backend names and raises `ValueError('EAGLE is not supported in attention backend intel_amx')` (the name it was given) for any "
        "other (0.4.7 `speculative/eagle_worker.py:155-236`; 0.5.15.post1 `speculative/draft_utils.py:36-37`, "
        "maps at `:41-106`). intel_amx, the CPU backend (a choice from 0.4.7, and SGLang's pick for "
        "`--device cpu` on x86, `server_args.py:329-331` in 0.4.7), is in neither map until 0.5.16, which adds "
        "an intel_amx multi-step draft backend (`draft_utils.py:52, 78, 153-160, 309-312`). On Arm hosts "
        "`--device cpu` picks torch_native, which the maps lack as well.",
        fix="Upgrade to SGLang 0.5.16 or later for speculative decoding on CPU, or serve without it.",
        fix_safety="No automatic fix: the release has to change, or speculation goes.",
    ),
    bad=Example(argv=CPU_EAGLE3, sglang_version="0.5.15.post1"),
    good=Example(argv=CPU_EAGLE3, sglang_version="0.5.16"),
    sources=(
        "sglang 0.4.6: python/sglang/srt/server_args.py (no intel_amx backend)",
        "sglang 0.4.7: python/sglang/srt/server_args.py:329-331, 1020; speculative/eagle_worker.py:155-236 (no intel_amx branch)",
        "sglang 0.5.15.post1: python/sglang/srt/speculative/draft_utils.py:36-37 (the raise), 41-106 (the maps)",
        "sglang 0.5.16: python/sglang/srt/speculative/draft_utils.py:52, 78, 153-160, 309-312 (intel_amx draft backends)",
    ),
    log_signatures=(r"EAGLE is not supported in (decode )?attention backend intel_amx",),
)
