"""The unit extractor on small before/after sources written for the purpose (no wheel needed)."""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))

import extract_sglang_units as units

SERVER_ARGS = frozenset({"speculative_algorithm", "attention_backend", "page_size", "speculative_eagle_topk"})

WORKER_BEFORE = '''
class EAGLEWorker:
    def init(self, server_args):
        """Docstrings are not behaviour."""
        if server_args.page_size > 1:
            raise ValueError(f"page_size {server_args.page_size} is not supported")
        assert server_args.speculative_eagle_topk == 1, "topk must be 1"
        self.x = compute(server_args)

    def draft(self, batch):
        return batch.input_ids[: self.x]

    def old_helper(self):
        return 1
'''

WORKER_AFTER = '''
class EAGLEWorker:
    def init(self, server_args: "ServerArgs") -> None:
        if server_args.page_size > 1 and server_args.speculative_eagle_topk > 1:
            raise ValueError(f"page_size {server_args.page_size} is not supported")
        if server_args.attention_backend not in ("fa3", "flashinfer", "triton"):
            raise NotImplementedError("backend")
        self.x = compute(server_args)

    def draft(self, batch):
        return batch.input_ids[: self.x + 1]

    def renamed_helper(self):
        return 1
'''

RUNNER_BEFORE = '''
class ModelRunner:
    def forward(self, batch):
        out = self.model(batch)
        if self.spec_algorithm.is_eagle():
            out = out.hidden
        return out

    def load(self):
        return 1
'''

# The speculative slice unchanged; only code outside it moved.
RUNNER_AFTER = '''
class ModelRunner:
    def forward(self, batch):
        out = self.model(batch, fast=True)
        if self.spec_algorithm.is_eagle():
            out = out.hidden
        return out

    def load(self):
        return 2
'''


def pair(before: dict[str, str], after: dict[str, str]) -> tuple[list[units.Unit], int]:
    old = units.read_sources("1.0", before, SERVER_ARGS)
    new = units.read_sources("1.1", after, SERVER_ARGS)
    return units.diff_pair(old, new)


def kinds(found: list[units.Unit]) -> dict[tuple[str, str], set[str]]:
    result: dict[tuple[str, str], set[str]] = {}
    for unit in found:
        result.setdefault((unit.function, unit.kind), set()).add(unit.detail)
    return result


def test_guards_support_lists_and_bodies_are_units() -> None:
    found, lines = pair({"srt/speculative/eagle_worker.py": WORKER_BEFORE}, {"srt/speculative/eagle_worker.py": WORKER_AFTER})
    by_kind = kinds(found)
    assert ("EAGLEWorker.init", "guard-changed") in by_kind  # page_size guard now also needs topk > 1
    assert any("speculative_eagle_topk > 1" in d for d in by_kind[("EAGLEWorker.init", "guard-changed")])
    assert by_kind[("EAGLEWorker.init", "guard-removed")] == {"assert 'topk must be 1' when server_args.speculative_eagle_topk == 1"}
    assert any(d.startswith("NotImplementedError 'backend' when") for d in by_kind[("EAGLEWorker.init", "guard-added")])
    assert ("EAGLEWorker.draft", "body-changed") in by_kind
    # A rename with the same body is no unit; annotations and docstrings are no change either.
    assert not any("helper" in unit.function for unit in found)
    assert ("EAGLEWorker.init", "body-changed") not in by_kind
    assert lines > 0
    assert all(unit.id.startswith("1.0..1.1|srt/speculative/eagle_worker.py|") for unit in found)


def test_only_the_speculative_slice_of_a_shared_file_is_compared() -> None:
    found, _ = pair({"srt/model_executor/model_runner.py": RUNNER_BEFORE}, {"srt/model_executor/model_runner.py": RUNNER_AFTER})
    assert found == []
    changed = RUNNER_AFTER.replace("out = out.hidden", "out = out.hidden[:, -1]")
    found, _ = pair({"srt/model_executor/model_runner.py": RUNNER_BEFORE}, {"srt/model_executor/model_runner.py": changed})
    assert [(u.function, u.kind) for u in found] == [("ModelRunner.forward", "body-changed")]


def test_files_classes_and_a_moved_function() -> None:
    before = {"srt/speculative/eagle_worker.py": WORKER_BEFORE, "srt/speculative/old.py": "def gone():\n    return 3\n"}
    moved = WORKER_BEFORE.replace("    def old_helper(self):\n        return 1\n", "")
    after = {
        "srt/speculative/eagle_worker.py": moved,
        "srt/speculative/utils.py": "def old_helper(self):\n    return 1\n\nclass NgramTree:\n    def build(self):\n        return []\n",
    }
    found = {(u.file, u.function, u.kind) for u in pair(before, after)[0]}
    assert ("srt/speculative/old.py", "", "file-removed") in found
    assert ("srt/speculative/utils.py", "", "file-added") in found
    # The file's unit covers its class; the helper moved with its body unchanged.
    assert not any(kind in {"class-added", "function-added", "function-removed"} for _, _, kind in found)


def test_support_lists_and_env_defaults() -> None:
    before = {
        "srt/speculative/spec_info.py": 'SUPPORTED = ["fa3", "flashinfer"]\n\ndef is_ok(b):\n    return b in ("a", "b")\n',
        "srt/environ.py": "class Envs:\n    SGLANG_SPEC_X = EnvBool(False)\n",
    }
    after = {
        "srt/speculative/spec_info.py": 'SUPPORTED = ["fa3", "flashinfer", "triton"]\n\ndef is_ok(b):\n    return envs.SGLANG_SPEC_X.get() and b in ("a", "b", "c")\n',
        "srt/environ.py": "class Envs:\n    SGLANG_SPEC_X = EnvBool(True)\n",
    }
    before["srt/speculative/spec_info.py"] += "\ndef reads():\n    return envs.SGLANG_SPEC_X.get()\n"
    after["srt/speculative/spec_info.py"] += "\ndef reads():\n    return envs.SGLANG_SPEC_X.get()\n"
    found = {(u.function, u.kind): u.detail for u in pair(before, after)[0]}
    assert found[("SUPPORTED", "support-changed")] == "SUPPORTED: +[\"'triton'\"] -[]"
    assert found[("is_ok", "support-changed")].startswith("b in: +[\"'c'\"]")
    assert found[("SGLANG_SPEC_X", "env-default-changed")] == "EnvBool(False) -> EnvBool(True)"


def test_message_templates() -> None:
    import ast

    def message(expression: str) -> str | None:
        return units.template(ast.parse(expression, mode="eval").body)

    assert message('f"topk {topk} needs page_size {args.page_size}"') == "topk <*> needs page_size <*>"
    assert message('"bad backend %s for %d steps" % (a, b)') == "bad backend <*> for <*> steps"
    assert message('"{} is not supported".format(name)') == "<*> is not supported"
    assert message('"draft " + name + " failed"') == "draft <*> failed"
    assert message("error_text") is None


def test_crash_strings_span_the_releases_holding_them() -> None:
    source = 'def f(args):\n    if args.page_size > 1:\n        raise ValueError(f"page {args.page_size}")\n    assert args.x\n'
    later = 'def f(args):\n    assert args.x\n'
    releases = [units.read_sources(v, {"srt/speculative/a.py": text}, SERVER_ARGS) for v, text in (("1.0", source), ("1.1", source), ("1.2", later))]
    entries = units.crash_strings(releases)
    assert {"message": "page <*>", "exception": "ValueError", "file": "srt/speculative/a.py", "function": "f", "first": "1.0", "last": "1.1"} in entries
    assert {"message": "assert args.x", "exception": "assert", "file": "srt/speculative/a.py", "function": "f", "first": "1.0", "last": "1.2"} in entries


def test_a_renamed_receiver_is_no_guard_change_and_declared_choices_are_compared() -> None:
    # 0.5.19 reads the server args through `cfg = resolving_view(server_args)` and records choices
    # with declare_resolution(...) instead of assigning them.
    before = (
        "def _handle_x(server_args):\n"
        "    if server_args.speculative_eagle_topk > 1:\n"
        '        raise ValueError("topk")\n'
        '    declare_resolution(server_args, "x", speculative_num_steps=3)\n'
    )
    after = before.replace("    if server_args.", "    cfg = resolving_view(server_args)\n    if cfg.").replace("steps=3", "steps=5")
    found = {(u.kind, u.detail) for u in pair({"srt/arg_groups/speculative_hook.py": before}, {"srt/arg_groups/speculative_hook.py": after})[0]}
    assert not any(kind.startswith("guard") for kind, _ in found)
    assert ("auto-choice-changed", "speculative_num_steps: ['3'] -> ['5']") in found


def test_a_guard_moved_to_another_function_is_no_unit() -> None:
    before = {"srt/server_args.py": 'class ServerArgs:\n    def _handle_spec(self):\n        if self.speculative_eagle_topk > 1:\n            raise ValueError("topk")\n'}
    after = {"srt/arg_groups/speculative_hook.py": 'def handle_spec(server_args):\n    if server_args.speculative_eagle_topk > 1:\n        raise ValueError("topk")\n'}
    kinds = {u.kind for u in pair(before, after)[0]}
    assert not any(kind.startswith("guard") for kind in kinds)
    moved = {"srt/arg_groups/speculative_hook.py": after["srt/arg_groups/speculative_hook.py"].replace("> 1", "> 2")}
    assert {u.kind for u in pair(before, moved)[0] if u.kind.startswith("guard")} == {"guard-changed"}
