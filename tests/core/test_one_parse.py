"""A launch is read once (issue #26 item 4): its release is inferred from its words, once, and then
it is parsed once, at that release, so an abbreviation is read as that release's parser reads it.
Counted with a profile hook on the functions' code objects, whatever name a module imports them by."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import specguard
from specguard import dialects, versions
from specguard.environment import inferred_release
from tests.conftest import REPO

LLAMA = str(REPO.parent / "shared" / "fixtures" / "hf-configs" / "meta-llama" / "Llama-3.1-8B-Instruct")


@contextmanager
def counted() -> Iterator[Counter[str]]:
    calls: Counter[str] = Counter()
    inferred_release.cache_clear()  # a launch inferred by an earlier test would not be counted
    names = {dialects.parse.__code__: "parse", versions.infer_version.__code__: "infer"}

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "call" and frame.f_code in names:
            calls[names[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(None)


def test_a_launch_is_parsed_once_and_its_release_inferred_once() -> None:
    argv = ["--model-path", LLAMA, "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", LLAMA, "--tp-size", "1"]
    with counted() as calls:
        result = specguard.check(argv, offline=True, gpu="H100")
    assert calls == {"parse": 1, "infer": 1}
    assert result.context.env.sglang_version_inferred


def test_an_abbreviation_is_read_by_the_inferred_releases_parser_in_the_one_parse() -> None:
    # --speculative-ngram-branch-length exists from 0.5.3rc2 to 0.5.9 (the release history), so the
    # launch is checked as 0.5.9; there --speculative-num-draft is --speculative-num-draft-tokens.
    argv = ["--model-path", LLAMA, "--speculative-algorithm", "NGRAM", "--speculative-ngram-branch-length", "8",
            "--speculative-num-draft", "8"]
    with counted() as calls:
        result = specguard.check(argv, offline=True, gpu="H100")
    assert calls == {"parse": 1, "infer": 1}
    assert result.context.env.sglang_version == "0.5.9" and result.context.env.sglang_version_origin == "inferred from flags"
    item = result.context.spec.item("--speculative-num-draft-tokens")
    assert item is not None and item.values == ("8",) and item.written == "--speculative-num-draft"


def test_a_fixed_launch_is_not_parsed_again_and_each_form_is_inferred_once() -> None:
    # Safe fixes change the launch round by round; each form's release is inferred once (a form
    # met again is not inferred again), and no form is parsed from text again.
    argv = ["--model-path", LLAMA, "--speculative-algo", "NEXTN", "--cuda-graph-max-bs", "8", "--enable-dp-attention"]
    with counted() as calls:
        result = specguard.check(argv, offline=True, gpu="H100", fix=True)
    assert result.outcome.changes, "the launch was meant to be fixed"
    assert calls["parse"] == 1
    assert calls["infer"] <= 1 + len(result.outcome.changes)
