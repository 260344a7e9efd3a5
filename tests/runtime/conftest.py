"""Fixtures for the reference runtime's tests: the tiny pair (built once per session) and servers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from specguard.runtime.tiny import TinyPair, ensure_tiny_eagle3, ensure_tiny_pair


@pytest.fixture(autouse=True, scope="session")
def _one_torch_thread():
    """Tiny models run fastest on one thread, and two threads collapse on a shared 2-core box."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def tiny_root(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tiny models are cached: SPECGUARD_CACHE_DIR or the pytest cache."""
    if os.environ.get("SPECGUARD_CACHE_DIR"):
        return Path(os.environ["SPECGUARD_CACHE_DIR"])
    cache = getattr(request.config, "cache", None)  # absent under -p no:cacheprovider
    if cache is not None:
        return Path(cache.mkdir("specguard-tiny"))
    return tmp_path_factory.mktemp("specguard-tiny")


@pytest.fixture(scope="session")
def tiny_pair(tiny_root: Path) -> TinyPair:
    """The project's tiny target/draft pair."""
    return ensure_tiny_pair(tiny_root)


@pytest.fixture(scope="session")
def tiny_eagle3(tiny_root: Path) -> TinyPair:
    """The tiny target and its EAGLE3 head (``.draft``)."""
    return ensure_tiny_eagle3(tiny_root)
