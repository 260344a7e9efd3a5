"""The crash strings data (scripts/extract_sglang_units.py) and its reader."""

from __future__ import annotations

import json

from packaging.version import Version

from specguard import crash_strings
from specguard.versions import HISTORY_FILE

SGLANG_RELEASES = json.loads(HISTORY_FILE.read_text(encoding="utf-8"))["releases"]


def test_every_entry_names_its_check_and_a_window_of_known_releases() -> None:
    raw = json.loads(crash_strings.STRINGS_FILE.read_text(encoding="utf-8"))
    assert isinstance(raw, list) and len(raw) > 1000
    for entry in raw:
        assert set(entry) == {"message", "exception", "file", "function", "first", "last"}
        assert entry["message"].strip() and entry["exception"] and entry["function"]
        assert entry["file"].startswith("srt/") and entry["file"].endswith(".py")
        assert entry["first"] in SGLANG_RELEASES and entry["last"] in SGLANG_RELEASES
        assert Version(entry["first"]) <= Version(entry["last"])


def test_a_logged_message_is_traced_to_the_check_that_raised_it() -> None:
    log = (
        "ValueError: --disaggregation-decode-enable-radix-cache is incompatible with speculative decoding "
        "(--speculative-algorithm NGRAM)"
    )
    found = crash_strings.matching(log)
    where = {(entry.file, entry.function, entry.first, entry.last) for entry in found}
    # 0.5.23 moved the check into the speculative hook (speculative_hook.py handle_speculative_decoding).
    assert ("srt/arg_groups/speculative_hook.py", "handle_speculative_decoding", "0.5.23", "0.5.23") in where
    assert ("srt/arg_groups/pd_disaggregation_hook.py", "handle_pd_disaggregation", "0.5.13", "0.5.22") in where
    assert all(entry.exception == "ValueError" for entry in found)


def test_text_that_no_check_prints_matches_nothing() -> None:
    assert crash_strings.matching("the server started and answered every request") == []
