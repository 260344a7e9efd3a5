"""sglang-jax's ledger: one file per commit, extracted from a clone's history."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "extract_sgl_jax_units.py"
sys.path.insert(0, str(REPO / "scripts"))

import ledger_figures

SPECULATIVE = "python/sgl_jax/srt/speculative/eagle_worker.py"
FIRST = '''
class EAGLEWorker:
    def __init__(self, server_args):
        self.topk = server_args.speculative_eagle_topk
'''
# The second commit adds a guard a launch can trigger: the kind of unit the ledger is for.
SECOND = '''
class EAGLEWorker:
    def __init__(self, server_args):
        if server_args.speculative_eagle_topk > 1 and server_args.page_size > 1:
            raise ValueError("EAGLE tree drafting needs page size 1.")
        self.topk = server_args.speculative_eagle_topk
'''


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": "2026-03-01T12:00:00", "GIT_COMMITTER_DATE": "2026-03-01T12:00:00"}
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], capture_output=True, text=True, check=True, env=env).stdout


def commit(repo: Path, path: str, text: str, message: str) -> str:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text, encoding="utf-8")
    git(repo, "add", path)
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def extract(repo: Path, ledger: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--repo", str(repo), "--ledger", str(ledger), *extra], capture_output=True, text=True)


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "sglang-jax"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    first = commit(repo, SPECULATIVE, FIRST, "eagle worker")
    commit(repo, "README.md", "docs only\n", "docs")  # out of the scope: no ledger file
    second = commit(repo, SPECULATIVE, SECOND, "page size guard (#12)")
    return repo, first, second


def test_each_commit_with_units_gets_a_dated_file_and_the_guard_is_found(history: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, first, second = history
    ledger = tmp_path / "ledger"
    result = extract(repo, ledger)
    assert result.returncode == 0, result.stderr
    files = sorted(p.name for p in ledger.glob("*.yaml"))
    assert files == sorted([f"2026-03-01-{first[:8]}.yaml", f"2026-03-01-{second[:8]}.yaml"])
    document = yaml.safe_load((ledger / f"2026-03-01-{second[:8]}.yaml").read_text(encoding="utf-8"))
    assert document["pair"] == f"{first[:8]}..{second[:8]}"
    assert document["subject"] == "page size guard (#12)"
    guards = [u for u in document["units"] if "|guard-added|" in u["id"]]
    assert len(guards) == 1
    assert "EAGLE tree drafting needs page size 1." in guards[0]["detail"]
    assert guards[0]["id"].startswith(f"{document['pair']}|srt/speculative/eagle_worker.py|EAGLEWorker.__init__|guard-added|")
    assert ledger_figures.jax_problems(ledger_figures.load(ledger), frozenset()) == []


def test_reviews_survive_a_rerun_and_check_finds_what_the_ledger_lacks(history: tuple[Path, str, str], tmp_path: Path) -> None:
    repo, _, second = history
    ledger = tmp_path / "ledger"
    assert extract(repo, ledger).returncode == 0
    path = ledger / f"2026-03-01-{second[:8]}.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    guard = next(u for u in document["units"] if "|guard-added|" in u["id"])
    guard.update(reviewed=True, change="guard added", outcome="rule needed", condition="--speculative-eagle-topk > 1 with --page-size > 1", window="from this commit", reason="the new raise")
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    assert extract(repo, ledger, "--check").returncode == 0
    assert extract(repo, ledger).returncode == 0
    kept = next(u for u in yaml.safe_load(path.read_text(encoding="utf-8"))["units"] if u["id"] == guard["id"])
    assert kept["outcome"] == "rule needed" and kept["reviewed"] is True
    path.unlink()
    result = extract(repo, ledger, "--check")
    assert result.returncode == 1
    assert f"2026-03-01-{second[:8]}.yaml" in result.stdout


def test_not_a_repository_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = extract(tmp_path, tmp_path / "ledger")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "--repo" in result.stderr


def test_the_checked_in_sgl_jax_ledger_is_consistent() -> None:
    documents = ledger_figures.load(ledger_figures.JAX_LEDGER)
    assert documents, "ledger/sgl-jax holds the commits' files"
    assert ledger_figures.jax_problems(documents, ledger_figures.rule_codes()) == []


@pytest.mark.skipif(not os.environ.get("SPECGUARD_SGL_JAX_REPO"), reason="needs SPECGUARD_SGL_JAX_REPO: a clone of sgl-project/sglang-jax")
def test_the_generator_finds_no_unit_the_ledger_lacks() -> None:
    result = extract(Path(os.environ["SPECGUARD_SGL_JAX_REPO"]), ledger_figures.JAX_LEDGER, "--check", "--revision", "cddbf6f1cc33cbdd453bd8f36ff7051cf46ca176")
    assert result.returncode == 0, result.stdout + result.stderr
