"""Gather what a check needs (flags, env vars, config.json facts, environment): the I/O edge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from specguard.dialects import parse
from specguard.environment import build_environment
from specguard.errors import InputError
from specguard.facts import load_facts
from specguard.models import Dialect, ModelFacts
from specguard.rules.base import CheckContext
from specguard.spec import RELEVANT_ENV_PREFIXES


@dataclass(frozen=True)
class CheckInputs:
    server_args: Sequence[str]
    dialect: Dialect | None = None
    target: str | None = None
    draft: str | None = None
    sglang_version: str | None = None
    gpu: str | None = None
    gpu_count: int | None = None
    env_overrides: Sequence[str] = ()
    offline: bool = False
    # Facts a preset states where no config.json is at hand (see presets): used as fallback.
    target_fallback: ModelFacts | None = None
    draft_fallback: ModelFacts | None = None
    preset_env: Mapping[str, str] | None = None


def parse_env_overrides(entries: Sequence[str]) -> list[tuple[str, str]]:
    pairs = []
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key or not key.replace("_", "").isalnum():
            raise InputError(f"--env {entry!r} is not KEY=VALUE", hint="write --env SGLANG_ENABLE_SPEC_V2=1")
        pairs.append((key, value))
    return pairs


def relevant_process_env(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in sorted(environ.items()) if k.startswith(RELEVANT_ENV_PREFIXES)]


def gather(inputs: CheckInputs, environ: Mapping[str, str]) -> CheckContext:
    env_pairs = relevant_process_env(environ)
    env_pairs += list((inputs.preset_env or {}).items())
    env_pairs += parse_env_overrides(inputs.env_overrides)
    spec = parse(list(inputs.server_args), inputs.dialect, env=_dedupe(env_pairs))
    offline = inputs.offline or environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    algorithm = (spec.get("speculative_algorithm") or "").upper()
    draft_ref = inputs.draft or spec.get("speculative_draft_model_path")
    # The target's headers matter only when its own MTP layers are the draft (DM104).
    target_weights = algorithm in ("EAGLE", "NEXTN") and not draft_ref
    target = _facts(inputs.target or spec.get("model_path"), spec.get("revision"), offline, "target", inputs.target_fallback, target_weights)
    draft = None
    if algorithm and algorithm != "NGRAM":
        draft = _facts(draft_ref, spec.get("speculative_draft_model_revision"), offline, "draft", inputs.draft_fallback, True)
    environment = build_environment(sglang_version=inputs.sglang_version, gpu=inputs.gpu, gpu_count=inputs.gpu_count)
    return CheckContext.build(spec, target, draft, environment)


def _facts(
    reference: str | None, revision: str | None, offline: bool, role: str, fallback: ModelFacts | None, weights: bool
) -> ModelFacts | None:
    if reference is None:
        return fallback
    if fallback is not None:
        # A preset's snapshot stands in unless the real model is at hand (locally or cached);
        # it is more specific than the catalog, which is not asked.
        try:
            return load_facts(reference, revision=revision, offline=True, role=role, weights=weights, catalog=False)
        except InputError:
            return fallback
    return load_facts(reference, revision=revision, offline=offline, role=role, weights=weights)


def _dedupe(pairs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    merged: dict[str, str] = {}
    for key, value in pairs:
        merged.pop(key, None)
        merged[key] = value
    return tuple(merged.items())

