"""Predict the speculative values SGLang will actually run with.

SGLang fills in and rewrites speculative settings during argument resolution
(``sglang/srt/arg_groups/speculative_hook.py`` in 0.5.23; ``server_args.py``
``_handle_speculative_decoding`` before the refactor). ``predict`` mirrors those steps as data,
each value with the step that set it, so ``check`` can show them before launch. The catalogue
IDs (P14, P17, ...) refer to ``shared/design/sglang-spec-checks.md``.
"""

from __future__ import annotations

from typing import Any

from packaging.version import Version
from pydantic import Field

from specguard.models import Dialect, Environment, Frozen, ModelFacts
from specguard.spec import LaunchSpec


class SpecParams(Frozen):
    num_steps: int
    eagle_topk: int
    num_draft_tokens: int


# P14: SGLang's auto-chosen (steps, topk, draft tokens) by the target's architectures[0]
# (``auto_choose_speculative_params``, speculative_hook.py:1430-1461). STANDALONE always gets
# the default row.
AUTO_PARAMS_DEFAULT = SpecParams(num_steps=3, eagle_topk=1, num_draft_tokens=4)
AUTO_PARAMS_BY_ARCHITECTURE: dict[str, SpecParams] = {
    "LlamaForCausalLM": SpecParams(num_steps=5, eagle_topk=4, num_draft_tokens=8),
    "Grok1ForCausalLM": SpecParams(num_steps=5, eagle_topk=4, num_draft_tokens=8),
    "Grok1VForCausalLM": SpecParams(num_steps=5, eagle_topk=4, num_draft_tokens=8),
}

# P25: targets whose MTP layers SGLang uses as the draft when no draft path is given.
MTP_TARGET_ARCHITECTURES = frozenset(
    {
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "DeepseekV4ForCausalLM",
        "Glm4MoeForCausalLM",
        "Glm4MoeLiteForCausalLM",
        "GlmMoeDsaForCausalLM",
        "BailingMoeForCausalLM",
        "BailingMoeV2ForCausalLM",
        "BailingMoeV2_5ForCausalLM",
        "MistralLarge3ForCausalLM",
        "PixtralForConditionalGeneration",
        "HYV3ForCausalLM",
        "HYV4ForCausalLM",
        "Qwen4ExpForCausalLM",
    }
)

EAGLE_FAMILY = frozenset({"EAGLE", "EAGLE3", "NEXTN", "STANDALONE"})
DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC = 48
NGRAM_DEFAULT_MAX_BFS_BREADTH = 10
NGRAM_DEFAULT_DRAFT_TOKENS = 12
DFLASH_DEFAULT_BLOCK_SIZE = 16


class Resolution(Frozen):
    """The values SGLang will run with; ``set_by`` names the resolution step for each one it sets."""

    algorithm: str | None = None
    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None
    draft_model_path: str | None = None
    max_running_requests: int | None = None
    attention_backend: str | None = None
    disable_overlap_schedule: bool | None = None
    enable_mixed_chunk: bool | None = None
    set_by: dict[str, str] = Field(default_factory=dict)

    def params(self) -> SpecParams | None:
        if None in (self.num_steps, self.eagle_topk, self.num_draft_tokens):
            return None
        return SpecParams(num_steps=self.num_steps, eagle_topk=self.eagle_topk, num_draft_tokens=self.num_draft_tokens)  # type: ignore[arg-type]


def canonical_algorithm(raw: str | None) -> str | None:
    """P05/P06: upper-cased, and NEXTN is EAGLE."""
    if raw is None:
        return None
    upper = raw.upper()
    return "EAGLE" if upper == "NEXTN" else upper


def auto_params(algorithm: str, target: ModelFacts | None) -> SpecParams | None:
    """P14. None when the target's architecture is unknown (SGLang would read it from the config)."""
    if algorithm == "STANDALONE":
        return AUTO_PARAMS_DEFAULT
    if target is None or target.architecture is None:
        return None
    return AUTO_PARAMS_BY_ARCHITECTURE.get(target.architecture, AUTO_PARAMS_DEFAULT)


def predict(spec: LaunchSpec, target: ModelFacts | None, draft: ModelFacts | None, env: Environment) -> Resolution:
    raw_algorithm = spec.get("speculative_algorithm")
    algorithm = canonical_algorithm(raw_algorithm)
    if algorithm is None:
        return Resolution()
    steps = spec.get("speculative_num_steps")
    topk = spec.get("speculative_eagle_topk")
    draft_tokens = spec.get("speculative_num_draft_tokens")
    set_by: dict[str, str] = {}
    values: dict[str, Any] = {"algorithm": algorithm}
    if algorithm != raw_algorithm:
        set_by["algorithm"] = "NEXTN is an alias of EAGLE"

    draft_path = spec.get("speculative_draft_model_path")
    if (
        draft_path is None
        and algorithm in ("EAGLE", "EAGLE3")
        and target is not None
        and target.architecture in MTP_TARGET_ARCHITECTURES
    ):
        draft_path = spec.get("model_path")
        set_by["draft_model_path"] = "MTP target: the draft is the target's own MTP layers"
    values["draft_model_path"] = draft_path

    adaptive = spec.has("--speculative-adaptive") and algorithm in ("EAGLE", "EAGLE3") and topk in (None, 1)
    if adaptive:
        # P55: adaptive speculation runs a chain from the middle candidate (3 of [0, 1, 3, 5, 7]).
        steps = steps if steps is not None else ADAPTIVE_DEFAULT_STEPS
        topk, draft_tokens = 1, steps + 1
        for field in ("num_steps", "eagle_topk", "num_draft_tokens"):
            set_by[field] = "adaptive speculative decoding runs a chain"
    elif algorithm in EAGLE_FAMILY:
        if steps is None and topk is None and draft_tokens is None:
            auto = auto_params(algorithm, target)
            if auto is not None:
                steps, topk, draft_tokens = auto.num_steps, auto.eagle_topk, auto.num_draft_tokens
                for field in ("num_steps", "eagle_topk", "num_draft_tokens"):
                    set_by[field] = f"auto-chosen for {'STANDALONE' if algorithm == 'STANDALONE' else target.architecture if target else '?'}"
        # sgl-jax has no such rewrite: it runs what it is given (design/dialects.md section 2).
        if topk == 1 and steps is not None and draft_tokens != steps + 1 and spec.dialect is not Dialect.SGL_JAX:
            draft_tokens = steps + 1
            set_by["num_draft_tokens"] = "topk 1 forces draft tokens = steps + 1"
    elif algorithm == "NGRAM":
        breadth = spec.get("speculative_ngram_max_bfs_breadth")
        breadth = NGRAM_DEFAULT_MAX_BFS_BREADTH if breadth is None else breadth
        if topk != breadth:
            set_by["eagle_topk"] = "NGRAM takes topk from --speculative-ngram-max-bfs-breadth"
        topk = breadth
        if draft_tokens is None:
            draft_tokens = NGRAM_DEFAULT_DRAFT_TOKENS
            set_by["num_draft_tokens"] = "NGRAM default"
        if steps is None:
            steps = draft_tokens // topk if topk else None
            set_by["num_steps"] = "NGRAM: draft tokens // topk"
    elif algorithm == "DFLASH":
        if steps != 1:
            set_by["num_steps"] = "DFLASH only supports one step"
        if topk != 1:
            set_by["eagle_topk"] = "DFLASH only supports topk 1"
        steps, topk = 1, 1
        block = spec.get("speculative_dflash_block_size")
        if draft_tokens is None:
            draft_tokens = block or (draft.block_size if draft and draft.block_size else None)
            if draft_tokens is None and (draft is None or draft.block_size is None):
                draft_tokens = DFLASH_DEFAULT_BLOCK_SIZE if draft is not None else None
            set_by["num_draft_tokens"] = "DFLASH block size (flag, draft config, or 16)"
    values.update(num_steps=steps, eagle_topk=topk, num_draft_tokens=draft_tokens)

    mrr = spec.get("max_running_requests")
    if mrr is None and algorithm in (EAGLE_FAMILY | {"NGRAM", "DFLASH", "DSPARK", "FROZEN_KV_MTP"}):
        mrr = DEFAULT_MAX_RUNNING_REQUESTS_FOR_SPEC
        set_by["max_running_requests"] = "reset to 48 for speculative decoding"
    values["max_running_requests"] = mrr

    mixed = spec.get("enable_mixed_chunk")
    if mixed and _mixed_chunk_unsupported(algorithm, env):
        mixed = False
        set_by["enable_mixed_chunk"] = f"{algorithm} does not support mixed chunked prefill"
    values["enable_mixed_chunk"] = mixed

    overlap_off = spec.get("disable_overlap_schedule")
    if not overlap_off and _overlap_forced_off(spec, algorithm, topk, env):
        overlap_off = True
        set_by["disable_overlap_schedule"] = "the overlap scheduler does not run this speculative configuration"
    values["disable_overlap_schedule"] = overlap_off

    values["attention_backend"] = spec.get("attention_backend")
    return Resolution(**values, set_by=set_by)


ADAPTIVE_DEFAULT_STEPS = 3

# SpecV2 (the overlap scheduler for speculative decoding), release by release, read from the
# wheels (``SGLANG_ENABLE_SPEC_V2`` in environ.py / server_args.py / speculative_hook.py):
#   <= 0.5.4    no V2: the EAGLE family always turns the overlap scheduler off
#   0.5.5-0.5.10  V2 behind SGLANG_ENABLE_SPEC_V2 (default off): EAGLE (0.5.5), EAGLE3 (0.5.7),
#                 STANDALONE (0.5.9)
#   0.5.11-0.5.12 default on; an explicit topk > 1 falls back to V1 (overlap off)
#   0.5.13      V2 always; the variable only chooses overlap
#   >= 0.5.14   the variable is gone (a warning until 0.5.20, no trace from 0.5.21)
SPEC_V2_SINCE = Version("0.5.5")
SPEC_V2_DEFAULT_ON_SINCE = Version("0.5.11")
SPEC_V2_ALWAYS_SINCE = Version("0.5.13")
SPEC_V2_VARIABLE_GONE_SINCE = Version("0.5.14")
# NGRAM kept the overlap scheduler off up to 0.5.13 (speculative_hook.py:427-430 there).
NGRAM_OVERLAP_SINCE = Version("0.5.14")
# ``supports_mixed_chunk`` arrived in 0.5.19; before it the EAGLE family and DFLASH turned it off.
MIXED_CHUNK_PER_ALGORITHM_SINCE = Version("0.5.19")


def spec_v2_algorithms(version: Version) -> frozenset[str]:
    if version >= Version("0.5.9"):
        return frozenset({"EAGLE", "EAGLE3", "STANDALONE"})
    if version >= Version("0.5.7"):
        return frozenset({"EAGLE", "EAGLE3"})
    return frozenset({"EAGLE"})


def _mixed_chunk_unsupported(algorithm: str, env: Environment) -> bool:
    if algorithm in ("STANDALONE", "NGRAM", "FROZEN_KV_MTP"):
        return True
    return env.version < MIXED_CHUNK_PER_ALGORITHM_SINCE and algorithm in (EAGLE_FAMILY | {"DFLASH"})


def _overlap_forced_off(spec: LaunchSpec, algorithm: str, topk: int | None, env: Environment) -> bool:
    """Whether SGLang turns the overlap scheduler off (P33, P34, and SpecV2's history above)."""
    if (spec.get("pp_size") or 1) > 1:
        return True
    if spec.get("device") == "cpu" and algorithm in (EAGLE_FAMILY | {"NGRAM"}):
        return True
    version = env.version
    if algorithm == "NGRAM":
        return version < NGRAM_OVERLAP_SINCE
    if algorithm not in EAGLE_FAMILY:
        return False
    if version >= SPEC_V2_VARIABLE_GONE_SINCE:
        return False
    variable = spec.env_value("SGLANG_ENABLE_SPEC_V2")
    if version >= SPEC_V2_ALWAYS_SINCE:
        return variable is not None and not spec.env_flag("SGLANG_ENABLE_SPEC_V2")
    if version < SPEC_V2_SINCE or algorithm not in spec_v2_algorithms(version):
        return True
    explicit_topk = spec.get("speculative_eagle_topk")
    if version >= SPEC_V2_DEFAULT_ON_SINCE:
        enabled = variable is None or spec.env_flag("SGLANG_ENABLE_SPEC_V2")
        return not enabled or (explicit_topk is not None and explicit_topk > 1)
    return not spec.env_flag("SGLANG_ENABLE_SPEC_V2")
