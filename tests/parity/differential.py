"""Differential testing of specguard against SGLang 0.5.23's own argument resolution.

Three parts, used by ``test_differential.py`` and runnable alone
(``python -m tests.parity.differential --cases 200``):

- ``generate(n, seed)``: speculative launch configurations from a seeded generator over the
  speculative flags, the serving flags they interact with, the env vars, the fixture model
  pairs and the machine (a simulated A100, H100 or B200). The same seed gives the same cases on every machine.
- ``specguard_side(case, models)``: specguard run in-process (version 0.5.23): its findings,
  its prediction, and its corrected argv after ``fix_level=UNSAFE``.
- ``compare(...)``: the three one-directional checks of issue #3 and the agreement figures.

The SGLang side runs in the SGLang venv through ``tests/parity/peer_warm.py`` (the peer harness
``tests/parity/peer/sglang_peer.py`` with more imports before its fork), in parallel batches.

The machines. Every case passes ``--device cuda`` and SGLang's own platform override
(``runtime_context.override_platform``) plus a GPU memory size, so SGLang takes the branches of
a real A100, H100 or B200; specguard is told the same GPU. The CPU host without an override
is not used: SGLang's fallback there (no flashinfer, no GPU memory: triton by default, decode
CUDA-graph max batch 160) is a machine that does not exist, and specguard's backend rules and
predictions are about real GPUs.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PEER = HERE / "peer"
WARM_PEER = HERE / "peer_warm.py"

sys.path.insert(0, str(PEER))
import client as peer_client
import make_models

SGLANG_VERSION = "0.5.23"
# An A100 as SGLang sees one: CUDA, flashinfer installed, SM80, 80 GiB.
A100 = {"platform": {"is_cuda": True, "has_flashinfer": True, "device_capability": [8, 0]}, "gpu_memory_mb": 81920}
MACHINES: dict[str, dict | None] = {"a100": A100, "h100": peer_client.H100, "b200": peer_client.B200}
SPECGUARD_GPU = {"a100": "A100", "h100": "H100", "b200": "B200"}

# (target dir, draft dir or None, the algorithm the pair is made for)
PAIRS: dict[str, tuple[str, str | None, str]] = {
    "llama31+eagle": ("llama31-8b-bf16", "eagle-llama31-draft-fp16-2k", "EAGLE"),
    "llama31+eagle3": ("llama31-8b-bf16", "eagle3-llama31-draft-fp16-2k", "EAGLE3"),
    "llama2+eagle": ("llama2-7b-chat", "eagle-llama2-chat-7b", "EAGLE"),
    "qwen2.5+eagle3": ("qwen2.5-7b-bf16", "eagle3-qwen2.5-7b-draft", "EAGLE3"),
    "qwen3-32b+eagle3": ("qwen3-32b-bf16", "eagle3-qwen3-32b-draft", "EAGLE3"),
    "qwen3-235b+eagle3": ("qwen3-235b-a22b", "eagle3-qwen3-235b-draft", "EAGLE3"),
    "qwen3-235b+standalone": ("qwen3-235b-a22b", "qwen3-32b-bf16", "STANDALONE"),
    "llama31+standalone-llama2": ("llama31-8b-bf16", "llama2-7b-chat", "STANDALONE"),
    "deepseek-v3-mtp": ("deepseek-v3", None, "NEXTN"),
    "deepseek-r1-mtp": ("deepseek-r1", None, "EAGLE"),
    "qwen3-32b+dflash": ("qwen3-32b-bf16", "dflash-draft", "DFLASH"),
    "llama31-ngram": ("llama31-8b-bf16", None, "NGRAM"),
    "qwen2.5-ngram": ("qwen2.5-7b-bf16", None, "NGRAM"),
}
LARGE_TARGETS = frozenset({"qwen3-235b-a22b", "deepseek-v3", "deepseek-r1"})
ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "eagle", "eagle3", "nextn", "ngram", "standalone", "dflash")
BACKENDS = ("fa3", "flashinfer", "triton", "trtllm_mha", "fa4", "flex_attention", "torch_native")
DRAFT_BACKENDS = ("fa3", "flashinfer", "triton", "trtllm_mha", "fa4")

# The speculative fields compared, specguard Resolution attribute -> SGLang resolved field.
PREDICTED_FIELDS = {
    "algorithm": "speculative_algorithm",
    "num_steps": "speculative_num_steps",
    "eagle_topk": "speculative_eagle_topk",
    "num_draft_tokens": "speculative_num_draft_tokens",
    "max_running_requests": "max_running_requests",
    "disable_overlap_schedule": "disable_overlap_schedule",
    "enable_mixed_chunk": "enable_mixed_chunk",
    "attention_backend": "attention_backend",
    "draft_attention_backend": "speculative_draft_attention_backend",
    "cuda_graph_max_bs": "cuda_graph_max_bs",
    "page_size": "page_size",
}
MODELS_PLACEHOLDER = "$MODELS"
# Where test_differential.py leaves its report for the terminal summary (conftest.py).
PARITY_REPORT = pytest.StashKey[dict]()


@dataclass(frozen=True)
class Case:
    name: str
    machine: str
    pair: str
    argv: tuple[str, ...]  # with $MODELS for the model directory
    env: tuple[tuple[str, str], ...] = ()

    def concrete_argv(self, models: Path) -> list[str]:
        return [a.replace(MODELS_PLACEHOLDER, str(models)) for a in self.argv]

    def peer_case(self, models: Path, name: str | None = None, argv: list[str] | None = None,
                  env: dict[str, str] | None = None) -> dict:
        return {
            "name": name or self.name,
            "argv": argv if argv is not None else self.concrete_argv(models),
            "env": env if env is not None else dict(self.env),
            "simulate": MACHINES[self.machine],
        }


def _maybe(rng: random.Random, p: float, values: tuple) -> Any:
    return rng.choice(values) if rng.random() < p else None


def generate(n: int, seed: int = 20261122) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for i in range(n):
        pair = rng.choice(sorted(PAIRS))
        target, draft, made_for = PAIRS[pair]
        algorithm = made_for if rng.random() < 0.75 else rng.choice(ALGORITHMS)
        if rng.random() < 0.2:
            algorithm = algorithm.lower()
        argv: list[str] = ["--model-path", f"{MODELS_PLACEHOLDER}/{target}", "--device", "cuda",
                           "--speculative-algorithm", algorithm]
        if draft is not None and rng.random() < 0.93:
            argv += ["--speculative-draft-model-path", f"{MODELS_PLACEHOLDER}/{draft}"]

        def add(flag: str, value: Any, argv: list[str] = argv) -> None:
            if value is True:
                argv.append(flag)
            elif value is not None and value is not False:
                argv.extend([flag, str(value)])

        # steps/topk/ndt: all-or-none most of the time, any subset sometimes.
        style = rng.random()
        if style < 0.35:
            steps = topk = ndt = None
        elif style < 0.75:
            steps = rng.choice((1, 2, 3, 4, 5, 7))
            topk = rng.choice((1, 1, 2, 4, 8))
            ndt = rng.choice((2, 4, 6, 8, 16, steps + 1))
        else:
            steps = _maybe(rng, 0.6, (0, 1, 2, 3, 5, -1))
            topk = _maybe(rng, 0.6, (0, 1, 2, 4, -2))
            ndt = _maybe(rng, 0.6, (0, 1, 4, 8, 64))
        add("--speculative-num-steps", steps)
        add("--speculative-eagle-topk", topk)
        add("--speculative-num-draft-tokens", ndt)
        add("--page-size", _maybe(rng, 0.25, (1, 16, 64, 128)))
        add("--attention-backend", _maybe(rng, 0.45, BACKENDS))
        add("--speculative-draft-attention-backend", _maybe(rng, 0.12, DRAFT_BACKENDS))
        parallel = rng.random()
        if parallel < 0.08:
            add("--tp-size", 2)
            add("--attn-dp-size", 2)
        elif parallel < 0.12:
            add("--tp-size", 2)
            add("--dp-size", 2)
            add("--enable-dp-attention", True)
        elif parallel < 0.3:
            add("--tp-size", rng.choice((1, 2, 4, 8)))
        if target in LARGE_TARGETS and "--tp-size" not in argv and rng.random() < 0.75:
            add("--tp-size", 8)  # so that most of them fit the GPUs (MM001) and their fixes can be checked
        add("--pp-size", _maybe(rng, 0.05, (2,)))
        add("--max-running-requests", _maybe(rng, 0.25, (8, 16, 32, 64, 128)))
        add("--cuda-graph-max-bs-decode", _maybe(rng, 0.1, (8, 32, 64, 160)))
        add("--disable-cuda-graph", rng.random() < 0.05)
        add("--disable-cuda-graph-padding", rng.random() < 0.05)
        add("--enable-mixed-chunk", rng.random() < 0.15)
        add("--disable-overlap-schedule", rng.random() < 0.1)
        add("--speculative-adaptive", rng.random() < 0.04)
        add("--context-length", _maybe(rng, 0.2, (2048, 8192, 32768, 262144)))
        add("--dtype", _maybe(rng, 0.15, ("bfloat16", "float16", "auto")))
        if algorithm.upper() == "NGRAM":
            add("--speculative-ngram-max-bfs-breadth", _maybe(rng, 0.2, (1, 4, 10)))
        if algorithm.upper() == "DFLASH":
            add("--speculative-dflash-block-size", _maybe(rng, 0.2, (8, 16)))
        # Less common checks that touch speculative decoding (catalogue P46-P57, P77).
        add("--enable-torch-compile", rng.random() < 0.03)
        add("--speculative-use-rejection-sampling", rng.random() < 0.04)
        add("--speculative-use-block-verification", rng.random() < 0.02)
        window = _maybe(rng, 0.05, (0, 4, 8, 32))
        add("--speculative-draft-window-size", window)
        add("--speculative-draft-sink-size", _maybe(rng, 0.03, (0, 4, -1)))
        add("--enable-watermark", rng.random() < 0.03)
        env = []
        if rng.random() < 0.03:
            env.append(("SGLANG_ENABLE_PP_SPEC", "1"))
        if rng.random() < 0.12:
            env.append(("SGLANG_ENABLE_SPEC_V2", rng.choice(("0", "1"))))
        if rng.random() < 0.1:
            env.append(("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "1"))
        machine = rng.choice(("a100", "h100", "b200"))
        cases.append(Case(name=f"g{seed}-{i:05d}", machine=machine, pair=pair, argv=tuple(argv), env=tuple(env)))
    return cases


# ---- specguard side -------------------------------------------------------------------------


@dataclass
class SpecguardResult:
    errors: list[str]  # "CODE: message" of unapplied error findings on the case as given
    prediction: dict[str, Any]
    changed: bool
    corrected_argv: list[str]
    corrected_env: dict[str, str]
    unfixed: list[str]  # error codes left after fix_level=UNSAFE
    set_by: dict[str, str] = field(default_factory=dict)


_FACTS_CACHE: dict[str, Any] = {}


def _facts(path: str | None):
    from specguard.facts import load_facts

    if path is None:
        return None
    if path not in _FACTS_CACHE:
        try:
            _FACTS_CACHE[path] = load_facts(path, offline=True)
        except Exception:
            _FACTS_CACHE[path] = None
    return _FACTS_CACHE[path]


def specguard_side(case: Case, models: Path) -> SpecguardResult:
    from specguard.dialects import parse, render, render_env
    from specguard.engine import check
    from specguard.environment import gpu_by_name
    from specguard.models import Applicability, Dialect, Environment
    from specguard.rules import ALL_RULES
    from specguard.rules.base import CheckContext

    spec = parse(case.concrete_argv(models), Dialect.SGLANG, env=case.env)
    target = _facts(spec.get("model_path"))
    algorithm = (spec.get("speculative_algorithm") or "").upper()
    draft = _facts(spec.get("speculative_draft_model_path")) if algorithm != "NGRAM" else None
    env = Environment(sglang_version=SGLANG_VERSION, sglang_version_origin="given",
                      gpu=gpu_by_name(SPECGUARD_GPU[case.machine]), gpu_origin="given", gpu_count=8)
    ctx = CheckContext.build(spec, target, draft, env)
    outcome = check(ALL_RULES, ctx, fix_level=Applicability.UNSAFE)
    as_given = check(ALL_RULES, ctx)
    errors = [f"{f.code}: {f.message}" for f in as_given.errors]
    unfixed = [f.code for f in outcome.errors]
    prediction = {name: getattr(ctx.resolution, name, None) for name in PREDICTED_FIELDS}
    corrected = outcome.corrected
    return SpecguardResult(
        errors=errors,
        prediction=prediction,
        changed=bool(outcome.changes),
        corrected_argv=render(corrected, Dialect.SGLANG),
        corrected_env=render_env(corrected),
        unfixed=unfixed,
        set_by=dict(ctx.resolution.set_by),
    )


# ---- SGLang side ----------------------------------------------------------------------------


def models_dir(cache_root: Path) -> Path:
    """Config-only model dirs from the fixtures, written once per fixture content."""
    digest = hashlib.sha256()
    for name, (rel, arch, _) in sorted(make_models.MODELS.items()):
        digest.update(name.encode())
        digest.update((make_models.FIXTURES / rel).read_bytes())
        digest.update(json.dumps(arch).encode())
    path = cache_root / f"models-{digest.hexdigest()[:12]}"
    if not (path / ".done").exists():
        make_models.write_models(path)
        (path / ".done").write_text("ok")
    return path


def _run_batch(cases: list[dict], py: Path) -> list[dict]:
    env = dict(os.environ)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"})
    for key in list(env):
        if key.startswith(("SGLANG_", "SGL_")):
            env.pop(key)
    proc = subprocess.run([str(py), str(WARM_PEER), "-", "--timeout", "120"], input=json.dumps(cases),
                          capture_output=True, text=True, env=env, timeout=600 + 120 * len(cases))
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or len(results) != len(cases):
        raise peer_client.PeerError(f"peer exited {proc.returncode} with {len(results)}/{len(cases)} results:\n"
                                    f"{proc.stderr[-3000:]}")
    return results


def run_peer(cases: list[dict], py: Path, cache_file: Path | None = None, workers: int | None = None) -> dict[str, dict]:
    """SGLang's verdict per case name; results are cached by the case's content."""
    cache: dict[str, dict] = {}
    if cache_file is not None and cache_file.exists():
        for line in cache_file.read_text().splitlines():
            key, _, value = line.partition("\t")
            cache[key] = json.loads(value)

    def key_of(c: dict) -> str:
        return hashlib.sha256(json.dumps([c["argv"], c["env"], c["simulate"]], sort_keys=True).encode()).hexdigest()

    todo = [c for c in cases if key_of(c) not in cache]
    if todo:
        workers = workers or max(1, min(os.cpu_count() or 1, 8))
        chunks = [todo[i::workers] for i in range(workers)]
        with ThreadPoolExecutor(workers) as pool:
            for chunk, results in zip(chunks, pool.map(lambda ch: _run_batch(ch, py) if ch else [], chunks)):
                for c, r in zip(chunk, results):
                    cache[key_of(c)] = r
        if cache_file is not None:
            cache_file.parent.mkdir(parents=True, exist_ok=True)
            with cache_file.open("a") as out:
                for c in todo:
                    out.write(key_of(c) + "\t" + json.dumps(cache[key_of(c)]) + "\n")
    return {c["name"]: cache[key_of(c)] for c in cases}


# ---- comparison -----------------------------------------------------------------------------


def _norm(field_name: str, value: Any) -> Any:
    if field_name == "enable_mixed_chunk" or field_name == "disable_overlap_schedule":
        return bool(value)
    return value


def compare(cases: list[Case], models: Path, py: Path, cache_file: Path | None = None) -> dict:
    t0 = time.perf_counter()
    ours = {c.name: specguard_side(c, models) for c in cases}
    t_specguard = time.perf_counter() - t0
    t1 = time.perf_counter()
    theirs = run_peer([c.peer_case(models) for c in cases], py, cache_file)
    fixed_cases = {c.name: c for c in cases if ours[c.name].changed and not ours[c.name].unfixed}
    corrected = run_peer(
        [fixed_cases[n].peer_case(models, name=n + "-fixed", argv=ours[n].corrected_argv, env=ours[n].corrected_env)
         for n in fixed_cases],
        py, cache_file,
    )
    t_sglang = time.perf_counter() - t1

    figures: dict[str, Any] = {"cases": len(cases), "by_machine": dict(Counter(c.machine for c in cases))}
    missed, not_accepted, mismatches = [], [], []
    rejected = caught = 0
    unfixed_reasons: Counter = Counter()
    accepted_after_fix = corrected_checked = 0
    field_total: Counter = Counter()
    field_match: Counter = Counter()
    for c in cases:
        mine, peer = ours[c.name], theirs[c.name]
        if not peer["accepted"]:
            rejected += 1
            if mine.errors:
                caught += 1
            else:
                missed.append({"case": c.name, "machine": c.machine, "argv": " ".join(c.argv), "env": dict(c.env),
                               "sglang": f"{peer['stage']}: {peer['exc_type']}: {peer['message']}"[:400]})
        if mine.unfixed:
            unfixed_reasons.update(sorted(set(mine.unfixed)))
        else:
            corrected_checked += 1
            verdict = corrected[c.name + "-fixed"] if c.name in fixed_cases else peer
            if verdict["accepted"]:
                accepted_after_fix += 1
            else:
                not_accepted.append({"case": c.name, "machine": c.machine, "argv": " ".join(mine.corrected_argv).replace(str(models), MODELS_PLACEHOLDER),
                                     "env": mine.corrected_env,
                                     "sglang": f"{verdict['stage']}: {verdict['exc_type']}: {verdict['message']}"[:400]})
        if peer["accepted"] and peer.get("resolved"):
            for ours_name, theirs_name in PREDICTED_FIELDS.items():
                field_total[ours_name] += 1
                a, b = _norm(ours_name, mine.prediction.get(ours_name)), _norm(ours_name, peer["resolved"].get(theirs_name))
                if a == b:
                    field_match[ours_name] += 1
                else:
                    mismatches.append({"case": c.name, "machine": c.machine, "field": ours_name, "specguard": a, "sglang": b,
                                       "argv": " ".join(c.argv), "env": dict(c.env)})
    figures.update(
        sglang_rejections=rejected,
        rejections_caught=caught,
        specguard_errors=sum(1 for c in cases if ours[c.name].errors),
        corrected_checked=corrected_checked,
        corrected_accepted=accepted_after_fix,
        corrected_excluded_unfixable=len(cases) - corrected_checked,
        unfixable_by_rule=dict(unfixed_reasons.most_common()),
        predictions={f: f"{field_match[f]}/{field_total[f]}" for f in PREDICTED_FIELDS},
        seconds={"specguard": round(t_specguard, 1), "sglang": round(t_sglang, 1)},
    )
    return {"figures": figures, "missed": missed, "not_accepted": not_accepted, "mismatches": mismatches}


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--out", type=Path, default=REPO / ".cache" / "parity" / "report.json")
    a = ap.parse_args()
    py = peer_client.find_sglang_python()
    if py is None:
        print("no SGLang venv", file=sys.stderr)
        return 2
    cache_root = REPO / ".cache" / "parity"
    models = models_dir(cache_root)
    report = compare(generate(a.cases, a.seed), models, py, cache_root / "peer-cache.tsv")
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(report, indent=1, default=str))
    print(json.dumps(report["figures"], indent=1))
    print(f"missed {len(report['missed'])}, not accepted {len(report['not_accepted'])}, mismatches {len(report['mismatches'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
