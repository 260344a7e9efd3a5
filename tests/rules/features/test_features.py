"""FX rules beyond their documented examples: release boundaries and the conditions that silence them."""

from __future__ import annotations

from specguard.rules.base import Example
from specguard.rules.features import (
    FX080_expert_distribution_metrics_draft_capture as FX080,
)
from specguard.rules.features import (
    FX081_hicache_draft_kv_not_backed as FX081,
)
from specguard.rules.features import (
    FX082_ngram_grammar_without_vocab_mask as FX082,
)
from specguard.rules.features import (
    FX083_hicache_dsa_draft_state_not_backed as FX083,
)
from specguard.rules.features import (
    FX085_eagle3_pd_prefill_sends_aux_hidden_states as FX085,
)
from specguard.rules.features import (
    FX086_spec_grammar_tensor_index_xgrammar as FX086,
)
from specguard.rules.features import (
    FX087_eagle_verify_without_grammar as FX087,
)


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


METRICS = ("--enable-expert-distribution-metrics",)


def test_fx080_steps_graphs_and_release() -> None:
    eagle = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1")
    steps3 = (*eagle, "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4", *METRICS)
    (finding,) = findings(FX080, *steps3, sglang_version="0.5.15.post1")
    assert finding.flags == METRICS
    # One draft step runs no forward inside the capture; without CUDA graphs there is no capture.
    steps1 = (*eagle, "--speculative-num-steps", "1", "--speculative-num-draft-tokens", "2", *METRICS)
    assert findings(FX080, *steps1, sglang_version="0.5.15.post1") == []
    assert findings(FX080, *steps3, "--disable-cuda-graph", sglang_version="0.5.15.post1") == []
    # 0.5.18 no longer syncs by default (expert_distribution.py:776-794).
    assert findings(FX080, *steps3, sglang_version="0.5.18") == []
    assert findings(FX080, *steps3, sglang_version="0.4.9")
    # NGRAM has no EAGLE draft_forward.
    assert findings(FX080, "--model-path", "m", "--speculative-algorithm", "NGRAM", *METRICS, sglang_version="0.5.15") == []


def test_fx081_release_and_algorithms() -> None:
    hicache = ("--model-path", "m", "--enable-hierarchical-cache")
    assert findings(FX081, *hicache, "--speculative-algorithm", "NEXTN", sglang_version="0.5.10")
    assert findings(FX081, *hicache, "--speculative-algorithm", "NEXTN", sglang_version="0.5.11") == []
    assert findings(FX081, *hicache, "--speculative-algorithm", "NGRAM", sglang_version="0.5.10") == []
    assert findings(FX081, "--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
                    sglang_version="0.5.10") == []


def test_fx082_grammar_none_and_release() -> None:
    ngram = ("--model-path", "m", "--speculative-algorithm", "NGRAM")
    (finding,) = findings(FX082, *ngram, sglang_version="0.5.8")
    assert finding.fix is not None
    assert findings(FX082, *ngram, "--grammar-backend", "none", sglang_version="0.5.8") == []
    assert findings(FX082, *ngram, "--grammar-backend", "xgrammar", sglang_version="0.5.8")
    assert findings(FX082, *ngram, sglang_version="0.5.9") == []


DSA = {"architectures": ("GlmMoeDsaForCausalLM",)}


def test_fx083_dsa_targets_and_release_window() -> None:
    hicache = ("--model-path", "m", "--enable-hierarchical-cache", "--speculative-algorithm", "NEXTN")
    assert findings(FX083, *hicache, target=DSA, sglang_version="0.5.11")
    assert findings(FX083, *hicache, target=DSA, sglang_version="0.5.17")
    assert findings(FX083, *hicache, target=DSA, sglang_version="0.5.18") == []
    assert findings(FX083, *hicache, target=DSA, sglang_version="0.5.10") == []  # FX081 speaks there
    assert findings(FX083, *hicache, target={"architectures": ("DeepseekV32ForCausalLM",)}, sglang_version="0.5.15")
    # Not a DSA class, or the architecture unknown: quiet.
    assert findings(FX083, *hicache, target={"architectures": ("Glm4MoeForCausalLM",)}, sglang_version="0.5.15") == []
    assert findings(FX083, *hicache, sglang_version="0.5.15") == []
    # No HiCache: quiet.
    no_hicache = ("--model-path", "m", "--speculative-algorithm", "EAGLE")
    assert findings(FX083, *no_hicache, target=DSA, sglang_version="0.5.15") == []


def test_fx085_prefill_side_eagle3_and_release() -> None:
    eagle3 = ("--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d")
    assert findings(FX085, *eagle3, "--disaggregation-mode", "prefill", sglang_version="0.5.2")
    assert findings(FX085, *eagle3, "--disaggregation-mode", "prefill", sglang_version="0.5.3") == []
    assert findings(FX085, *eagle3, "--disaggregation-mode", "decode", sglang_version="0.5.2") == []
    eagle = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--disaggregation-mode", "prefill")
    assert findings(FX085, *eagle, sglang_version="0.5.2") == []


def test_fx086_backend_and_release_window() -> None:
    nextn = ("--model-path", "m", "--speculative-algorithm", "NEXTN")
    (finding,) = findings(FX086, *nextn, sglang_version="0.5.10")
    assert finding.fix is not None
    assert findings(FX086, *nextn, sglang_version="0.5.11")
    assert findings(FX086, *nextn, sglang_version="0.5.9") == []
    assert findings(FX086, *nextn, sglang_version="0.5.12") == []
    assert findings(FX086, *nextn, "--grammar-backend", "none", sglang_version="0.5.11") == []
    assert findings(FX086, *nextn, "--grammar-backend", "llguidance", sglang_version="0.5.11") == []
    assert findings(FX086, *nextn, "--grammar-backend", "xgrammar", sglang_version="0.5.11")
    assert findings(FX086, "--model-path", "m", "--speculative-algorithm", "NGRAM", sglang_version="0.5.11")


def test_fx087_eagle_family_before_grammar_support() -> None:
    nextn = ("--model-path", "m", "--speculative-algorithm", "NEXTN")
    (finding,) = findings(FX087, *nextn, "--grammar-backend", "xgrammar", sglang_version="0.4.3")
    assert finding.fix is not None
    assert findings(FX087, *nextn, sglang_version="0.4.6.post4")
    assert findings(FX087, *nextn, sglang_version="0.4.6.post5") == []
    assert findings(FX087, *nextn, "--grammar-backend", "none", sglang_version="0.4.3") == []
    assert findings(FX087, "--model-path", "m", "--speculative-algorithm", "NGRAM", sglang_version="0.4.6") == []
