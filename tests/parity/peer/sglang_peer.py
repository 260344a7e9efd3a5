#!/usr/bin/env python3
"""Run SGLang's own argument resolution on specguard cases (the "peer").

Runs INSIDE the SGLang venv (scripts/sglang_env/setup.sh):

    .venv-sglang/bin/python tests/parity/peer/sglang_peer.py < cases.jsonl
    .venv-sglang/bin/python tests/parity/peer/sglang_peer.py cases.json [--timeout 120] [--no-fork]

Input: a JSON list of cases, or one JSON case per line. A case is
    {"name": str, "argv": [str, ...], "env": {str: str} | null,
     "simulate": null | {"platform": {fact: value, ...}, "gpu_memory_mb": int | null}}
``platform`` facts go to ``sglang.srt.runtime_context.override_platform`` (known facts:
is_cuda, is_hip, is_npu, is_xpu, is_musa, is_mps, is_sm90, is_sm100, is_sm100_or_sm110,
is_sm110, is_sm120, is_blackwell, is_hopper_with_cuda_12_3, has_amx, has_flashinfer,
device_sm, device_capability); ``gpu_memory_mb`` replaces
``sglang.srt.utils.common.get_device_memory_capacity`` (MiB).

Output: one JSON line per case on stdout (nothing else is written to stdout):
    {"name", "accepted", "stage": "parse"|"resolve"|"check"|"ok"|"timeout"|"crash",
     "exc_type", "message", "raised_at": "sglang/srt/...py:LINE", "raised_in": func,
     "resolved": {...}, "set_by": {field: source}, "warnings": [...], "info": [...],
     "seconds": float}

Each case runs in a child forked from a parent that has already imported SGLang, so every
case starts from the same clean post-import state (resolve_once() mutates process-wide
caches and the record is sealed after one try). ``--no-fork`` runs the cases sequentially
in this process instead (only for debugging; state leaks between cases).

A case's ``env`` is applied in the forked child, i.e. AFTER SGLang was imported. SGLang
0.5.23 reads its ``envs.*`` lazily (e.g. SGLANG_ENABLE_PP_SPEC takes effect: case L02), but
a variable consumed at import time would be missed; use ``--no-fork`` with a single case
and the variable set in the process environment for those.

The stages are exactly what the launcher runs (sglang 0.5.23 launch_server.py /
entrypoints/engine.py): prepare_server_args(argv) -> resolve_once() -> check_server_args().
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import sys
import time
import traceback
from pathlib import Path

# ---- offline, quiet, before any sglang/transformers import --------------------------
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("PYTHONWARNINGS", "ignore")

# Keep the real stdout for JSON only; everything else (sglang logs, prints) -> stderr.
_OUT_FD = os.dup(1)
os.dup2(2, 1)
_OUT = os.fdopen(_OUT_FD, "w", buffering=1)

RESOLVED_FIELDS = (
    "speculative_algorithm",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "speculative_draft_model_path",
    "speculative_draft_model_revision",
    "speculative_draft_model_quantization",
    "speculative_draft_attention_backend",
    "speculative_moe_runner_backend",
    "speculative_adaptive",
    "speculative_use_rejection_sampling",
    "speculative_dflash_block_size",
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "disable_overlap_schedule",
    "enable_mixed_chunk",
    "max_running_requests",
    "chunked_prefill_size",
    "page_size",
    "context_length",
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "mem_fraction_static",
    "device",
    "tp_size",
    "pp_size",
    "dp_size",
    "attn_dp_size",
    "disable_cuda_graph_padding",
)

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _plainjson(v):
    try:
        json.dumps(v)
        return v
    except (TypeError, ValueError):
        if isinstance(v, dict):
            return {str(k): _plainjson(x) for k, x in v.items()}
        if isinstance(v, (list, tuple, set, frozenset)):
            return [_plainjson(x) for x in v]
        if hasattr(v, "value") and hasattr(v, "name"):  # Enum
            return _plainjson(v.value)
        return repr(v)


def _preimport():
    """Import everything the cases touch so the fork children start warm."""
    # transformers config classes are lazily imported per model_type; warm the common ones.
    import importlib

    import sglang.srt.sampling.watermarking.core
    import sglang.srt.server_args as sa_mod  # noqa: F401
    import sglang.srt.speculative.spec_info  # noqa: F401
    from sglang.srt import runtime_context  # noqa: F401
    from sglang.srt.arg_groups import (
        pipeline,  # noqa: F401
        speculative_hook,  # noqa: F401
        validation_hook,  # noqa: F401
    )

    for m in (
        "llama",
        "qwen2",
        "qwen3",
        "qwen3_moe",
        "deepseek_v3",
        "deepseek_v2",
    ):
        try:
            importlib.import_module(f"transformers.models.{m}.configuration_{m}")
        except Exception:
            pass
    for mod in (
        "sglang.srt.configs.model_config",
        # DFLASH resolution imports the OpenAI protocol models (pydantic; ~3 s cold).
        "sglang.srt.entrypoints.openai.protocol",
    ):
        try:
            importlib.import_module(mod)
        except Exception:
            pass


class _LogCapture:
    """Collect every log record that reaches Logger.handle (independent of handlers,
    which prepare_server_args resets with logging.basicConfig(force=True))."""

    def __init__(self):
        import logging

        self.records = []
        orig = logging.Logger.handle
        cap = self

        def handle(logger_self, record):
            try:
                cap.records.append(
                    (record.levelno, record.levelname, _ANSI.sub("", record.getMessage()), record.name)
                )
            except Exception:
                pass
            return orig(logger_self, record)

        logging.Logger.handle = handle


def _patch_gpu_memory(mb):
    """Make every caller of get_device_memory_capacity see `mb` MiB."""
    from sglang.srt.utils import common

    orig = common.get_device_memory_capacity
    ns: dict = {}
    exec(f"def get_device_memory_capacity(device=None):\n    return {float(mb)!r}\n", ns)
    fake = ns["get_device_memory_capacity"]
    # Swap the code object so names imported with `from ... import` see it too.
    orig.__code__ = fake.__code__


def _where(tb):
    """Innermost frame inside the sglang package: ('sglang/srt/x.py:LINE', func)."""
    best = None
    for fs in traceback.extract_tb(tb):
        f = fs.filename.replace("\\", "/")
        i = f.rfind("/sglang/")
        if i >= 0:
            best = (f"{f[i + 1:]}:{fs.lineno}", fs.name)
    if best is None:
        frames = traceback.extract_tb(tb)
        if frames:
            fs = frames[-1]
            best = (f"{fs.filename}:{fs.lineno}", fs.name)
    return best or (None, None)


def run_case(case: dict) -> dict:
    """Run one case in the current process. Call in a fresh child (fork)."""
    import argparse as _ap
    import logging

    t0 = time.perf_counter()
    name = case.get("name")
    argv = [str(a) for a in case.get("argv") or []]
    for k, v in (case.get("env") or {}).items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = str(v)

    cap = _LogCapture()
    parse_msgs: list[str] = []
    orig_error = _ap.ArgumentParser.error

    def error(self, message):
        parse_msgs.append(message)
        return orig_error(self, message)

    _ap.ArgumentParser.error = error

    sim = case.get("simulate") or None
    if sim:
        from sglang.srt.runtime_context import override_platform

        facts = dict(sim.get("platform") or {})
        if "device_capability" in facts and isinstance(facts["device_capability"], list):
            facts["device_capability"] = tuple(facts["device_capability"])
        override_platform(**facts).install()
        if sim.get("gpu_memory_mb") is not None:
            _patch_gpu_memory(sim["gpu_memory_mb"])

    from sglang.srt.server_args import prepare_server_args

    result = {
        "name": name,
        "accepted": False,
        "stage": None,
        "exc_type": None,
        "message": None,
        "raised_at": None,
        "raised_in": None,
        "resolved": None,
        "cuda_graph": None,
        "set_by": {},
        "warnings": [],
        "info": [],
        "seconds": None,
    }
    stage = "parse"
    sa = None
    try:
        sa = prepare_server_args(argv)
        stage = "resolve"
        sa.resolve_once()
        stage = "check"
        sa.check_server_args()
        stage = "ok"
        result["accepted"] = True
    except BaseException as e:  # SystemExit from argparse included
        result["exc_type"] = type(e).__name__
        msg = str(e)
        if isinstance(e, SystemExit) and parse_msgs:
            msg = parse_msgs[-1]
        result["message"] = msg
        result["raised_at"], result["raised_in"] = _where(e.__traceback__)
    result["stage"] = stage

    if sa is not None and stage != "parse":
        try:
            from sglang.srt.arg_groups.overrides import resolution_result
            from sglang.srt.server_args import _plain

            def get(f):
                return _plainjson(_plain(resolution_result(sa, f)))

            resolved = {f: get(f) for f in RESOLVED_FIELDS}
            cg = get("cuda_graph_config")
            dec = cg.get("decode") if isinstance(cg, dict) else None
            if isinstance(dec, dict):
                resolved["cuda_graph_max_bs"] = dec.get("max_bs")
                resolved["cuda_graph_bs"] = dec.get("bs")
                resolved["cuda_graph_decode_backend"] = dec.get("backend")
            result["cuda_graph"] = cg
            result["resolved"] = resolved
            set_by = {}
            for source, fields in getattr(sa, "_resolved_overrides", None) or ():
                for f in fields:
                    set_by[f] = source
            result["set_by"] = set_by
        except Exception as e:  # resolution state unreadable
            result["resolved_error"] = f"{type(e).__name__}: {e}"

    for levelno, levelname, msg, _logger in cap.records:
        if levelno >= logging.WARNING:
            result["warnings"].append(f"{levelname}: {msg}")
        elif levelno >= logging.INFO:
            result["info"].append(msg)
    result["seconds"] = round(time.perf_counter() - t0, 4)
    return result


def _fork_case(case: dict, timeout: float) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        code = 0
        try:
            res = run_case(case)
            data = json.dumps(res, default=repr).encode()
        except BaseException as e:  # harness bug, report it
            data = json.dumps(
                {"name": case.get("name"), "accepted": False, "stage": "crash",
                 "exc_type": type(e).__name__, "message": f"harness: {e}"}
            ).encode()
            code = 1
        view = memoryview(data)
        while view:
            n = os.write(w, view)
            view = view[n:]
        os.close(w)
        os._exit(code)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([r], [], [], left)
        if not ready:
            continue
        buf = os.read(r, 1 << 16)
        if not buf:
            break
        chunks.append(buf)
    os.close(r)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return {"name": case.get("name"), "accepted": False, "stage": "timeout",
                "exc_type": None, "message": f"no result within {timeout}s"}
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return {"name": case.get("name"), "accepted": False, "stage": "crash",
                "exc_type": None, "message": f"child exited with status {status} and no result"}


def _read_cases(path: str | None) -> list[dict]:
    text = sys.stdin.read() if path in (None, "-") else Path(path).read_text()
    text = text.strip()
    if not text:
        return []
    if text.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="SGLang argument-resolution peer")
    ap.add_argument("cases", nargs="?", default=None, help="JSON list / JSONL file (default stdin)")
    ap.add_argument("--timeout", type=float, default=120.0, help="per-case seconds")
    ap.add_argument("--no-fork", action="store_true")
    ap.add_argument("--stats", action="store_true", help="print timing summary to stderr")
    a = ap.parse_args(argv)

    cases = _read_cases(a.cases)
    t0 = time.perf_counter()
    _preimport()
    t_import = time.perf_counter() - t0
    t1 = time.perf_counter()
    for case in cases:
        res = run_case(case) if a.no_fork else _fork_case(case, a.timeout)
        _OUT.write(json.dumps(res, default=repr) + "\n")
        _OUT.flush()
    t_cases = time.perf_counter() - t1
    if a.stats:
        n = len(cases)
        print(
            f"[sglang_peer] import {t_import:.2f}s; {n} cases in {t_cases:.2f}s"
            + (f" ({n / t_cases:.2f} cases/s)" if n and t_cases > 0 else ""),
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
