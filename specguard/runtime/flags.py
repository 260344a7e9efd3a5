"""SGLang-spelled server flags for the reference runtime, and their resolution.

Pure Python (no torch), so the launcher can import it to decide whether ``--runtime reference``
can run a configuration:

* :class:`ServerArgs`: every flag the runtime honours, declared once as a field (SGLang's field
  name, its type, and :func:`flag` metadata: option strings, choices, help, allowed range,
  source). The argparse parser (:func:`_parser`) and :data:`SUPPORTED_FLAGS` are derived from it;
  defaults, option strings, choices and help that are SGLang's are read from SGLang 0.5.23's own
  parser table (``specguard/data/sglang-0.5.23-flags.json``), not copied;
* :data:`GPU_ONLY_IGNORED_FLAGS`: GPU tuning flags accepted with a warning and ignored;
* :data:`REFUSED_FLAGS`: flags whose meaning the runtime cannot honour (refused); fields with a
  ``neutral`` value are refused unless they hold it (e.g. ``--tp-size 1``);
* :data:`SUPPORTED_ALGORITHMS` / :data:`REFUSED_ALGORITHMS`.

Any other flag is warned about and ignored, as the contract asks (never an error).
Resolution follows SGLang 0.5.23 (``srt/arg_groups/speculative_hook.py``) in three steps, each
its own function: check what was given, fill SGLang's defaults, check what resolved; the
warnings SGLang logs are then read off the difference between the given and the resolved
arguments. It adds the draft-tree capacity check SGLang lacks.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import typing
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from packaging.version import Version

from specguard.runtime.errors import RuntimeInputError
from specguard.sglang_facts.algorithms import BY_NAME, EAGLE_HEAD_ALGORITHMS
from specguard.sglang_facts.defaults import (
    AUTO_PARAMS_CHAIN,
    DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC,
    NGRAM_DEFAULT_DRAFT_TOKENS,
    SpecParams,
    auto_params_at,
)
from specguard.sglang_facts.releases import NEWEST_KNOWN_SGLANG

SUPPORTED_ALGORITHMS: frozenset[str] = frozenset({"STANDALONE", "NGRAM", "EAGLE", "EAGLE3"})
# Every other algorithm SGLang accepts: refused with a pointer to SGLang, not as unknown.
REFUSED_ALGORITHMS: frozenset[str] = frozenset(BY_NAME) - SUPPORTED_ALGORITHMS
#: draft-head architectures the runtime loads -> the algorithm that runs them (SGLang's
#: srt/models/llama_eagle.py and llama_eagle3.py EntryClass)
EAGLE_HEAD_ARCHITECTURES: dict[str, str] = {"LlamaForCausalLMEagle": "EAGLE", "LlamaForCausalLMEagle3": "EAGLE3"}

#: SGLang's default max_running_requests under speculative decoding (speculative_hook.py), shared
#: with the checker's resolution
SPEC_MAX_RUNNING_REQUESTS = DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC

WARN_CHAIN_DRAFT_TOKENS = (
    "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
)
WARN_NGRAM_DRAFT_TOKENS = (
    f"speculative_num_draft_tokens is set to {NGRAM_DEFAULT_DRAFT_TOKENS} by default for ngram speculative decoding."
)
WARN_MAX_RUNNING = f"Max running requests is reset to {SPEC_MAX_RUNNING_REQUESTS} for speculative decoding."
WARN_NGRAM_DRAFT_PATH = "--speculative-draft-model-path is ignored for NGRAM speculative decoding"

SGLANG_FLAGS_VERSION = NEWEST_KNOWN_SGLANG
_SGLANG_FLAGS_TABLE = Path(__file__).resolve().parents[1] / "data" / f"sglang-{SGLANG_FLAGS_VERSION}-flags.json"


@cache
def sglang_arguments() -> dict[str, dict[str, Any]]:
    """SGLang's own parser arguments (``ServerArgs.add_cli_args``), keyed by destination."""
    return {entry["dest"]: entry for entry in json.loads(_SGLANG_FLAGS_TABLE.read_text())["flags"]}


class _SGLangDefault:
    """Marks a field whose default is SGLang's own, read from its parser table."""


SGLANG = _SGLangDefault()


def flag(
    *option_strings: str,
    default: Any = SGLANG,
    choices: tuple[str, ...] | None = None,
    help: str | None = None,
    parse_as: Callable[[str], Any] | None = None,
    neutral: Any = None,
    lowest: int | None = None,
    highest: int | None = None,
    required: bool = False,
    source: str = "",
) -> Any:
    """A :class:`ServerArgs` field that is a flag. Everything left out is SGLang's: the option
    strings, the default, the choices and the help of the argument with the field's name in
    SGLang 0.5.23's parser. Given ``option_strings`` are added to SGLang's; ``parse_as`` reads
    the value as that type instead of the field's (the flags with a ``neutral`` value read it as
    text, so any other value gets the one-device message rather than argparse's type error);
    ``lowest``/``highest`` bound the values no server could run; ``source`` says where a fact
    that is not SGLang's own comes from."""
    metadata = {
        "option_strings": option_strings,
        "default": default,
        "choices": choices,
        "help": help,
        "parse_as": parse_as,
        "neutral": neutral,
        "lowest": lowest,
        "highest": highest,
        "required": required,
        "source": source,
    }
    return _FlagField(metadata)


class _FlagField:
    """What :func:`flag` returns until :func:`_flags_to_fields` turns it into a dataclass field
    once the field's name (and so SGLang's argument of that name) is known."""

    def __init__(self, metadata: dict[str, Any]) -> None:
        self.metadata = metadata


def _flags_to_fields(cls: type) -> type:
    """Resolve every :func:`flag` of ``cls`` against SGLang's parser table into a field with a default."""
    sglang = sglang_arguments()
    for name, value in list(vars(cls).items()):
        if not isinstance(value, _FlagField):
            continue
        meta = dict(value.metadata)
        theirs = sglang.get(name)
        if theirs is None and (meta["default"] is SGLANG or not meta["option_strings"]):
            raise TypeError(f"ServerArgs.{name}: SGLang has no such argument; give its option strings and default")
        if theirs is not None:
            meta["option_strings"] = tuple(dict.fromkeys([*theirs["option_strings"], *meta["option_strings"]]))
            if meta["default"] is SGLANG:
                meta["default"] = theirs["default"]
            meta["choices"] = meta["choices"] or (tuple(theirs["choices"]) if theirs["choices"] else None)
            meta["help"] = meta["help"] or theirs["help"]
        setattr(cls, name, field(default=meta["default"], metadata={"flag": meta}))
    return cls


@dataclass
@_flags_to_fields
class ServerArgs:
    """Resolved arguments, under SGLang's field names (shown at top level of /server_info).

    One field per flag the runtime honours: the parser is derived from these fields.
    """

    model_path: str = flag(required=True)
    tokenizer_path: str | None = flag()
    host: str = flag()
    port: int = flag(lowest=1, highest=65535)
    served_model_name: str | None = flag()
    # SGLang picks the accelerator it finds; the reference runtime runs on the CPU unless told.
    device: str = flag(
        default="cpu",
        choices=("cpu", "cuda"),
        help="cpu (default) or cuda",
        source="the reference runtime's own default",
    )
    dtype: str = flag()
    # what torch.manual_seed takes
    random_seed: int | None = flag(lowest=0, highest=(1 << 64) - 1)
    # SGLang also reads suffixes (32k); the runtime reads a plain count
    context_length: int | None = flag(lowest=1, help="The model's maximum context length (default: its config.json's).")
    max_running_requests: int | None = flag(lowest=1)
    log_level: str = flag()
    decode_log_interval: int = flag(lowest=1)
    enable_metrics: bool = flag()
    skip_server_warmup: bool = flag()
    api_key: str | None = flag()
    trust_remote_code: bool = flag()
    speculative_algorithm: str | None = flag()
    speculative_draft_model_path: str | None = flag()
    speculative_draft_model_revision: str | None = flag()
    speculative_num_steps: int | None = flag()
    speculative_eagle_topk: int | None = flag()
    speculative_num_draft_tokens: int | None = flag()
    speculative_accept_threshold_single: float = flag()
    speculative_accept_threshold_acc: float = flag()
    speculative_use_rejection_sampling: bool = flag()
    speculative_ngram_min_bfs_breadth: int = flag()
    speculative_ngram_max_bfs_breadth: int = flag()
    # SGLang compares the match type upper-cased
    speculative_ngram_match_type: str = flag(parse_as=str.upper)
    speculative_ngram_max_trie_depth: int = flag()
    speculative_ngram_capacity: int = flag(lowest=1)
    # The runtime runs on one device: these are refused unless they hold their neutral value.
    # ``--tp``/``--dp``: the short spellings SGLang's parser reads as abbreviations.
    tp_size: int = flag("--tp", parse_as=str, neutral=1)
    dp_size: int = flag("--dp", parse_as=str, neutral=1)
    pp_size: int = flag(parse_as=str, neutral=1)
    nnodes: int = flag(parse_as=str, neutral=1)
    kv_cache_dtype: str = flag(parse_as=str, neutral="auto")
    # CUDA graphs (graphs.py), read as SGLang reads them; on CPU they are planned, not captured.
    cuda_graph_max_bs: int | None = flag(
        "--cuda-graph-max-bs",
        default=None,
        lowest=1,
        help="Largest batch size captured in a CUDA graph (earlier releases' spelling of --cuda-graph-max-bs-decode).",
        source="SGLang before 0.5.2x (0.5.23's parser refuses it as ambiguous); the runtime reads it as --cuda-graph-max-bs-decode",
    )
    cuda_graph_max_bs_decode: int | None = flag(lowest=1)
    disable_cuda_graph: bool = flag()
    disable_cuda_graph_padding: bool = flag()
    scheduler: str = flag(
        "--scheduler",
        default="batched",
        choices=("batched", "queued"),
        help="the reference runtime's own (SGLang has no such flag): batched (default) or queued",
        source="the reference runtime's own flag",
    )
    ignored_flags: list[str] = field(default_factory=list)

    def public_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("ignored_flags")
        if out.get("api_key"):
            out["api_key"] = "***"
        return out


def runtime_flags() -> list[tuple[dataclasses.Field[Any], dict[str, Any]]]:
    """Every :class:`ServerArgs` field that is a flag, with its resolved flag metadata."""
    return [(f, f.metadata["flag"]) for f in dataclasses.fields(ServerArgs) if "flag" in f.metadata]


#: flag (every spelling) -> does it take a value
SUPPORTED_FLAGS: dict[str, bool] = {
    option: f.type != "bool" for f, meta in runtime_flags() for option in meta["option_strings"]
}

#: GPU tuning flags: accepted, warned about, ignored. flag -> takes a value
GPU_ONLY_IGNORED_FLAGS: dict[str, bool] = {
    "--mem-fraction-static": True,
    "--cuda-graph-bs": True,
    "--cuda-graph-bs-decode": True,
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

#: flags whose meaning the runtime cannot honour, whatever their value
REFUSED_FLAGS: frozenset[str] = frozenset(
    {
        "--quantization",
        "--lora-paths",
        "--enable-lora",
        "--speculative-token-map",
        "--speculative-ngram-external-corpus-path",
        "--speculative-ngram-external-sam-budget",
        "--speculative-ngram-external-corpus-max-tokens",
        "--dist-init-addr",
    }
)


@dataclass
class ParsedFlags:
    args: ServerArgs
    warnings: list[str]


class _ArgumentError(Exception):
    pass


class _RaisingParser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _ArgumentError(message)


_PARSE_TYPES: dict[str, type] = {"int": int, "float": float, "str": str}


def _parser() -> argparse.ArgumentParser:
    """The parser, one argument per :class:`ServerArgs` flag field."""
    p = _RaisingParser(
        prog="python -m specguard.runtime",
        description="specguard's reference runtime: SGLang-compatible speculative decoding on CPU or CUDA",
        allow_abbrev=False,
    )
    hints = typing.get_type_hints(ServerArgs)
    for f, meta in runtime_flags():
        options = {"dest": f.name, "help": meta["help"], "required": meta["required"]}
        if hints[f.name] is bool:
            p.add_argument(*meta["option_strings"], action="store_true", **options)
            continue
        # ``int | None`` reads as int: the None is "not given"
        declared = next(t for t in typing.get_args(hints[f.name]) or (hints[f.name],) if t is not type(None))
        options.update(default=f.default, choices=meta["choices"], type=meta["parse_as"] or declared)
        p.add_argument(*meta["option_strings"], **options)
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
    values = vars(ns)
    for f, meta in runtime_flags():
        neutral = meta["neutral"]
        if neutral is not None and str(values[f.name]) != str(neutral):
            flag_name = meta["option_strings"][0]
            raise RuntimeInputError(
                f"{flag_name} {values[f.name]}: the reference runtime runs on one device only (it accepts "
                f"{flag_name} {neutral}); serve this configuration with SGLang"
            )
        if neutral is not None:
            values[f.name] = neutral
    given = ServerArgs(**values, ignored_flags=gpu + unknown)
    warnings = [f"{flag}: GPU-only tuning flag, ignored by the reference runtime" for flag in gpu]
    warnings += [f"{flag}: unknown flag, ignored by the reference runtime" for flag in unknown]
    check_ranges(given)
    args = resolve_speculative(given)
    return ParsedFlags(args, warnings + speculative_warnings(given, args))


def check_ranges(args: ServerArgs) -> None:
    """Flag values no server could run, refused before anything loads."""
    for f, meta in runtime_flags():
        lowest, highest = meta["lowest"], meta["highest"]
        value = getattr(args, f.name)
        if value is None or (lowest is None and highest is None):
            continue
        if (lowest is not None and value < lowest) or (highest is not None and value > highest):
            allowed = f"from {lowest} to {highest}" if highest is not None else f"at least {lowest}"
            raise RuntimeInputError(f"{meta['option_strings'][0]} {value}: must be {allowed}")


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


@dataclass(frozen=True)
class RoundLimit:
    """A speculative round no server could run: ``value`` past ``limit``."""

    bound: typing.Literal["context", "vocab"]  # the round's tokens past the context length, or a top-k past the vocabulary
    value: int
    limit: int


def round_limit(steps: int, topk: int, ndt: int, *, context: int | None, vocab: int | None) -> RoundLimit | None:
    """The bound a round of ``steps``/``topk``/``ndt`` breaks (None: it fits), for the server and for
    ``specguard accept`` alike: a round's draft tokens must fit the context, and a top-k wider than
    the vocabulary cannot be drafted (torch.topk would fail mid-request). Pass ``topk`` 1 for NGRAM,
    whose breadth walks its trie, not the vocabulary."""
    round_tokens = max(steps + 1, ndt)  # a chain's steps and its root, or a tree's draft tokens
    if context is not None and round_tokens > context:
        return RoundLimit("context", round_tokens, context)
    if vocab is not None and topk > vocab:
        return RoundLimit("vocab", topk, vocab)
    return None


def _check_round_fits(args: ServerArgs, steps: int, topk: int, ndt: int) -> None:
    """Absurd steps/topk are refused before any weight loads (:func:`round_limit`)."""
    config = _target_config(args.model_path)
    context = args.context_length or _positive_int(config.get("max_position_embeddings"))
    limit = round_limit(steps, topk, ndt, context=context, vocab=_positive_int(config.get("vocab_size")))
    if limit is None:
        return
    if limit.bound == "context":
        raise RuntimeInputError(
            f"--speculative-num-steps {steps} / --speculative-num-draft-tokens {ndt}: a speculative round of "
            f"{limit.value} tokens does not fit the context length {limit.limit}"
        )
    raise RuntimeInputError(f"--speculative-eagle-topk {topk}: more than the target's {limit.limit} tokens")


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


def resolve_speculative(given: ServerArgs) -> ServerArgs:
    """SGLang's resolution of the speculative arguments: check what was given, fill the
    defaults, check what resolved. Returns new arguments; ``given`` is left as it was."""
    if given.speculative_algorithm is None:
        return given
    check_given_speculative(given)
    resolved = default_speculative(given)
    check_resolved_speculative(resolved)
    return resolved


def check_given_speculative(given: ServerArgs) -> None:
    """Refuse what no default can repair: the algorithm, lossy thresholds, a missing or wrong draft."""
    assert given.speculative_algorithm is not None
    algo = given.speculative_algorithm.upper()
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
    if given.speculative_accept_threshold_single != 1.0 or given.speculative_accept_threshold_acc != 1.0:
        raise RuntimeInputError(
            "--speculative-accept-threshold-single/-acc other than 1.0 make decoding lossy; "
            "the reference runtime only does lossless verification"
        )
    if algo == "NGRAM":
        if (
            given.speculative_ngram_min_bfs_breadth < 1
            or given.speculative_ngram_max_bfs_breadth < given.speculative_ngram_min_bfs_breadth
        ):
            raise RuntimeInputError(
                "--speculative-ngram-max-bfs-breadth must be >= --speculative-ngram-min-bfs-breadth >= 1"
            )
        if given.speculative_ngram_max_trie_depth < 2:
            raise RuntimeInputError("--speculative-ngram-max-trie-depth must be at least 2")
        return
    if not given.speculative_draft_model_path:
        raise RuntimeInputError(f"--speculative-algorithm {algo} needs --speculative-draft-model-path")
    if algo in EAGLE_HEAD_ALGORITHMS:
        refusal = eagle_head_refusal(algo, given.speculative_draft_model_path)
        if refusal:
            raise RuntimeInputError(refusal)
    if given.speculative_num_steps is None and (
        given.speculative_eagle_topk is not None or given.speculative_num_draft_tokens is not None
    ):
        raise RuntimeInputError(
            "--speculative-eagle-topk/--speculative-num-draft-tokens need --speculative-num-steps as well"
        )


def _auto_spec_params(algo: str, model_path: str) -> SpecParams:
    """SGLang's auto (steps, topk, draft tokens) as the release the runtime speaks chooses them;
    an unreadable architecture gets that release's choice for any other model (the chain)."""
    chosen = auto_params_at(Version(SGLANG_FLAGS_VERSION), algo, _target_architecture(model_path))
    return chosen if chosen is not None else AUTO_PARAMS_CHAIN


def default_speculative(given: ServerArgs) -> ServerArgs:
    """The arguments with SGLang's speculative defaults and rewrites applied (no checks, no warnings)."""
    assert given.speculative_algorithm is not None
    algo = given.speculative_algorithm.upper()
    args = dataclasses.replace(given, speculative_algorithm=algo, ignored_flags=list(given.ignored_flags))
    if args.max_running_requests is None:
        args.max_running_requests = SPEC_MAX_RUNNING_REQUESTS
    if algo == "NGRAM":
        args.speculative_draft_model_path = None
        args.speculative_eagle_topk = args.speculative_ngram_max_bfs_breadth
        if args.speculative_num_draft_tokens is None:
            args.speculative_num_draft_tokens = NGRAM_DEFAULT_DRAFT_TOKENS
        args.speculative_num_steps = max(1, args.speculative_num_draft_tokens // args.speculative_eagle_topk)
        return args
    steps, topk, ndt = args.speculative_num_steps, args.speculative_eagle_topk, args.speculative_num_draft_tokens
    if steps is None:
        auto = _auto_spec_params(algo, args.model_path)
        steps, topk, ndt = auto.num_steps, auto.eagle_topk, auto.num_draft_tokens
    if topk is None:
        topk = 1
    if topk == 1:  # a chain: SGLang rewrites the draft tokens to match the steps
        ndt = steps + 1
    args.speculative_num_steps, args.speculative_eagle_topk, args.speculative_num_draft_tokens = steps, topk, ndt
    return args


def check_resolved_speculative(args: ServerArgs) -> None:
    """Refuse resolved parameters no round can run: out of range, past the tree's capacity, past the context."""
    steps, topk, ndt = args.speculative_num_steps, args.speculative_eagle_topk, args.speculative_num_draft_tokens
    assert steps is not None and topk is not None, "default_speculative fills them"
    if args.speculative_algorithm == "NGRAM":
        assert ndt is not None
        if ndt < 2:
            raise RuntimeInputError("--speculative-num-draft-tokens must be at least 2")
        # NGRAM's breadth walks its trie, not the vocabulary: only the round's length is bounded.
        _check_round_fits(args, steps, 1, ndt)
        return
    if steps < 1 or topk < 1:
        raise RuntimeInputError("--speculative-num-steps and --speculative-eagle-topk must be at least 1")
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


def speculative_warnings(given: ServerArgs, resolved: ServerArgs) -> list[str]:
    """The warnings SGLang logs while resolving, read off what the resolution changed."""
    if resolved.speculative_algorithm is None:
        return []
    warnings = []
    if given.max_running_requests is None:
        warnings.append(WARN_MAX_RUNNING)
    if resolved.speculative_algorithm == "NGRAM":
        if given.speculative_draft_model_path:
            warnings.append(WARN_NGRAM_DRAFT_PATH)
        if given.speculative_num_draft_tokens is None:
            warnings.append(WARN_NGRAM_DRAFT_TOKENS)
    elif given.speculative_num_draft_tokens not in (None, resolved.speculative_num_draft_tokens):
        warnings.append(WARN_CHAIN_DRAFT_TOKENS)  # only a chain's draft tokens are rewritten
    return warnings
