"""DM130 draft-vocab-same-size-other-family: boundaries beyond its examples."""

from __future__ import annotations

import pytest

from specguard.models import Severity
from specguard.rules import RULES_BY_CODE
from specguard.rules.base import Example
from specguard.rules.draft_model.DM130_draft_vocab_same_size_other_family import (
    model_family,
)
from tests.conftest import HF_CONFIGS

RULE = RULES_BY_CODE["DM130"]
STANDALONE = ("--model-path", "t", "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", "d")


def fired(argv=STANDALONE, target=None, draft=None) -> list:
    return list(RULE.check(Example(argv=argv, target=target or {}, draft=draft or {}).context()))


@pytest.mark.parametrize(("model_type", "family"), [("qwen2", "qwen"), ("qwen3_moe", "qwen"), ("gemma3_text", "gemma"), ("llama", "llama"), ("mistral", "mistral")])
def test_model_family(model_type: str, family: str) -> None:
    assert model_family(model_type) == family


def test_llama2_fixture_target_with_a_mistral_draft_of_the_same_size() -> None:
    from specguard.facts import load_facts

    llama2 = load_facts(str(HF_CONFIGS / "meta-llama" / "Llama-2-7b-chat-hf"))
    assert (llama2.vocab_size, llama2.model_type) == (32000, "llama")
    [finding] = fired(target={"vocab_size": llama2.vocab_size, "model_type": llama2.model_type}, draft={"vocab_size": 32000, "model_type": "mistral"})
    assert finding.severity is Severity.WARNING and "32000" in finding.message


@pytest.mark.parametrize(
    ("target", "draft"),
    [
        ({"vocab_size": 32000, "model_type": "llama"}, {"vocab_size": 32768, "model_type": "mistral"}),  # sizes differ: DM003's
        ({"vocab_size": 32000, "model_type": "llama"}, {"vocab_size": 32000, "model_type": None}),  # unknown family: quiet
        ({"vocab_size": 32000, "model_type": "llama"}, {"vocab_size": 32000, "model_type": "llama"}),
    ],
)
def test_quiet(target: dict, draft: dict) -> None:
    assert fired(target=target, draft=draft) == []


def test_only_standalone() -> None:
    eagle3 = ("--model-path", "t", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d")
    assert fired(argv=eagle3, target={"vocab_size": 32000, "model_type": "llama"}, draft={"vocab_size": 32000, "model_type": "mistral"}) == []


# ------------------------------------------------------------------ tokenizer.json compared


def _checkpoint(folder, model_type: str, vocab: dict[str, int], added: list[dict] | None = None):  # type: ignore[no-untyped-def]
    import json

    folder.mkdir(parents=True)
    size = len(vocab) + len(added or [])
    (folder / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": model_type, "vocab_size": size}))
    document = {"version": "1.0", "added_tokens": added or [], "model": {"type": "BPE", "vocab": vocab, "merges": []}}
    (folder / "tokenizer.json").write_text(json.dumps(document))
    return folder


WORDS = {f"tok{i}": i for i in range(200)}
SHUFFLED = {f"tok{(i * 7) % 200}": i for i in range(200)}  # same tokens, other ids (ids 0 and 100 stay put: 1.0%)


def _check(tmp_path, target, draft):  # type: ignore[no-untyped-def]
    from tests.conftest import run_cli_json

    code, report = run_cli_json(
        "check", "--offline", "--target", str(target), "--draft", str(draft), "--",
        "--model-path", str(target), "--speculative-algorithm", "STANDALONE", "--speculative-draft-model-path", str(draft),
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
    )
    return code, [f for f in report["findings"] if f["code"] == "DM130"]


def test_same_tokenizer_in_two_families_is_quiet(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = _checkpoint(tmp_path / "t", "llama", WORDS)
    draft = _checkpoint(tmp_path / "d", "mistral", WORDS)
    assert _check(tmp_path, target, draft)[1] == []


def test_same_size_other_ids_is_reported_with_the_measured_agreement(tmp_path) -> None:  # type: ignore[no-untyped-def]
    target = _checkpoint(tmp_path / "t", "llama", WORDS)
    draft = _checkpoint(tmp_path / "d", "llama", SHUFFLED)  # one family by name, another tokenizer
    code, [finding] = _check(tmp_path, target, draft)
    # A perf rule: info unless selected explicitly (specguard.severity); the rule itself warns.
    assert code == 0 and finding["severity"] == "info"
    assert "were compared" in finding["message"] and "1.0% of the target's ids" in finding["message"]


def test_added_tokens_count_and_a_few_may_differ(tmp_path) -> None:  # type: ignore[no-untyped-def]
    added = [{"id": 200, "content": "<|im_start|>"}]
    target = _checkpoint(tmp_path / "t", "qwen2", WORDS, added)
    draft = _checkpoint(tmp_path / "d", "llama", WORDS, [{"id": 200, "content": "<|begin_of_text|>"}])
    assert _check(tmp_path, target, draft)[1] == []  # 200 of 201 ids agree (99.5%)


def test_broken_tokenizer_file_is_named(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import run_cli

    target = _checkpoint(tmp_path / "t", "llama", WORDS)
    draft = _checkpoint(tmp_path / "d", "mistral", WORDS)
    (draft / "tokenizer.json").write_text('{"model": {"vocab": ')
    result = run_cli(
        "check", "--offline", "--", "--model-path", str(target), "--speculative-algorithm", "STANDALONE",
        "--speculative-draft-model-path", str(draft),
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert str(draft / "tokenizer.json") in result.stderr and len(result.stderr.strip().splitlines()) == 1
