"""Gather what a check needs (flags, env vars, config.json facts, environment): the I/O edge."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from specguard.dialects import detect_dialect, launch_evidence, parse
from specguard.environment import build_environment, with_sgl_jax_build
from specguard.errors import InputError
from specguard.facts import load_facts
from specguard.flag_values import TABLE_VERSION, check_positionals
from specguard.hub import hub_unreachable
from specguard.models import Dialect, ModelFacts
from specguard.records import Record, replace
from specguard.rules.base import CheckContext
from specguard.sglang_facts.algorithms import MTP_DRAFT_SPELLINGS
from specguard.spec import RELEVANT_ENV_PREFIXES


class CheckInputs(Record, kw_only=False):
    server_args: Sequence[str]
    dialect: Dialect | None = None
    target: str | None = None
    draft: str | None = None
    sglang_version: str | None = None
    # Where the version came from when not from --sglang-version (e.g. "docker image tag").
    sglang_version_origin: str | None = None
    # sgl-jax launches: the build (a date, or a PyPI version, tag or commit specguard can date).
    sgl_jax_version: str | None = None
    # slime launches: the release or commit --slime-version named (its own flags differ by commit).
    slime_version: str | None = None
    gpu: str | None = None
    gpu_count: int | None = None
    env_overrides: Sequence[str] = ()
    offline: bool = False
    # Facts a preset states where no config.json is at hand (see presets): used as fallback.
    target_fallback: ModelFacts | None = None
    draft_fallback: ModelFacts | None = None
    preset_env: Mapping[str, str] | None = None
    # A launch read from text (a script written for another machine) names model paths that are
    # not at hand here: their facts are unknown, said in a note, instead of stopping the check.
    models_may_be_absent: bool = False
    # The roles ("target", "draft") the user named with --target/--draft: those always win over a
    # preset's snapshot and must exist.
    explicit_models: frozenset[str] = frozenset()


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


def gather(inputs: CheckInputs, environ: Mapping[str, str], notes: list[str] | None = None) -> CheckContext:
    """The check's context. ``notes`` collects what the report must say about facts left unknown."""
    env_pairs = relevant_process_env(environ)
    env_pairs += list((inputs.preset_env or {}).items())
    env_pairs += parse_env_overrides(inputs.env_overrides)
    argv, env = list(inputs.server_args), _dedupe(env_pairs)
    dialect = inputs.dialect or detect_dialect(argv)
    # The release first, from the launch's words; then the one parse, which reads an abbreviation
    # (--speculative-draft) as that release's own parser reads it.
    environment = build_environment(
        sglang_version=inputs.sglang_version, gpu=inputs.gpu, gpu_count=inputs.gpu_count,
        sglang_version_given_as=inputs.sglang_version_origin or "--sglang-version", evidence=launch_evidence(argv, dialect, env),
    )
    release = None if environment.sglang_version == TABLE_VERSION else environment.sglang_version
    spec = parse(argv, dialect, env=env, release=release)
    if inputs.sglang_version and inputs.sglang_version_origin:
        environment = replace(environment, sglang_version_origin=inputs.sglang_version_origin)
    if inputs.slime_version:
        environment = replace(environment, slime_version=inputs.slime_version)
    if spec.dialect is Dialect.SGL_JAX:
        environment = with_sgl_jax_build(environment, inputs.sgl_jax_version)
    elif inputs.sgl_jax_version:
        raise InputError(f"--sgl-jax-version {inputs.sgl_jax_version}: the launch is not an sgl-jax launch", hint="drop it, or give --dialect sgl-jax")
    # A value SGLang refuses is a finding (VB013); an argument no flag owns is unreadable input.
    check_positionals(spec)
    offline = inputs.offline or environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    absent_ok = notes if inputs.models_may_be_absent else None
    unreachable_before = hub_unreachable()  # a hub already found unreachable was noted with the first launch
    # An explicit --target/--draft always wins over a preset's snapshot, and must exist.
    explicit = inputs.explicit_models
    algorithm = (spec.get("speculative_algorithm") or "").upper()
    draft_ref = inputs.draft or spec.get("speculative_draft_model_path")
    # The target's headers matter only when its own MTP layers are the draft (DM104).
    target_weights = algorithm in MTP_DRAFT_SPELLINGS and not draft_ref
    target = _facts(
        inputs.target or spec.get("model_path"), spec.get("revision"), offline, "target",
        None if "target" in explicit else inputs.target_fallback, target_weights, None if "target" in explicit else absent_ok,
    )
    draft = None
    if algorithm and algorithm != "NGRAM":
        draft = _facts(
            draft_ref, spec.get("speculative_draft_model_revision"), offline, "draft",
            None if "draft" in explicit else inputs.draft_fallback, True, None if "draft" in explicit else absent_ok,
        )
    draft = _with_vocab_agreement(algorithm, target, draft)
    if notes is not None and unreachable_before is None:
        _note_unreachable_hub(notes)
    return CheckContext.build(spec, target, draft, environment)


def _with_vocab_agreement(algorithm: str, target: ModelFacts | None, draft: ModelFacts | None) -> ModelFacts | None:
    """A STANDALONE draft keeps its own embeddings and SGLang never loads its tokenizer, so a
    vocabulary of the target's size is only safe if its ids mean the same tokens (DM130): compare
    the two tokenizer.json files when both checkpoints are on this machine."""
    if algorithm != "STANDALONE" or target is None or draft is None or not (target.folder and draft.folder):
        return draft
    if target.vocab_size is None or target.vocab_size != draft.vocab_size:
        return draft
    from pathlib import Path

    from specguard.vocab import vocabulary_agreement

    agreement = vocabulary_agreement(Path(target.folder), Path(draft.folder))
    return draft if agreement is None else replace(draft, vocab_agreement=agreement)


def _note_unreachable_hub(notes: list[str]) -> None:
    why = hub_unreachable()
    if why is not None:
        notes.append(
            f"hub unreachable: {why}; this run read the Hugging Face cache and specguard's catalog "
            "instead, without asking again (--offline skips the attempt)"
        )


def _facts(
    reference: str | None,
    revision: str | None,
    offline: bool,
    role: str,
    fallback: ModelFacts | None,
    weights: bool,
    absent_notes: list[str] | None = None,
) -> ModelFacts | None:
    if reference is None:
        return fallback
    if absent_notes is not None:
        try:
            return _facts(reference, revision, offline, role, fallback, weights)
        except InputError as error:
            absent_notes.append(f"{error.one_line()}; the {role}'s config.json facts are unknown, so rules that need them stayed quiet (give --{role} DIR)")
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

