"""HY364 replayssm-spec-fold-on-non-kda-target."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Applicability, Category, Edit, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
    fix_of,
)
from specguard.rules.hybrid._hybrid import MAMBA_RADIX_ARCHITECTURES
from specguard.rules.hybrid.HY480_replayssm_spec_tree_draft import replayssm_spec_switch
from specguard.sglang_facts.algorithms import REPLAYSSM_KDA_FOLD_ALGORITHMS
from specguard.sglang_facts.changes import Change

REPLAYSSM_SPEC = "--enable-linear-replayssm-spec"
GLM5_NEXT = "Glm5NextForConditionalGeneration"
# 0.5.21 widens the KDA test from kimi_linear_config to hybrid_kda_config, which takes glm5_next too.
GLM5_NEXT_IS_KDA = Change(
    "0.5.21",
    "0.5.21 mem_cache/kv_cache_configurator.py:1125-1137; configs/hybrid_arch.py:136-137",
)


def _non_kda_hybrid(ctx: CheckContext) -> str | None:
    """The target's architecture when it builds the hybrid request pool without a KDA config, else None.

    MAMBA_RADIX_ARCHITECTURES are GDN and Mamba2 hybrids, none of them KDA; a glm5_next target is a KDA
    hybrid that the guard reads as one only from 0.5.21.
    """
    arch = ctx.target.architecture if ctx.target is not None else None
    if arch in MAMBA_RADIX_ARCHITECTURES:
        return arch
    if arch == GLM5_NEXT and not GLM5_NEXT_IS_KDA.present_in(ctx.version):
        return arch
    return None


def check(ctx: CheckContext) -> Iterator[Finding]:
    # The deprecated --enable-gdn-replayssm-spec sets the same field only while SGLang parses it (0.5.17-0.5.19).
    typed = replayssm_spec_switch(ctx)
    if typed is None or ctx.algorithm not in REPLAYSSM_KDA_FOLD_ALGORITHMS:
        return
    # A PD decode server builds its pool through _build_hybrid_mamba_decode_req_pool, which has no such test.
    if ctx.spec.last_value("--disaggregation-mode") == "decode":
        return
    arch = _non_kda_hybrid(ctx)
    if arch is None:
        return
    yield RULE.finding(
        f"{ctx.flag(typed)} with {ctx.algorithm} on {arch} in SGLang {ctx.version}: {ctx.algorithm} commits the "
        "mamba state through the KDA backend's ReplaySSM fold, so building the hybrid request pool raises "
        "'--enable-linear-replayssm-spec with DSPARK/DFLASH requires a KDA model; got a non-KDA model.' "
        f"before the server starts. Drop {ctx.flag(typed)}",
        flags=(typed, "--speculative-algorithm"),
        fix=fix_of(f"drop {typed}", Applicability.UNSAFE, Edit(name=typed, value=None)),
    )


QWEN35_DFLASH = (
    "--model-path",
    "Qwen/Qwen3.5-35B-A3B",
    "--speculative-algorithm",
    "DFLASH",
    "--speculative-draft-model-path",
    "z-lab/Qwen3.5-35B-A3B-DFlash",
)
QWEN35_FACTS = {"architectures": ("Qwen3_5MoeForConditionalGeneration",)}

RULE = Rule(
    check=check,
    code="HY364",
    category=Category.START,
    name="replayssm-spec-fold-on-non-kda-target",
    summary="--enable-linear-replayssm-spec with DSPARK/DFLASH refuses a hybrid target that is not KDA "
    "(0.5.17+; glm5_next until 0.5.20)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.ALWAYS,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--enable-linear-replayssm-spec` (or its deprecated spelling `--enable-gdn-replayssm-spec`, parsed "
        "0.5.17 to 0.5.19) with "
        "`--speculative-algorithm` DSPARK or DFLASH on a GDN or Mamba2 hybrid target (Qwen3-Next, Qwen3.5, "
        "NemotronH, Falcon-H1, Jet-Nemotron, LFM2), from SGLang 0.5.17; also on a glm5_next target "
        "(Glm5NextForConditionalGeneration) in 0.5.20, the one release with that model and the narrow test.",
        why="DSPARK and DFLASH commit the mamba state through the KDA backend's fold, and a non-KDA model would "
        "scatter a None intermediate_ssm, so `KVCacheConfigurator._build_hybrid_req_pool` raises "
        '"--enable-linear-replayssm-spec with DSPARK/DFLASH requires a KDA (kimi_linear) model; got a non-KDA '
        'model." when the flag is on, the algorithm is one of the two and `kimi_linear_config` is None (0.5.17 '
        "mem_cache/kv_cache_configurator.py:765-777, reached for every mamba-ish target outside PD decode, :677-681; "
        "the same in 0.5.20 :1110-1122). 0.5.16 has no such test (the flag was GDN-only, :726-733). 0.5.21 tests "
        "`hybrid_kda_config` instead (:1125-1137), which takes glm5_next too (configs/hybrid_arch.py:136-137), and "
        'prints "--enable-linear-replayssm-spec with DSPARK/DFLASH requires a KDA model; got a non-KDA model.", '
        "unchanged in 0.5.23 (:1706-1717). A PD decode server builds its pool elsewhere, without the test.",
        fix="Drop the flag: ReplaySSM speculative verify folds only KDA (Kimi Linear / Kimi-K3) state for these "
        "algorithms.",
        fix_safety="Unsafe: the verify falls back to the recurrent kernel, which changes speed.",
    ),
    bad=Example(
        argv=(*QWEN35_DFLASH, REPLAYSSM_SPEC),
        target=QWEN35_FACTS,
        sglang_version="0.5.17",
    ),
    good=Example(
        argv=(
            "--model-path",
            "moonshotai/Kimi-K3",
            "--speculative-algorithm",
            "DSPARK",
            "--speculative-draft-model-path",
            "/ckpt/dspark-draft",
            REPLAYSSM_SPEC,
        ),
        target={"architectures": ("KimiK3ForConditionalGeneration",)},
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.16: python/sglang/srt/mem_cache/kv_cache_configurator.py:696-735 (GDN-only, no test)",
        "sglang 0.5.17: python/sglang/srt/mem_cache/kv_cache_configurator.py:677-681,759-777; server_args.py:8404-8410",
        "sglang 0.5.19: python/sglang/srt/server_args.py:4017-4023 (last release with the gdn alias)",
        "sglang 0.5.20: python/sglang/srt/mem_cache/kv_cache_configurator.py:1104-1122; configs/hybrid_arch.py:110-142",
        "sglang 0.5.21: python/sglang/srt/mem_cache/kv_cache_configurator.py:1125-1137; configs/hybrid_arch.py:136-137",
        "sglang 0.5.23: python/sglang/srt/mem_cache/kv_cache_configurator.py:1700-1717",
    ),
    sglang_versions=">=0.5.17",
    log_signatures=(
        r"--enable-linear-replayssm-spec with DSPARK/DFLASH requires a KDA",
    ),
)
