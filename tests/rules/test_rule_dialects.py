"""Which rules run on an sgl-jax launch: those about sgl-jax itself, the model pair and the host.

A rule about SGLang's own code path (a window of SGLang releases, an SGLANG_* variable, a flag
only SGLang has, CUDA graphs) must stay quiet on sgl-jax, which has its own code: it declares
``dialects=SGLANG_DIALECTS`` (or an ``sglang_versions`` window, which sgl-jax is outside of).
This test makes every new rule decide: one that runs on sgl-jax must be listed here, with why.
"""

from __future__ import annotations

from specguard.models import Dialect
from specguard.rules import ALL_RULES
from specguard.rules.base import SGLANG_DIALECTS, Example

# Facts of the draft/target pair that break any runtime that loads them (shapes, vocabularies,
# dtypes, context, MTP layers, draft kind), the server's exposure and remote code, the memory
# budget, and parameter sanity that holds for any EAGLE-style tree.
RUNTIME_AGNOSTIC = {
    "DM001", "DM002", "DM003", "DM004", "DM005", "DM006", "DM009", "DM012",
    "DM100", "DM101", "DM102", "DM103", "DM104", "DM130",
    "MM001", "MM002",
    "SP003", "SP005", "SP006",
    "SV001", "SV002",
    "RS001",  # speaks of sgl-jax's own defaults on sgl-jax launches (resolution.resolve_sgl_jax)
    "VB013",  # types and switches are argparse's on both; release choices only on SGLang's launches
    "DM041",  # sgl-jax's LlamaForCausalLMEagle3 has SGLang's one-layer check, at every build (ledger/sgl-jax)
}

JAX_LAUNCH = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d")


def _runs_on(dialect: Dialect, version: str | None = None) -> set[str]:
    ctx = Example(argv=JAX_LAUNCH, dialect=dialect, sglang_version=version).context()
    return {rule.code for rule in ALL_RULES if rule.applies_to(ctx)}


def test_only_declared_rules_run_on_sgl_jax():
    on_jax = _runs_on(Dialect.SGL_JAX)
    jx = {code for code in on_jax if code.startswith("JX")}
    assert jx == {rule.code for rule in ALL_RULES if rule.code.startswith("JX")}
    assert on_jax - jx == RUNTIME_AGNOSTIC, (
        "a rule runs on sgl-jax launches without being declared runtime-agnostic here "
        f"(or one listed here no longer runs): {sorted((on_jax - jx) ^ RUNTIME_AGNOSTIC)}; "
        "give a rule about SGLang's code path dialects=SGLANG_DIALECTS"
    )


def test_sglang_only_rules_still_run_on_sglang_and_slime():
    for dialect in SGLANG_DIALECTS:
        every_release = set().union(*(_runs_on(dialect, v) for v in ("0.4.6", "0.5.3", "0.5.10", "0.5.23")))
        assert {"SP004", "VB011", "PL001", "DM040", "MM003", "FX086", "AB001"} <= every_release, dialect
        assert not {code for code in every_release if code.startswith("JX")}
