"""JX005 sgl-jax-dflash-constraints."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, Rule, RuleDocs, set_flags
from specguard.rules.examples import QWEN3_8B_DFLASH
from specguard.rules.sgl_jax._jax import jax_example, raw_algorithm


def check(ctx: CheckContext) -> Iterator[Finding]:
    if raw_algorithm(ctx) != "DFLASH":
        return
    if ctx.spec.get("speculative_draft_model_path") is None:
        yield RULE.finding(
            f"DFLASH on sgl-jax needs {ctx.flag('--speculative-draft-model-path')} (the DFlash draft whose "
            "config.json gives block_size and target_layer_ids); sgl-jax raises without it",
            flags=("--speculative-draft-model-path",),
        )
    steps, topk = ctx.spec.get("speculative_num_steps"), ctx.spec.get("speculative_eagle_topk")
    wrong = {name: v for name, v in (("steps", steps), ("topk", topk)) if v is not None and v != 1}
    if wrong:
        yield RULE.finding(
            "DFLASH on sgl-jax requires one step and topk 1 and raises otherwise ("
            + ", ".join(f"{k} is {v}" for k, v in wrong.items())
            + "); SGLang would override them to 1",
            flags=("--speculative-num-steps", "--speculative-eagle-topk"),
            fix=set_flags("set steps 1 and topk 1", Applicability.SAFE, speculative_num_steps=1, speculative_eagle_topk=1),
        )
    lora = [flag for flag in LORA_FLAGS if ctx.spec.has(flag)]
    if lora:
        yield RULE.finding(
            f"DFLASH on sgl-jax with LoRA ({', '.join(ctx.flag(f) for f in lora)}): sgl-jax raises "
            "'DFLASH does not support LoRA.' at argument parsing; serve the adapters without DFLASH, or "
            "DFLASH without the adapters",
            flags=tuple(lora),
        )


# sglang-jax 4406938a..cddbf6f1 server_args.py: `if self.enable_lora or self.enable_static_lora or
# self.lora_paths: raise ValueError("DFLASH does not support LoRA.")` (cddbf6f1 :1929-1930).
LORA_FLAGS = ("--enable-lora", "--enable-static-lora", "--lora-paths")


RULE = Rule(
    check=check,
    code="JX005",
    category=Category.START,
    name="sgl-jax-dflash-constraints",
    summary="sgl-jax: DFLASH without a draft path, with steps/topk other than 1, or with LoRA",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="sgl-jax DFLASH launches: a draft path is required, typed steps and topk must be 1, and "
        "LoRA (`--enable-lora`, `--enable-static-lora`, `--lora-paths`) is refused.",
        why="sgl-jax's argument checks require topk == 1, num_steps == 1 and a draft path for DFLASH "
        "(design/dialects.md §2); the draft token count comes from the draft config's `block_size`. "
        "SGLang instead overrides steps/topk to 1 with a warning (catalogue P74) and raises only for a "
        "missing draft path (P73). sgl-jax also refuses LoRA with DFLASH, from DFLASH's arrival (#1467, "
        "4406938a) to HEAD.",
        fix="Set steps and topk to 1 (the only values DFLASH runs); add the DFlash draft path.",
        fix_safety="Safe: 1 is the only value either runtime runs DFLASH with.",
    ),
    bad=jax_example("--speculative-num-steps", "3", "--speculative-eagle-topk", "1", base=QWEN3_8B_DFLASH),
    good=jax_example("--speculative-num-steps", "1", "--speculative-eagle-topk", "1", base=QWEN3_8B_DFLASH),
    sources=(
        "sglang-jax HEAD cddbf6f1: python/sgl_jax/srt/server_args.py:1888-1932 (DFLASH checks); dflash_util.parse_dflash_draft_config",
        "sglang-jax 4406938a (#1467): python/sgl_jax/srt/server_args.py (the DFLASH checks arrive with DFLASH, LoRA refused)",
        "design: shared/design/dialects.md §2",
        "catalogue: shared/design/sglang-spec-checks.md P73, P74",
    ),
    dialects=(Dialect.SGL_JAX,),
)
