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
