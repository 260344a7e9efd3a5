"""SGLang-spelled server flags for the reference runtime, and their resolution.

Pure Python (no torch), so the launcher can import it to decide whether ``--runtime reference``
can run a configuration:

* :data:`SUPPORTED_FLAGS`: flags the runtime honours;
* :data:`GPU_ONLY_IGNORED_FLAGS`: GPU tuning flags accepted with a warning and ignored;
* :data:`REFUSED_FLAGS`: flags whose meaning the runtime cannot honour (refused unless they
  hold their neutral value, e.g. ``--tp-size 1``);
* :data:`SUPPORTED_ALGORITHMS` / :data:`REFUSED_ALGORITHMS`.

Any other flag is warned about and ignored, as the contract asks (never an error).
Resolution follows SGLang 0.5.23 (``srt/arg_groups/speculative_hook.py``) and logs its warning
strings; it adds the draft-tree capacity check SGLang lacks.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, field
from typing import Any

from specguard.runtime.errors import RuntimeInputError

SUPPORTED_ALGORITHMS: frozenset[str] = frozenset({"STANDALONE", "NGRAM", "EAGLE", "EAGLE3"})
REFUSED_ALGORITHMS: frozenset[str] = frozenset({"NEXTN", "DFLASH", "DSPARK", "UNO"})
#: draft-head architectures the runtime loads -> the algorithm that runs them (SGLang's
#: srt/models/llama_eagle.py and llama_eagle3.py EntryClass)
EAGLE_HEAD_ARCHITECTURES: dict[str, str] = {"LlamaForCausalLMEagle": "EAGLE", "LlamaForCausalLMEagle3": "EAGLE3"}

#: flag -> does it take a value
SUPPORTED_FLAGS: dict[str, bool] = {
    "--model-path": True,
    "--model": True,
    "--tokenizer-path": True,
    "--host": True,
    "--port": True,
    "--served-model-name": True,
    "--device": True,
    "--dtype": True,
    "--random-seed": True,
    "--context-length": True,
    "--max-running-requests": True,
    "--log-level": True,
    "--decode-log-interval": True,
    "--enable-metrics": False,
    "--skip-server-warmup": False,
    "--api-key": True,
    "--trust-remote-code": False,
    "--speculative-algorithm": True,
    "--speculative-draft-model-path": True,
    "--speculative-draft-model": True,
    "--speculative-draft-model-revision": True,
    "--speculative-num-steps": True,
    "--speculative-eagle-topk": True,
    "--speculative-num-draft-tokens": True,
    "--speculative-accept-threshold-single": True,
    "--speculative-accept-threshold-acc": True,
    "--speculative-use-rejection-sampling": False,
    "--speculative-ngram-min-bfs-breadth": True,
    "--speculative-ngram-max-bfs-breadth": True,
    "--speculative-ngram-match-type": True,
    "--speculative-ngram-max-trie-depth": True,
    "--speculative-ngram-capacity": True,
    "--tp-size": True,
    "--tp": True,
    "--dp-size": True,
    "--dp": True,
    "--pp-size": True,
    "--nnodes": True,
    "--kv-cache-dtype": True,
    # the reference runtime's own (SGLang has no such flag): batched (default) or queued
    "--scheduler": True,
}

#: GPU tuning flags: accepted, warned about, ignored. flag -> takes a value
GPU_ONLY_IGNORED_FLAGS: dict[str, bool] = {
    "--mem-fraction-static": True,
    "--cuda-graph-max-bs": True,
    "--cuda-graph-bs": True,
    "--disable-cuda-graph": False,
    "--disable-cuda-graph-padding": False,
    "--enable-torch-compile": False,
    "--torch-compile-max-bs": True,
    "--attention-backend": True,
    "--prefill-attention-backend": True,
    "--decode-attention-backend": True,
    "--speculative-attention-mode": True,
    "--speculative-draft-attention-backend": True,
    "--sampling-backend": True,
    "--page-size": True,
    "--chunked-prefill-size": True,
    "--max-prefill-tokens": True,
    "--max-total-tokens": True,
    "--disable-radix-cache": False,
    "--disable-overlap-schedule": False,
    "--enable-mixed-chunk": False,
    "--enable-dp-attention": False,
    "--triton-attention-num-kv-splits": True,
    "--num-continuous-decode-steps": True,
    "--schedule-policy": True,
    "--schedule-conservativeness": True,
    "--watchdog-timeout": True,
    "--speculative-draft-load-format": True,
    "--load-format": True,
    "--base-gpu-id": True,
    "--gpu-id-step": True,
    "--enable-cache-report": False,
    "--show-time-cost": False,
}

#: flags whose meaning the runtime cannot honour -> the only value it accepts (None: never)
REFUSED_FLAGS: dict[str, str | None] = {
    "--quantization": None,
    "--lora-paths": None,
    "--enable-lora": None,
    "--speculative-token-map": None,
    "--speculative-ngram-external-corpus-path": None,
    "--speculative-ngram-external-sam-budget": None,
    "--speculative-ngram-external-corpus-max-tokens": None,
    "--dist-init-addr": None,
}
_NEUTRAL_VALUES: dict[str, str] = {
    "tp_size": "1",
    "dp_size": "1",
    "pp_size": "1",
    "nnodes": "1",
    "kv_cache_dtype": "auto",
}

#: SGLang's auto (num_steps, topk, num_draft_tokens) (speculative_hook.py:1430-1461): STANDALONE
#: always, EAGLE/EAGLE3 for most targets; EAGLE/EAGLE3 with these target architectures get the tree
STANDALONE_AUTO_SPEC_PARAMS = (3, 1, 4)
EAGLE_TREE_AUTO_SPEC_PARAMS = (5, 4, 8)
EAGLE_TREE_AUTO_ARCHITECTURES = frozenset({"LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM"})
NGRAM_DEFAULT_NUM_DRAFT_TOKENS = 12
SPEC_MAX_RUNNING_REQUESTS = 48

WARN_CHAIN_DRAFT_TOKENS = (
    "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
)
WARN_NGRAM_DRAFT_TOKENS = "speculative_num_draft_tokens is set to 12 by default for ngram speculative decoding."
WARN_MAX_RUNNING = "Max running requests is reset to 48 for speculative decoding."


@dataclass
class ServerArgs:
    """Resolved arguments, under SGLang's field names (shown at top level of /server_info)."""

    model_path: str = ""
    tokenizer_path: str | None = None
    host: str = "127.0.0.1"
    port: int = 30000
    served_model_name: str | None = None
    device: str = "cpu"
    dtype: str = "auto"
    random_seed: int | None = None
    context_length: int | None = None
    max_running_requests: int | None = None
    log_level: str = "info"
    decode_log_interval: int = 40
    enable_metrics: bool = False
    skip_server_warmup: bool = False
    api_key: str | None = None
    speculative_algorithm: str | None = None
    speculative_draft_model_path: str | None = None
    speculative_draft_model_revision: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    speculative_accept_threshold_single: float = 1.0
    speculative_accept_threshold_acc: float = 1.0
    speculative_use_rejection_sampling: bool = False
    speculative_ngram_min_bfs_breadth: int = 1
    speculative_ngram_max_bfs_breadth: int = 10
    speculative_ngram_match_type: str = "BFS"
    speculative_ngram_max_trie_depth: int = 18
    speculative_ngram_capacity: int = 10_000_000
    tp_size: int = 1
    dp_size: int = 1
    pp_size: int = 1
    kv_cache_dtype: str = "auto"
    scheduler: str = "batched"
    ignored_flags: list[str] = field(default_factory=list)

    def public_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("ignored_flags")
        if out.get("api_key"):
            out["api_key"] = "***"
        return out


@dataclass
class ParsedFlags:
    args: ServerArgs
    warnings: list[str]


class _ArgumentError(Exception):
    pass


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ArgumentError(message)


def _parser() -> argparse.ArgumentParser:
    p = _RaisingParser(
        prog="python -m specguard.runtime",
        description="specguard's reference runtime: SGLang-compatible speculative decoding on CPU or CUDA",
        allow_abbrev=False,
    )
    p.add_argument("--model-path", "--model", dest="model_path", required=True)
    p.add_argument("--tokenizer-path", dest="tokenizer_path")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--served-model-name")
    p.add_argument("--device", choices=["cpu", "cuda"], default=None)
    p.add_argument("--dtype", default="auto", choices=["auto", "float32", "float", "float16", "half", "bfloat16"])
    p.add_argument("--random-seed", type=int)
    p.add_argument("--context-length", type=int)
    p.add_argument("--max-running-requests", type=int)
    p.add_argument("--log-level", default="info")
    p.add_argument("--decode-log-interval", type=int, default=40)
    p.add_argument("--enable-metrics", action="store_true")
    p.add_argument("--skip-server-warmup", action="store_true")
    p.add_argument("--api-key")
    p.add_argument("--trust-remote-code", action="store_true")
    p.add_argument("--speculative-algorithm")
    p.add_argument("--speculative-draft-model-path", "--speculative-draft-model", dest="speculative_draft_model_path")
    p.add_argument("--speculative-draft-model-revision")
    p.add_argument("--speculative-num-steps", type=int)
    p.add_argument("--speculative-eagle-topk", type=int)
    p.add_argument("--speculative-num-draft-tokens", type=int)
    p.add_argument("--speculative-accept-threshold-single", type=float, default=1.0)
    p.add_argument("--speculative-accept-threshold-acc", type=float, default=1.0)
    p.add_argument("--speculative-use-rejection-sampling", action="store_true")
    p.add_argument("--speculative-ngram-min-bfs-breadth", type=int, default=1)
    p.add_argument("--speculative-ngram-max-bfs-breadth", type=int, default=10)
    p.add_argument("--speculative-ngram-match-type", default="BFS", type=str.upper, choices=["BFS", "PROB"])
    p.add_argument("--speculative-ngram-max-trie-depth", type=int, default=18)
    p.add_argument("--speculative-ngram-capacity", type=int, default=10_000_000)
    p.add_argument("--tp-size", "--tp", dest="tp_size", default="1")
    p.add_argument("--dp-size", "--dp", dest="dp_size", default="1")
    p.add_argument("--pp-size", dest="pp_size", default="1")
    p.add_argument("--nnodes", default="1")
    p.add_argument("--kv-cache-dtype", default="auto")
    p.add_argument("--scheduler", default="batched", choices=["batched", "queued"])
    return p


def _split_leftovers(rest: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(GPU-only flags ignored, unknown flags ignored, refused flags) from argparse's leftovers."""
    gpu, unknown, refused = [], [], []
    i = 0
    while i < len(rest):
        token = rest[i]
        name, has_inline = (token.split("=", 1)[0], "=" in token) if token.startswith("--") else (token, False)
        takes_value = GPU_ONLY_IGNORED_FLAGS.get(name)
        if takes_value is None:
            takes_value = not has_inline and i + 1 < len(rest) and not rest[i + 1].startswith("--")
        value = None
        if takes_value and not has_inline and i + 1 < len(rest):
            value = rest[i + 1]
            i += 1
        elif has_inline:
            value = token.split("=", 1)[1]
        shown = name if value is None else f"{name} {value}"
        if name in REFUSED_FLAGS:
            refused.append(shown)
        elif name in GPU_ONLY_IGNORED_FLAGS:
            gpu.append(shown)
        else:
            unknown.append(shown)
        i += 1
    return gpu, unknown, refused


def parse_flags(argv: list[str]) -> ParsedFlags:
    """Parse and resolve; raises :class:`RuntimeInputError` with one clear line on bad flags."""
    try:
        ns, rest = _parser().parse_known_args(argv)
    except _ArgumentError as exc:
        raise RuntimeInputError(f"bad flag: {exc}") from None
    gpu, unknown, refused = _split_leftovers(rest)
    if refused:
        raise RuntimeInputError(
            f"{refused[0]}: the reference runtime cannot honour this flag; serve this configuration with SGLang"
        )
    for key, neutral in _NEUTRAL_VALUES.items():
        value = str(getattr(ns, key))
        if value != neutral:
            flag = "--" + key.replace("_", "-")
            raise RuntimeInputError(
                f"{flag} {value}: the reference runtime runs on one device only (it accepts {flag} {neutral}); "
                "serve this configuration with SGLang"
            )
    values = {k: v for k, v in vars(ns).items() if k in ServerArgs.__dataclass_fields__ and k not in _NEUTRAL_VALUES}
    args = ServerArgs(**values, ignored_flags=gpu + unknown)
    warnings = [f"{flag}: GPU-only tuning flag, ignored by the reference runtime" for flag in gpu]
    warnings += [f"{flag}: unknown flag, ignored by the reference runtime" for flag in unknown]
    if ns.device is None:
        args.device = "cpu"
    check_ranges(args)
    warnings += resolve_speculative(args)
    return ParsedFlags(args, warnings)


# Flag values no server could run, refused before anything loads (name, lowest, highest allowed).
_RANGES: tuple[tuple[str, int, int | None], ...] = (
    ("port", 1, 65535),
    ("context_length", 1, None),
    ("max_running_requests", 1, None),
    ("decode_log_interval", 1, None),
    ("random_seed", 0, (1 << 64) - 1),  # what torch.manual_seed takes
    ("speculative_ngram_capacity", 1, None),
)


def check_ranges(args: ServerArgs) -> None:
    for name, lowest, highest in _RANGES:
        value = getattr(args, name)
        if value is None:
            continue
        if value < lowest or (highest is not None and value > highest):
            allowed = f"from {lowest} to {highest}" if highest is not None else f"at least {lowest}"
            raise RuntimeInputError(f"--{name.replace('_', '-')} {value}: must be {allowed}")


def max_draft_tokens(num_steps: int, topk: int) -> int:
    """Largest sensible ``num_draft_tokens`` (root included): 1 + topk + (num_steps - 1) * topk**2."""
    return 1 + topk + (num_steps - 1) * topk * topk


def _target_config(model_path: str) -> dict:
    """The target's config.json when it can be read now ({} otherwise: the loader names the problem)."""
    import json
    from pathlib import Path

    try:
        config = json.loads((Path(model_path) / "config.json").read_text())
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def _target_architecture(model_path: str) -> str | None:
    """The target's ``architectures[0]`` from its config.json (EAGLE's auto parameters depend on it)."""
    architectures = _target_config(model_path).get("architectures") or []
    return str(architectures[0]) if isinstance(architectures, list) and architectures else None


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _check_round_fits(args: ServerArgs, steps: int, topk: int, ndt: int) -> None:
    """Absurd steps/topk are refused before any weight loads: a round's draft tokens must fit the
    context, and a top-k wider than the vocabulary cannot be drafted (torch.topk would fail mid-request)."""
    config = _target_config(args.model_path)
    context = args.context_length or _positive_int(config.get("max_position_embeddings"))
    if context is not None and max(steps + 1, ndt) > context:
        raise RuntimeInputError(
            f"--speculative-num-steps {steps} / --speculative-num-draft-tokens {ndt}: a speculative round of "
            f"{max(steps + 1, ndt)} tokens does not fit the context length {context}"
        )
    vocab = _positive_int(config.get("vocab_size"))
    if vocab is not None and topk > vocab:
        raise RuntimeInputError(f"--speculative-eagle-topk {topk}: more than the target's {vocab} tokens")


def eagle_head_refusal(algorithm: str, draft_path: str) -> str | None:
    """Why the runtime cannot load this EAGLE/EAGLE3 draft (None: its config names a head it loads).

    Reads config.json only; a checkpoint whose tensors are wrong is refused by the runtime at start.
    """
    import json
    from pathlib import Path

    config = Path(draft_path) / "config.json"
    if not config.is_file():
        return (
            f"--speculative-draft-model-path {draft_path}: no config.json there; the reference runtime loads "
            "EAGLE heads from a local checkpoint directory (download it first, or run with SGLang)"
        )
    try:
        architectures = json.loads(config.read_text()).get("architectures") or []
    except (OSError, ValueError, AttributeError):
        return f"{config} is not valid JSON"
    kinds = {EAGLE_HEAD_ARCHITECTURES[a] for a in architectures if a in EAGLE_HEAD_ARCHITECTURES}
    if not kinds:
        return (
            f"--speculative-algorithm {algorithm}: the draft {draft_path} has architecture {architectures!r}, not an "
            f"EAGLE head the reference runtime loads ({', '.join(sorted(EAGLE_HEAD_ARCHITECTURES))}); run it with SGLang"
        )
    if algorithm not in kinds:
        return f"--speculative-draft-model-path {draft_path} is an {kinds.pop()} head; launch it with --speculative-algorithm of that name"
    return None


def resolve_speculative(args: ServerArgs) -> list[str]:
    """Apply SGLang's resolution to ``args`` in place; return the warnings SGLang would log."""
    if args.speculative_algorithm is None:
        return []
    algo = args.speculative_algorithm.upper()
    args.speculative_algorithm = algo
    if algo in REFUSED_ALGORITHMS:
        raise RuntimeInputError(
            f"--speculative-algorithm {algo} is not supported by specguard's reference runtime "
            f"(supported: {', '.join(sorted(SUPPORTED_ALGORITHMS))}); run {algo} with SGLang (--runtime sglang)"
        )
    if algo not in SUPPORTED_ALGORITHMS:
        raise RuntimeInputError(
            f"--speculative-algorithm {algo} is unknown; the reference runtime supports "
            f"{', '.join(sorted(SUPPORTED_ALGORITHMS))}"
        )
    if args.speculative_accept_threshold_single != 1.0 or args.speculative_accept_threshold_acc != 1.0:
        raise RuntimeInputError(
            "--speculative-accept-threshold-single/-acc other than 1.0 make decoding lossy; "
            "the reference runtime only does lossless verification"
        )
    warnings: list[str] = []
    if args.max_running_requests is None:
        args.max_running_requests = SPEC_MAX_RUNNING_REQUESTS
        warnings.append(WARN_MAX_RUNNING)
    if algo == "NGRAM":
        if (
            args.speculative_ngram_min_bfs_breadth < 1
            or args.speculative_ngram_max_bfs_breadth < args.speculative_ngram_min_bfs_breadth
        ):
            raise RuntimeInputError(
                "--speculative-ngram-max-bfs-breadth must be >= --speculative-ngram-min-bfs-breadth >= 1"
            )
        if args.speculative_ngram_max_trie_depth < 2:
            raise RuntimeInputError("--speculative-ngram-max-trie-depth must be at least 2")
        if args.speculative_draft_model_path:
            warnings.append("--speculative-draft-model-path is ignored for NGRAM speculative decoding")
            args.speculative_draft_model_path = None
        args.speculative_eagle_topk = args.speculative_ngram_max_bfs_breadth
        if args.speculative_num_draft_tokens is None:
            args.speculative_num_draft_tokens = NGRAM_DEFAULT_NUM_DRAFT_TOKENS
            warnings.append(WARN_NGRAM_DRAFT_TOKENS)
        if args.speculative_num_draft_tokens < 2:
            raise RuntimeInputError("--speculative-num-draft-tokens must be at least 2")
        args.speculative_num_steps = max(1, args.speculative_num_draft_tokens // args.speculative_eagle_topk)
        # NGRAM's breadth walks its trie, not the vocabulary: only the round's length is bounded.
        _check_round_fits(args, args.speculative_num_steps, 1, args.speculative_num_draft_tokens)
        return warnings
    if not args.speculative_draft_model_path:
        raise RuntimeInputError(f"--speculative-algorithm {algo} needs --speculative-draft-model-path")
    if algo in ("EAGLE", "EAGLE3"):
        refusal = eagle_head_refusal(algo, args.speculative_draft_model_path)
        if refusal:
            raise RuntimeInputError(refusal)
    steps, topk, ndt = args.speculative_num_steps, args.speculative_eagle_topk, args.speculative_num_draft_tokens
    if steps is None:
        if topk is not None or ndt is not None:
            raise RuntimeInputError(
                "--speculative-eagle-topk/--speculative-num-draft-tokens need --speculative-num-steps as well"
            )
        steps, topk, ndt = STANDALONE_AUTO_SPEC_PARAMS
        if algo != "STANDALONE" and _target_architecture(args.model_path) in EAGLE_TREE_AUTO_ARCHITECTURES:
            steps, topk, ndt = EAGLE_TREE_AUTO_SPEC_PARAMS
    if topk is None:
        topk = 1
    if steps < 1 or topk < 1:
        raise RuntimeInputError("--speculative-num-steps and --speculative-eagle-topk must be at least 1")
    if topk == 1:
        if ndt is not None and ndt != steps + 1:
            warnings.append(WARN_CHAIN_DRAFT_TOKENS)
        ndt = steps + 1
    if ndt is None:
        raise RuntimeInputError(
            f"--speculative-eagle-topk {topk} needs --speculative-num-draft-tokens "
            f"(at most {max_draft_tokens(steps, topk)} for {steps} steps)"
        )
    if ndt < 2:
        raise RuntimeInputError("--speculative-num-draft-tokens must be at least 2")
    if ndt > max_draft_tokens(steps, topk):
        raise RuntimeInputError(
            f"--speculative-num-draft-tokens {ndt} exceeds the draft tree's capacity: with "
            f"--speculative-num-steps {steps} and --speculative-eagle-topk {topk} at most "
            f"{max_draft_tokens(steps, topk)} (1 + topk + (num_steps - 1) * topk^2)"
        )
    _check_round_fits(args, steps, topk, ndt)
    args.speculative_num_steps, args.speculative_eagle_topk, args.speculative_num_draft_tokens = steps, topk, ndt
    return warnings
