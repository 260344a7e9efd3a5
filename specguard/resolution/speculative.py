"""The speculative parameters SGLang runs with: the draft path, steps / topk / draft tokens (auto,
adaptive, NGRAM's and DFLASH's own), and the max running requests it resets for speculation.

Each step records in ``set_by`` the values it changed and why, in SGLang's order."""

from __future__ import annotations

from packaging.version import Version

from specguard.dialects import _spelling
from specguard.models import Environment, ModelFacts
from specguard.resolution.common import (
    MAX_RUNNING_REQUESTS_RESET_ALGORITHMS,
)
from specguard.resolution.overlap import overlap_forced_off
from specguard.resolution.parallel import attention_dp_size
from specguard.serverargs_defaults import defaults_at
from specguard.sglang_facts.algorithms import (
    ADAPTIVE_ALGORITHMS,
    EAGLE_WORKER_SPELLINGS,
)
from specguard.sglang_facts.changes import (
    ADAPTIVE_PARAMS_BEFORE_AUTO,
    ADAPTIVE_WITH_OVERLAP,
    AUTO_SPEC_PARAMS,
    DSPARK_PARAMS,
    as_of,
)
from specguard.sglang_facts.defaults import (
    ADAPTIVE_DEFAULT_STEPS,
    DFLASH_DEFAULT_BLOCK_SIZE,
    DSPARK_DEFAULT_GAMMA,
    MAX_RUNNING_REQUESTS_FOR_SPEC_BY_RELEASE,
    NGRAM_DEFAULT_DRAFT_TOKENS,
    NGRAM_DEFAULT_MAX_BFS_BREADTH,
    SpecParams,
    auto_params_at,
)
from specguard.spec import LaunchSpec

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
        "Qwen4ExpForConditionalGeneration",
    }
)

# (steps, topk, draft tokens), each None while unset.
Params = tuple[int | None, int | None, int | None]
_PARAM_FIELDS = ("num_steps", "eagle_topk", "num_draft_tokens")


def auto_params(algorithm: str, target: ModelFacts | None, version: Version) -> SpecParams | None:
    """P14. None when the target's architecture is unknown (SGLang would read it from the config)
    or the release chooses nothing (see ``field_default_params``)."""
    return auto_params_at(version, algorithm, target.architecture if target is not None else None)


def field_default_params(version: Version) -> Params:
    """Before SGLang chose the parameters (0.4.4.post4) an unset one took its ServerArgs field
    default: (5, 8, 64) in 0.4.1.post5-0.4.3.post4, (5, 4, 8) in 0.4.4-0.4.4.post2."""
    fields = defaults_at(str(version)) or {}
    values = tuple(fields.get(f"speculative_{name}") for name in _PARAM_FIELDS)
    return tuple(value.value if value is not None and value.is_literal else None for value in values)  # type: ignore[return-value]


def draft_model_path(spec: LaunchSpec, algorithm: str | None, target: ModelFacts | None, set_by: dict[str, str]) -> str | None:
    """P25: an MTP target with no draft path drafts with its own MTP layers."""
    path = spec.get("speculative_draft_model_path")
    if path is None and algorithm in EAGLE_WORKER_SPELLINGS and target is not None and target.architecture in MTP_TARGET_ARCHITECTURES:
        set_by["draft_model_path"] = "MTP target: the draft is the target's own MTP layers"
        return spec.get("model_path")
    return path


def adaptive_decision(spec: LaunchSpec, algorithm: str | None, target: ModelFacts | None, env: Environment) -> tuple[bool | None, str | None]:
    """(runs, why not) for ``--speculative-adaptive``; (None, None) when it is not asked for."""
    if not spec.has("--speculative-adaptive"):
        return None, None
    topk = _topk_adaptive_sees(spec, algorithm, target, env.version)
    # Adaptive runs chains, so topk 1 is what the overlap scheduler would be judged with.
    overlap_off = bool(spec.get("disable_overlap_schedule")) or overlap_forced_off(spec, algorithm, 1, env)
    reason = adaptive_off_reason(spec, algorithm, topk, env, overlap_off=overlap_off)
    return reason is None, reason


def _topk_adaptive_sees(spec: LaunchSpec, algorithm: str | None, target: ModelFacts | None, version: Version) -> int | None:
    """The topk SGLang judges ``--speculative-adaptive`` with: the typed one, or, in releases that chose the
    automatic parameters first (before ``ADAPTIVE_PARAMS_BEFORE_AUTO``), the automatic one when none of the
    three is typed, so a Llama or Grok-1 target (a topk-4 tree) switched adaptive off."""
    typed = spec.get("speculative_eagle_topk")
    if ADAPTIVE_PARAMS_BEFORE_AUTO.present_in(version) or algorithm is None:
        return typed
    if any(spec.get(f"speculative_{field}") is not None for field in _PARAM_FIELDS):
        return typed
    auto = auto_params(algorithm, target, version)
    return auto.eagle_topk if auto is not None else typed


def adaptive_off_reason(spec: LaunchSpec, algorithm: str | None, topk: int | None, env: Environment, *, overlap_off: bool) -> str | None:
    """P55, decided once: why SGLang switches ``--speculative-adaptive`` off (it logs a warning and
    runs the static parameters), or None when it runs (sglang 0.5.23
    ``speculative/adaptive_spec_params.py:56-100`` ``adaptive_unsupported_reason``)."""
    if algorithm not in ADAPTIVE_ALGORITHMS:
        return f"it supports only EAGLE/EAGLE3, not {algorithm}"
    if topk is not None and topk != 1:
        return f"it supports only topk 1, not {topk}"
    if attention_dp_size(spec, env) > 1:
        return "it does not support attention DP"
    for flag in ("--enable-multi-layer-eagle", "--enable-two-batch-overlap", "--enable-pdmux"):
        if spec.has(flag):
            return f"it does not support {_spelling(flag, spec.dialect)}"
    if not ADAPTIVE_WITH_OVERLAP.present_in(env.version) and not overlap_off:
        return (
            f"in {env.version} it only runs on the V1 worker and the overlap scheduler (SpecV2, on by default) is on; "
            f"set SGLANG_ENABLE_SPEC_V2=0 or {_spelling('--disable-overlap-schedule', spec.dialect)}"
        )
    return None


def speculative_params(
    spec: LaunchSpec,
    algorithm: str | None,
    target: ModelFacts | None,
    draft: ModelFacts | None,
    adaptive: bool,
    set_by: dict[str, str],
    version: Version,
) -> Params:
    """Steps, topk and draft tokens after SGLang's rewrites for the algorithm."""
    typed: Params = (
        spec.get("speculative_num_steps"),
        spec.get("speculative_eagle_topk"),
        spec.get("speculative_num_draft_tokens"),
    )
    if adaptive:
        return _adaptive_params(typed, set_by)
    if algorithm in EAGLE_WORKER_SPELLINGS:
        return _eagle_params(typed, algorithm, target, version, set_by)
    if algorithm == "NGRAM":
        return _ngram_params(spec, typed, set_by)
    if algorithm == "DFLASH":
        return _dflash_params(spec, typed, draft, set_by)
    if algorithm == "DSPARK" and DSPARK_PARAMS.present_in(version):
        return _dspark_params(spec, typed, draft, set_by)
    return typed


def _adaptive_params(typed: Params, set_by: dict[str, str]) -> Params:
    """P55: adaptive speculative decoding runs a chain (topk 1, draft tokens = steps + 1)."""
    steps = typed[0] if typed[0] is not None else ADAPTIVE_DEFAULT_STEPS
    for field in _PARAM_FIELDS:
        set_by[field] = "adaptive speculative decoding runs a chain"
    return steps, 1, steps + 1


def _eagle_params(typed: Params, algorithm: str | None, target: ModelFacts | None, version: Version, set_by: dict[str, str]) -> Params:
    steps, topk, draft_tokens = typed
    if not AUTO_SPEC_PARAMS.present_in(version):
        defaults = field_default_params(version)
        for field, value, default in zip(_PARAM_FIELDS, typed, defaults, strict=True):
            if value is None and default is not None:
                set_by[field] = f"the ServerArgs default of {version}"
        steps, topk, draft_tokens = (default if value is None else value for value, default in zip(typed, defaults, strict=True))
    elif steps is None and topk is None and draft_tokens is None and algorithm is not None:
        auto = auto_params(algorithm, target, version)
        if auto is not None:
            steps, topk, draft_tokens = auto.num_steps, auto.eagle_topk, auto.num_draft_tokens
            chosen_for = "STANDALONE" if algorithm == "STANDALONE" else target.architecture if target else "?"
            for field in _PARAM_FIELDS:
                set_by[field] = f"auto-chosen for {chosen_for}"
    if topk == 1 and steps is not None and draft_tokens != steps + 1:
        draft_tokens = steps + 1
        set_by["num_draft_tokens"] = "topk 1 forces draft tokens = steps + 1"
    return steps, topk, draft_tokens


def _ngram_params(spec: LaunchSpec, typed: Params, set_by: dict[str, str]) -> Params:
    steps, topk, draft_tokens = typed
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
    return steps, topk, draft_tokens


def _dflash_params(spec: LaunchSpec, typed: Params, draft: ModelFacts | None, set_by: dict[str, str]) -> Params:
    steps, topk, draft_tokens = typed
    if steps != 1:
        set_by["num_steps"] = "DFLASH only supports one step"
    if topk != 1:
        set_by["eagle_topk"] = "DFLASH only supports topk 1"
    if draft_tokens is None:
        draft_tokens = spec.get("speculative_dflash_block_size") or (draft.block_size if draft and draft.block_size else None)
        if draft_tokens is None and (draft is None or draft.block_size is None):
            draft_tokens = DFLASH_DEFAULT_BLOCK_SIZE if draft is not None else None
        # With no draft config.json at hand the value cannot be known here: say how SGLang picks
        # it (speculative_hook.py:389-424: the draft config's block_size, else 16).
        set_by["num_draft_tokens"] = (
            "DFLASH block size (flag, draft config, or 16)"
            if draft_tokens is not None
            else "the block_size of the draft's config.json, which is not at hand here (16 if SGLang cannot read one)"
        )
    return 1, 1, draft_tokens


def _dspark_params(spec: LaunchSpec, typed: Params, draft: ModelFacts | None, set_by: dict[str, str]) -> Params:
    """DSPARK runs one step, topk 1, and verifies gamma + 1 tokens (0.5.16 speculative_hook.py:323-381,
    0.5.23 :757-839); a typed draft-token count other than gamma + 1 is refused (SP171)."""
    steps, topk, draft_tokens = typed
    if steps != 1:
        set_by["num_steps"] = "DSPARK only supports one step"
    if topk != 1:
        set_by["eagle_topk"] = "DSPARK only supports topk 1"
    gamma = _dspark_gamma(spec, draft, draft_tokens)
    if gamma is not None:
        if draft_tokens != gamma + 1:
            set_by["num_draft_tokens"] = "DSPARK verifies gamma + 1 tokens (--speculative-dspark-block-size, draft config, or 7)"
        draft_tokens = gamma + 1
    elif draft_tokens is None:
        set_by["num_draft_tokens"] = "gamma + 1, gamma from the draft's config.json, which is not at hand here (7 if it has none)"
    return 1, 1, draft_tokens


def _dspark_gamma(spec: LaunchSpec, draft: ModelFacts | None, typed_draft_tokens: int | None) -> int | None:
    """DSPARK's gamma: the block-size flag, else the draft config's block size, else 7 while the draft tokens
    are unset; None where only the runtime can know it (no draft config at hand, or a bundled draft whose
    ``dspark_block_size`` key is not read here) or where a non-positive flag makes SGLang refuse."""
    block = _typed_int(spec, "--speculative-dspark-block-size")
    if block is not None:
        return block if block > 0 else None
    if draft is None or draft.dspark_draft_bundled:
        return None
    if draft.block_size is not None:
        return draft.block_size
    return DSPARK_DEFAULT_GAMMA if typed_draft_tokens is None else None


def _typed_int(spec: LaunchSpec, flag: str) -> int | None:
    """An integer flag the flag table does not model; None when absent or not one integer."""
    item = spec.item(flag)
    if item is None or len(item.values) != 1:
        return None
    try:
        return int(item.values[0])
    except ValueError:
        return None


def max_running_requests(spec: LaunchSpec, algorithm: str | None, set_by: dict[str, str], version: Version) -> int | None:
    mrr = spec.get("max_running_requests")
    if mrr is None and algorithm in MAX_RUNNING_REQUESTS_RESET_ALGORITHMS:
        reset = as_of(MAX_RUNNING_REQUESTS_FOR_SPEC_BY_RELEASE, version, None)
        if reset is not None:
            set_by["max_running_requests"] = f"reset to {reset} for speculative decoding"
        return reset
    return mrr
