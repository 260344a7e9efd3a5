"""The shipped ServerArgs defaults (specguard/data/sglang-serverargs-defaults.json): spans that
cover every release in order, and the reader over them. The data against its generator is
tests/core/test_sglang_history.py's."""

from __future__ import annotations

import json
from itertools import pairwise

from specguard.serverargs_defaults import (
    DEFAULTS_FILE,
    FieldDefault,
    defaults_at,
    release_of_fields,
)
from specguard.versions import history

DATA = json.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))


def test_the_defaults_cover_the_histories_releases() -> None:
    assert DATA["releases"] == list(history().releases)
    covered = {
        index
        for rows in DATA["fields"].values()
        for first, last, _ in rows
        for index in range(first, last + 1)
    }
    assert covered == set(range(len(DATA["releases"])))
    # Every release has a ServerArgs, and model_path (required) in it.
    assert [first for first, _, _ in DATA["fields"]["model_path"]] == [0] and DATA[
        "fields"
    ]["model_path"][-1][1] == len(DATA["releases"]) - 1


def test_each_fields_spans_are_sorted_apart_and_point_at_a_value() -> None:
    assert list(DATA["fields"]) == sorted(DATA["fields"])
    for name, rows in DATA["fields"].items():
        assert rows == sorted(rows), name
        for (_, last, _), (first, _, _) in pairwise(rows):
            assert last < first, name  # one default per release
        for first, last, value in rows:
            assert 0 <= first <= last < len(DATA["releases"]) and 0 <= value < len(
                DATA["values"]
            ), name
    assert all(
        len(value) == 1 and set(value) <= {"literal", "expression", "required"}
        for value in DATA["values"]
    )


def test_a_releases_defaults() -> None:
    # sglang 0.4.0: python/sglang/srt/server_args.py:39 model_path: str (no default), :65
    # schedule_policy: str = "lpm", :88 file_storage_pth; 0.5.23:
    # python/sglang/srt/arg_groups/fields/schedule.py:86-102 schedule_policy = "fcfs".
    old, new = defaults_at("0.4.0"), defaults_at("0.5.23")
    assert old["schedule_policy"] == FieldDefault(True, "lpm") and new[
        "schedule_policy"
    ] == FieldDefault(True, "fcfs")
    assert old["model_path"] == FieldDefault(False)
    assert "file_storage_pth" in old and "file_storage_pth" not in new
    assert defaults_at("0.3.6") is None and defaults_at("not a version") is None
    assert defaults_at("0.5.24") == new  # newer than known: the newest's


def test_the_release_a_logged_field_set_dates() -> None:
    whole = defaults_at("0.4.3.post2")
    assert set(defaults_at(release_of_fields(whole))) == set(
        whole
    )  # a whole repr: a release with exactly its fields
    assert (
        release_of_fields(["model_path", "file_storage_pth"]) == "0.4.3.post2"
    )  # part of one: the newest holding them
    assert release_of_fields(["model_path", "not_a_field_of_sglang"]) is None
