"""FX088-FX093 beyond their documented examples (FX080-FX087's cases are data: tests/rules/cases/FX*.yaml)."""

from __future__ import annotations

from specguard.rules.base import Example
from specguard.rules.features import (
    FX088_spec_v2_eagle3_logprob_without_aux_states as FX088,
)
from specguard.rules.features import (
    FX089_hicache_mooncake_standalone_draft_pool as FX089,
)
from specguard.rules.features import (
    FX090_custom_logit_processor_skipped_in_v2_verify as FX090,
)
from specguard.rules.features import (
    FX091_spec_return_hidden_states_truncated as FX091,
)
from specguard.rules.features import (
    FX092_multi_layer_eagle_verify_without_grammar as FX092,
)
from specguard.rules.features import (
    FX093_pd_decode_spec_v2_grammar_abort as FX093,
)


def findings(module, *argv: str, **kwargs):
    ctx = Example(argv=argv, **kwargs).context()
    if not module.RULE.applies_to(ctx):
        return []
    return list(module.RULE.check(ctx))


EAGLE3_CHAIN = ("--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
                "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4")
V2_ON = {"SGLANG_ENABLE_SPEC_V2": "1"}


def test_fx088_only_eagle3_on_the_v2_worker_before_0_5_11() -> None:
    (finding,) = findings(FX088, *EAGLE3_CHAIN, env=V2_ON, sglang_version="0.5.10")
    assert finding.fix is not None
    assert findings(FX088, *EAGLE3_CHAIN, env=V2_ON, sglang_version="0.5.5")
    assert findings(FX088, *EAGLE3_CHAIN, sglang_version="0.5.10") == []  # V2 off by default before 0.5.11
    assert findings(FX088, *EAGLE3_CHAIN, "--disable-overlap-schedule", env=V2_ON, sglang_version="0.5.9") == []
    assert findings(FX088, *EAGLE3_CHAIN, env=V2_ON, sglang_version="0.5.11") == []
    assert findings(FX088, *EAGLE3_CHAIN, env=V2_ON, sglang_version="0.5.4") == []
    eagle = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1")
    assert findings(FX088, *eagle, env=V2_ON, sglang_version="0.5.9") == []  # no aux hidden states


def test_fx089_standalone_mooncake_with_a_draft_in_0_5_13_and_0_5_14() -> None:
    base = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--enable-hierarchical-cache",
            "--hicache-storage-backend", "mooncake")
    standalone = ("--hicache-storage-backend-extra-config", '{"standalone_storage": true}')
    assert findings(FX089, *base, *standalone, sglang_version="0.5.14")
    assert findings(FX089, *base, *standalone, sglang_version="0.5.12") == []
    assert findings(FX089, *base, *standalone, sglang_version="0.5.15") == []
    assert findings(FX089, *base, sglang_version="0.5.13") == []  # not standalone
    assert findings(FX089, *base, sglang_version="0.5.13", env={"MOONCAKE_STANDALONE_STORAGE": "1"})
    assert findings(FX089, *base, "--hicache-storage-backend-extra-config", '{"standalone_storage": false}',
                    sglang_version="0.5.13") == []
    assert findings(FX089, *base, "--hicache-storage-backend-extra-config", "/etc/mooncake.json",
                    sglang_version="0.5.13") == []  # a path: the value is unknown
    ngram = ("--model-path", "m", "--speculative-algorithm", "NGRAM", "--enable-hierarchical-cache",
             "--hicache-storage-backend", "mooncake", *standalone)
    assert findings(FX089, *ngram, sglang_version="0.5.13") == []
    file_backend = (*base[:-1], "file", *standalone)
    assert findings(FX089, *file_backend, sglang_version="0.5.13") == []


def test_fx090_v1_fallback_until_0_5_13_then_no_fix() -> None:
    chain = (*EAGLE3_CHAIN, "--enable-custom-logit-processor")
    (v1_era,) = findings(FX090, *chain, sglang_version="0.5.11")  # V2 on by default
    assert v1_era.fix is not None
    assert findings(FX090, *chain, sglang_version="0.5.10") == []  # V1 by default
    assert findings(FX090, *chain, env=V2_ON, sglang_version="0.5.10")
    assert findings(FX090, *chain, "--disable-overlap-schedule", sglang_version="0.5.12") == []
    (v2_only,) = findings(FX090, *chain, "--disable-overlap-schedule", sglang_version="0.5.13")
    assert v2_only.fix is None
    assert findings(FX090, *chain, sglang_version="0.5.23")
    assert findings(FX090, *EAGLE3_CHAIN, sglang_version="0.5.23") == []
    ngram = ("--model-path", "m", "--speculative-algorithm", "NGRAM", "--enable-custom-logit-processor")
    assert findings(FX090, *ngram, sglang_version="0.5.23") == []


def test_fx091_every_algorithm_before_0_5_14() -> None:
    for algorithm in ("EAGLE", "EAGLE3", "NGRAM", "STANDALONE"):
        argv = ("--model-path", "m", "--speculative-algorithm", algorithm, "--enable-return-hidden-states")
        assert findings(FX091, *argv, sglang_version="0.5.13"), algorithm
        assert findings(FX091, *argv, sglang_version="0.5.14") == [], algorithm
    assert findings(FX091, "--model-path", "m", "--enable-return-hidden-states", sglang_version="0.5.12") == []


def test_fx092_multi_layer_on_v2_between_0_5_7_and_0_5_15() -> None:
    ml = ("--model-path", "m", "--speculative-algorithm", "EAGLE", "--enable-multi-layer-eagle",
          "--speculative-eagle-topk", "1")
    (finding,) = findings(FX092, *ml, sglang_version="0.5.15")
    assert finding.fix is not None
    assert findings(FX092, *ml, sglang_version="0.5.16") == []
    assert findings(FX092, *ml, "--grammar-backend", "none", sglang_version="0.5.15") == []
    assert findings(FX092, *ml, "--disable-overlap-schedule", sglang_version="0.5.12") == []  # V1 worker
    assert findings(FX092, *ml, "--disable-overlap-schedule", sglang_version="0.5.13")  # V2 only
    assert findings(FX092, "--model-path", "m", "--speculative-algorithm", "EAGLE", sglang_version="0.5.15") == []


def test_fx093_pd_decode_overlap_v2_before_0_5_14() -> None:
    decode = ("--model-path", "m", "--disaggregation-mode", "decode", "--speculative-algorithm", "NEXTN")
    (finding,) = findings(FX093, *decode, sglang_version="0.5.11")
    assert finding.fix is not None
    assert findings(FX093, *decode, sglang_version="0.5.13")
    assert findings(FX093, *decode, sglang_version="0.5.14") == []
    assert findings(FX093, *decode, "--grammar-backend", "none", sglang_version="0.5.12") == []
    assert findings(FX093, *decode, "--disable-overlap-schedule", sglang_version="0.5.12") == []
    prefill = ("--model-path", "m", "--disaggregation-mode", "prefill", "--speculative-algorithm", "NEXTN")
    assert findings(FX093, *prefill, sglang_version="0.5.12") == []
    assert findings(FX093, "--model-path", "m", "--speculative-algorithm", "NEXTN", sglang_version="0.5.12") == []
