"""The one table of SGLang flags that specguard models, and how their values are typed.

Flags not in this table are still parsed (their arity comes from the table extracted from
SGLang's own parser, ``specguard/data/sglang-<version>-flags.json``, when present) and kept
verbatim, in order: specguard never drops what the user wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any

from specguard.records import Record, field_names
from specguard.sglang_facts.algorithms import (
    DOCUMENTED_ALGORITHMS,
    PASSED_THROUGH_ALGORITHMS,
)
from specguard.sglang_facts.releases import NEWEST_KNOWN_SGLANG


class ValueKind(StrEnum):
    INT = "int"
    FLOAT = "float"
    STR = "str"
    SWITCH = "switch"  # store_true: present means True
    INT_LIST = "int-list"
    STR_LIST = "str-list"


class FlagSpec(Record):
    flag: str
    dest: str
    kind: ValueKind
    aliases: tuple[str, ...] = ()
    choices: tuple[str, ...] | None = None
    # Choices compared case-insensitively and normalised to upper case (SGLang upper-cases them).
    upper_case: bool = False


SPECULATIVE_ALGORITHMS = DOCUMENTED_ALGORITHMS

# SGLang accepts more algorithm names than the six the docs describe; these exist in 0.5.23
# (``speculative/spec_info.py``) and are passed through with fewer checks.
EXTRA_SGLANG_ALGORITHMS = PASSED_THROUGH_ALGORITHMS

_S = ValueKind

MODELED_FLAGS: tuple[FlagSpec, ...] = (
    FlagSpec(flag="--model-path", dest="model_path", kind=_S.STR, aliases=("--model",)),
    FlagSpec(flag="--revision", dest="revision", kind=_S.STR),
    FlagSpec(flag="--tokenizer-path", dest="tokenizer_path", kind=_S.STR),
    FlagSpec(flag="--trust-remote-code", dest="trust_remote_code", kind=_S.SWITCH),
    FlagSpec(flag="--host", dest="host", kind=_S.STR),
    FlagSpec(flag="--port", dest="port", kind=_S.INT),
    FlagSpec(flag="--device", dest="device", kind=_S.STR),
    FlagSpec(flag="--dtype", dest="dtype", kind=_S.STR),
    FlagSpec(flag="--kv-cache-dtype", dest="kv_cache_dtype", kind=_S.STR),
    FlagSpec(flag="--quantization", dest="quantization", kind=_S.STR),
    FlagSpec(flag="--context-length", dest="context_length", kind=_S.INT),
    FlagSpec(
        flag="--speculative-algorithm",
        dest="speculative_algorithm",
        kind=_S.STR,
        choices=SPECULATIVE_ALGORITHMS + EXTRA_SGLANG_ALGORITHMS,
        upper_case=True,
    ),
    FlagSpec(
        flag="--speculative-draft-model-path",
        dest="speculative_draft_model_path",
        kind=_S.STR,
        aliases=("--speculative-draft-model",),
    ),
    FlagSpec(
        flag="--speculative-draft-model-revision",
        dest="speculative_draft_model_revision",
        kind=_S.STR,
    ),
    FlagSpec(flag="--speculative-num-steps", dest="speculative_num_steps", kind=_S.INT),
    FlagSpec(flag="--speculative-eagle-topk", dest="speculative_eagle_topk", kind=_S.INT),
    FlagSpec(
        flag="--speculative-num-draft-tokens", dest="speculative_num_draft_tokens", kind=_S.INT
    ),
    FlagSpec(flag="--speculative-token-map", dest="speculative_token_map", kind=_S.STR),
    FlagSpec(
        flag="--speculative-draft-attention-backend",
        dest="speculative_draft_attention_backend",
        kind=_S.STR,
    ),
    FlagSpec(
        flag="--speculative-accept-threshold-single",
        dest="speculative_accept_threshold_single",
        kind=_S.FLOAT,
    ),
    FlagSpec(
        flag="--speculative-accept-threshold-acc",
        dest="speculative_accept_threshold_acc",
        kind=_S.FLOAT,
    ),
    FlagSpec(
        flag="--speculative-ngram-max-bfs-breadth",
        dest="speculative_ngram_max_bfs_breadth",
        kind=_S.INT,
    ),
    FlagSpec(
        flag="--speculative-ngram-min-bfs-breadth",
        dest="speculative_ngram_min_bfs_breadth",
        kind=_S.INT,
    ),
    FlagSpec(
        flag="--speculative-ngram-max-trie-depth",
        dest="speculative_ngram_max_trie_depth",
        kind=_S.INT,
    ),
    FlagSpec(
        flag="--speculative-dflash-block-size", dest="speculative_dflash_block_size", kind=_S.INT
    ),
    FlagSpec(
        flag="--speculative-draft-window-size",
        dest="speculative_draft_window_size",
        kind=_S.INT,
        aliases=("--speculative-dflash-draft-window-size",),
    ),
    FlagSpec(
        flag="--speculative-use-rejection-sampling",
        dest="speculative_use_rejection_sampling",
        kind=_S.SWITCH,
    ),
    FlagSpec(flag="--attention-backend", dest="attention_backend", kind=_S.STR),
    FlagSpec(flag="--prefill-attention-backend", dest="prefill_attention_backend", kind=_S.STR),
    FlagSpec(flag="--decode-attention-backend", dest="decode_attention_backend", kind=_S.STR),
    FlagSpec(flag="--page-size", dest="page_size", kind=_S.INT),
    FlagSpec(flag="--mem-fraction-static", dest="mem_fraction_static", kind=_S.FLOAT,
             aliases=("--mem-fraction",)),
    FlagSpec(flag="--max-running-requests", dest="max_running_requests", kind=_S.INT),
    FlagSpec(flag="--max-total-tokens", dest="max_total_tokens", kind=_S.INT),
    FlagSpec(flag="--chunked-prefill-size", dest="chunked_prefill_size", kind=_S.INT),
    FlagSpec(flag="--max-prefill-tokens", dest="max_prefill_tokens", kind=_S.INT),
    FlagSpec(flag="--cuda-graph-bs", dest="cuda_graph_bs", kind=_S.INT_LIST),
    FlagSpec(flag="--cuda-graph-max-bs", dest="cuda_graph_max_bs", kind=_S.INT),
    FlagSpec(flag="--cuda-graph-max-bs-decode", dest="cuda_graph_max_bs_decode", kind=_S.INT),
    FlagSpec(flag="--cuda-graph-bs-decode", dest="cuda_graph_bs_decode", kind=_S.INT_LIST),
    FlagSpec(flag="--disable-cuda-graph", dest="disable_cuda_graph", kind=_S.SWITCH),
    FlagSpec(
        flag="--disable-cuda-graph-padding", dest="disable_cuda_graph_padding", kind=_S.SWITCH
    ),
    FlagSpec(flag="--enable-torch-compile", dest="enable_torch_compile", kind=_S.SWITCH),
    FlagSpec(flag="--disable-overlap-schedule", dest="disable_overlap_schedule", kind=_S.SWITCH),
    FlagSpec(flag="--enable-mixed-chunk", dest="enable_mixed_chunk", kind=_S.SWITCH),
    FlagSpec(flag="--enable-dp-attention", dest="enable_dp_attention", kind=_S.SWITCH),
    FlagSpec(flag="--enable-dp-lm-head", dest="enable_dp_lm_head", kind=_S.SWITCH),
    FlagSpec(flag="--attn-dp-size", dest="attn_dp_size", kind=_S.INT),
    FlagSpec(flag="--tp-size", dest="tp_size", kind=_S.INT, aliases=("--tp", "--tensor-parallel-size")),
    FlagSpec(flag="--dp-size", dest="dp_size", kind=_S.INT, aliases=("--dp",)),
    FlagSpec(flag="--pp-size", dest="pp_size", kind=_S.INT, aliases=("--pp",)),
    FlagSpec(flag="--ep-size", dest="ep_size", kind=_S.INT, aliases=("--ep",)),
    FlagSpec(flag="--nnodes", dest="nnodes", kind=_S.INT),
    FlagSpec(flag="--node-rank", dest="node_rank", kind=_S.INT),
    FlagSpec(flag="--dist-init-addr", dest="dist_init_addr", kind=_S.STR),
    FlagSpec(flag="--disaggregation-mode", dest="disaggregation_mode", kind=_S.STR),
    FlagSpec(flag="--lora-paths", dest="lora_paths", kind=_S.STR_LIST),
    FlagSpec(flag="--api-key", dest="api_key", kind=_S.STR),
    FlagSpec(flag="--served-model-name", dest="served_model_name", kind=_S.STR),
    FlagSpec(flag="--log-level", dest="log_level", kind=_S.STR),
    FlagSpec(flag="--random-seed", dest="random_seed", kind=_S.INT),
    FlagSpec(flag="--enable-metrics", dest="enable_metrics", kind=_S.SWITCH),
)

FLAGS_BY_DEST: dict[str, FlagSpec] = {spec.dest: spec for spec in MODELED_FLAGS}
FLAGS_BY_NAME: dict[str, FlagSpec] = {
    name: spec for spec in MODELED_FLAGS for name in (spec.flag, *spec.aliases)
}

class ExtractedFlag(Record):
    """One argument of SGLang's own parser, as ``scripts/sglang_env/extract_flags.py`` dumped it."""

    option_strings: tuple[str, ...]
    dest: str
    nargs: int | str | None = None
    action: str | None = None
    type: str | None = None  # the name of argparse's type callable: int, float, str, human_readable_int, json, ...
    choices: tuple[str | int | float, ...] | None = None

    @classmethod
    def from_dump(cls, raw: dict[str, Any]) -> ExtractedFlag:
        """An entry of the dumped table; keys the dump has beyond these are not used."""
        return cls(**{name: raw[name] for name in _EXTRACTED_FIELDS if name in raw})


_EXTRACTED_FIELDS = field_names(ExtractedFlag)


@cache
def extracted_flags(version: str = NEWEST_KNOWN_SGLANG) -> Mapping[str, ExtractedFlag]:
    """SGLang's real flag table for ``version``, keyed by every option string; empty if not shipped."""
    # A plain path next to this module: the table ships as package data, and importlib.resources
    # would cost the check path a few milliseconds of imports for the same file.
    path = Path(__file__).with_name("data") / f"sglang-{version}-flags.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    return _FlagTable({option: raw for raw in json.loads(text).get("flags", []) for option in raw["option_strings"]})


class _FlagTable(Mapping[str, ExtractedFlag]):
    """The parsed table, each entry made an ``ExtractedFlag`` when first asked for: a check asks
    for the few flags of its launch, and building all 560 records cost it about 7 ms."""

    def __init__(self, raw: dict[str, dict[str, Any]]) -> None:
        self._raw = raw
        self._made: dict[int, ExtractedFlag] = {}  # by the raw entry's id: an argument's option strings share one record

    def __getitem__(self, option: str) -> ExtractedFlag:
        raw = self._raw[option]
        made = self._made.get(id(raw))
        if made is None:
            made = self._made[id(raw)] = ExtractedFlag.from_dump(raw)
        return made

    def __contains__(self, option: object) -> bool:
        return option in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

