"""What sgl-jax runs with (design dialects.md section 2): its plain field defaults
(``sglang_facts.defaults``), no choice by architecture, no topk-1 rewrite, NEXTN kept as its own
name. It raises on the overlap scheduler instead of turning it off (JX002), and its
max-running-requests default is not read here."""

from __future__ import annotations

from typing import Any

from specguard.records import as_dict
from specguard.resolution.result import Resolution
from specguard.sglang_facts.defaults import (
    SGL_JAX_DEFAULT_ATTENTION_BACKEND,
    SGL_JAX_DEFAULT_PARAMS,
)
from specguard.spec import LaunchSpec

_PARAM_DESTS = (
    ("num_steps", "speculative_num_steps"),
    ("eagle_topk", "speculative_eagle_topk"),
    ("num_draft_tokens", "speculative_num_draft_tokens"),
)


def resolve_sgl_jax(spec: LaunchSpec) -> Resolution:
    set_by: dict[str, str] = {}
    values: dict[str, Any] = {"algorithm": spec.get("speculative_algorithm").upper()}
    defaults = as_dict(SGL_JAX_DEFAULT_PARAMS)
    for field, dest in _PARAM_DESTS:
        value = spec.get(dest)
        if value is None:
            value = defaults[field]
            set_by[field] = "sgl-jax default"
        values[field] = value
    values["draft_model_path"] = spec.get("speculative_draft_model_path")
    values["max_running_requests"] = spec.get("max_running_requests")
    values["enable_mixed_chunk"] = spec.get("enable_mixed_chunk")
    values["disable_overlap_schedule"] = spec.get("disable_overlap_schedule")
    backend = spec.get("attention_backend")
    if backend is None:
        backend = SGL_JAX_DEFAULT_ATTENTION_BACKEND
        set_by["attention_backend"] = "sgl-jax default"
    values["attention_backend"] = backend
    values["page_size"] = spec.get("page_size") or 1
    return Resolution(**values, set_by=set_by)
