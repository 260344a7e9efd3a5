"""Repo ids and commit names: one judgement for the facts loader, DM009 and the version sources."""

from __future__ import annotations

import pytest

from specguard.refs import (
    is_commit_prefix,
    is_full_commit,
    looks_like_repo_id,
    same_commit,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("Qwen/Qwen3-8B", True), ("lmsys/sglang-EAGLE3-LLaMA3.1-Instruct-8B", True),
    ("./Qwen/Qwen3-8B", False), ("/models/Qwen3-8B", False), ("~/m/x", False), ("Qwen3-8B", False), (None, False), ("", False),
])
def test_repo_ids(text, expected):
    assert looks_like_repo_id(text) is expected


def test_commits():
    full = "0123456789abcdef0123456789abcdef01234567"
    assert is_full_commit(full) and not is_full_commit(full[:39]) and not is_full_commit("main") and not is_full_commit(None)
    assert is_commit_prefix("474861a") and is_commit_prefix("474861AAF") and not is_commit_prefix("474861")
    assert not is_commit_prefix("v0.3.1") and not is_commit_prefix("deadbeefx")
    assert same_commit("b735f16", "b735f16e") and same_commit("B735F16E0", "b735f16e")
    assert not same_commit("b735f17", "b735f16e") and not same_commit("0.0.1", "0.0.1")
