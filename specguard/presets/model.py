"""The preset schema (design/architecture.md section 7): what a preset YAML may say, and nothing else.

A preset is untrusted input: ``validation.read_record`` refuses unknown keys, values of another
type and values out of their bounds, then runs each record's ``check()``; every string that names
a file is checked by the loader before anything is read.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Literal

from specguard.frozen import Field, Frozen
from specguard.models import Dialect
from specguard.validation import FieldError

PRESET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
FLAG_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
RULE_CODE = re.compile(r"^[A-Z]{2}\d{3}$")

FlagScalar = str | int | float | bool
FlagValue = FlagScalar | list[str | int | float]


class Runtime(StrEnum):
    SGLANG = "sglang"
    SGL_JAX = "sgl-jax"
    REFERENCE = "reference"


class StatedFacts(Frozen):
    """Facts about a model whose config.json is not at hand, each backed by ``source``.

    The keys are a subset of ``ModelFacts``; a fact the sources do not back is left out.
    """

    architectures: list[str] | None = None
    model_type: str | None = None
    dtype: Literal["float16", "bfloat16", "float32"] | None = None
    dtype_key: Literal["dtype", "torch_dtype"] | None = None
    max_position_embeddings: int | None = Field(default=None, gt=0)
    vocab_size: int | None = Field(default=None, gt=0)
    draft_vocab_size: int | None = Field(default=None, gt=0)
    hidden_size: int | None = Field(default=None, gt=0)
    intermediate_size: int | None = Field(default=None, gt=0)
    num_hidden_layers: int | None = Field(default=None, gt=0)
    num_attention_heads: int | None = Field(default=None, gt=0)
    num_key_value_heads: int | None = Field(default=None, gt=0)
    num_nextn_predict_layers: int | None = Field(default=None, ge=0)
    tie_word_embeddings: bool | None = None
    rope_theta: float | None = None
    eagle_aux_hidden_state_layer_ids: list[int] | None = None
    block_size: int | None = Field(default=None, gt=0)
    num_experts: int | None = Field(default=None, gt=0)
    num_experts_per_tok: int | None = Field(default=None, gt=0)
    moe_intermediate_size: int | None = Field(default=None, gt=0)

    def as_model_facts_kwargs(self) -> dict[str, Any]:
        stated = self.model_dump(exclude_none=True)
        for key in ("architectures", "eagle_aux_hidden_state_layer_ids"):
            if key in stated:
                stated[key] = tuple(stated[key])
        return stated


class ModelRef(Frozen):
    """A target or draft: its id, and either a config.json snapshot or the facts its sources back."""

    model: str = Field(min_length=1, max_length=256, description="HF repo id, local path, or tiny:target|tiny:draft|tiny:eagle3")
    revision: str | None = Field(default=None, max_length=64)
    config: str | None = Field(default=None, max_length=256, description="snapshot path, relative to the preset file")
    config_source: str | None = Field(default=None, max_length=1000, description="where the snapshot came from")
    facts: StatedFacts | None = None
    facts_source: str | None = Field(default=None, max_length=2000, description="what backs each stated fact")

    def check(self) -> None:
        if self.config is not None and self.facts is not None:
            raise ValueError("give either config (a real config.json snapshot) or facts, not both")
        if self.config is not None and not self.config_source:
            raise ValueError("a config snapshot needs config_source (where the real file came from)")
        if self.facts is not None and not self.facts_source:
            raise ValueError("stated facts need facts_source (what backs them)")


class Hardware(Frozen):
    gpu: str | None = Field(default=None, max_length=64)
    count: int | None = Field(default=None, ge=1, le=4096)


class Handled(Frozen):
    """A problem the source's own flags take care of: shown by ``check`` as handled, not hidden."""

    rule: str = Field(description="the rule code that would fire without the flag")
    flag: str = Field(description="the flag, as written under flags:, that handles it")
    note: str | None = Field(default=None, max_length=1000)

    def check(self) -> None:
        if not RULE_CODE.match(self.rule):
            raise FieldError("rule", f"{self.rule!r} is not a rule code like DM001")


class Preset(Frozen):
    name: str
    description: str = Field(max_length=2000)
    sources: list[str] = Field(min_length=1, max_length=32)
    runtime: Runtime
    dialect: Dialect | None = Field(default=None, description="how flags: is spelled; default: the runtime's")
    renders: list[Dialect] | None = Field(default=None, description="dialects this preset renders to; default: its own")
    target: ModelRef
    draft: ModelRef | None = None
    flags: dict[str, FlagValue | None] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    hardware: Hardware = Field(default_factory=Hardware)
    sglang_version: str | None = Field(default=None, max_length=32)
    handles: list[Handled] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def check(self) -> None:
        if not PRESET_NAME.match(self.name):
            raise FieldError("name", "a preset name is lower-case letters, digits, '.', '_' and '-' (at most 64)")
        for key in self.flags:
            if not FLAG_KEY.match(key):
                raise FieldError("flags", f"flag {key!r}: write flags without the leading '--', e.g. speculative-num-steps")
        for key in self.env:
            if not ENV_KEY.match(key):
                raise FieldError("env", f"env var {key!r} is not a valid name")
        for handled in self.handles:
            if handled.flag not in self.flags:
                raise ValueError(f"handles: {handled.flag!r} is not one of this preset's flags")

    @property
    def flag_dialect(self) -> Dialect:
        if self.dialect is not None:
            return self.dialect
        return Dialect.SGL_JAX if self.runtime is Runtime.SGL_JAX else Dialect.SGLANG

    @property
    def render_dialects(self) -> list[Dialect]:
        return list(self.renders) if self.renders else [self.flag_dialect]

    def argv(self) -> list[str]:
        """The flags as server arguments, in the preset's own dialect and order."""
        return flags_to_argv(self.flags)


def flags_to_argv(flags: dict[str, Any]) -> list[str]:
    argv: list[str] = []
    for key, value in flags.items():
        if value is None or value is False:
            continue
        option = "--" + key
        if value is True:
            argv.append(option)
        elif isinstance(value, list):
            argv.append(option)
            argv.extend(_token(v) for v in value)
        else:
            argv.extend((option, _token(value)))
    return argv


def _token(value: Any) -> str:
    return str(value)
