"""The preset schema: what a preset YAML may say, and nothing else, as pydantic models.

A preset is untrusted input. The models refuse unknown keys (``extra="forbid"``), values of
another type and values out of their bounds, and pydantic reports every problem of a document in
one ``ValidationError`` (the loader gives each its YAML line). ``specguard presets schema`` prints
the JSON Schema generated from these models (``presets/preset.schema.json`` keeps a copy, which
the shipped presets name in their ``yaml-language-server`` modeline so that an editor completes
and checks them).

Validation is pydantic's strict mode: YAML has already given each value its type, and a
conversion between YAML's types is where YAML misleads. PyYAML reads ``1e5`` and ``5.0e5`` as
strings (YAML 1.1 wants a dot and a signed exponent), ``yes``/``on`` as booleans; lax mode would
make ``count: on`` the number 1 and a quoted ``' 8 '`` an int, and Python's own ``int()`` would
also read ``'٤٢'``. Strict refuses every one of them: a
string is never a number or a boolean, a boolean never a number, a float never an int (an int is
a float, as in JSON Schema). The one field kind strict does not fit is an enum: in strict mode it
wants an Enum instance from Python input, while a YAML value can only be the member's value, so
enum fields validate in lax mode (``Lax``), which takes a member's value as written ('sglang';
not ' sglang' or 'SGLANG').
Every string that names a file is checked by the loader before anything is read.

This module imports pydantic (~70 ms): it is imported only when a preset is read, never by a
plain ``specguard check`` (tests/cli/test_check_is_light.py holds this).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    Strict,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from pydantic_core.core_schema import ValidationInfo

from specguard.models import Dialect

PRESET_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
FLAG_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")
ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
RULE_CODE = re.compile(r"^[A-Z]{2}\d{3}$")


def _flag_key(key: str) -> str:
    if not FLAG_KEY.match(key):
        raise PydanticCustomError("flag_key", "write flags without the leading '--', e.g. speculative-num-steps")
    return key


def _env_key(key: str) -> str:
    if not ENV_KEY.match(key):
        raise PydanticCustomError("env_key", "not an environment variable name")
    return key


def _one_error(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """One problem for a flag value of no allowed type, where pydantic says one per union member."""
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError("flag_value", "a flag's value is a string, a number, true or false, or a list of strings and numbers") from None


# The key patterns are checked by these validators, whose messages say what to write (pydantic's
# own would quote the regular expression); the schema states the patterns for an editor.
FlagKey = Annotated[str, AfterValidator(_flag_key)]
EnvKey = Annotated[str, AfterValidator(_env_key)]
FlagValue = Annotated[str | int | float | bool | list[str | int | float], WrapValidator(_one_error)]
Lax = Strict(False)
Positive = Annotated[int, Field(gt=0)]


class Runtime(StrEnum):
    SGLANG = "sglang"
    SGL_JAX = "sgl-jax"
    REFERENCE = "reference"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class StatedFacts(_Record):
    """Facts about a model whose config.json is not at hand, each backed by facts_source.

    The keys are config.json's own; a fact the sources do not back is left out.
    """

    architectures: list[str] | None = None
    model_type: str | None = None
    dtype: Literal["float16", "bfloat16", "float32"] | None = None
    dtype_key: Literal["dtype", "torch_dtype"] | None = Field(default=None, description="which key the model's config.json spells its dtype with")
    max_position_embeddings: Positive | None = None
    vocab_size: Positive | None = None
    draft_vocab_size: Positive | None = None
    hidden_size: Positive | None = None
    intermediate_size: Positive | None = None
    num_hidden_layers: Positive | None = None
    num_attention_heads: Positive | None = None
    num_key_value_heads: Positive | None = None
    num_nextn_predict_layers: Annotated[int, Field(ge=0)] | None = None
    tie_word_embeddings: bool | None = None
    rope_theta: float | None = None
    eagle_aux_hidden_state_layer_ids: list[int] | None = None
    block_size: Positive | None = None
    num_experts: Positive | None = None
    num_experts_per_tok: Positive | None = None
    moe_intermediate_size: Positive | None = None

    def as_model_facts_kwargs(self) -> dict[str, Any]:
        stated = self.model_dump(exclude_none=True)
        for key in ("architectures", "eagle_aux_hidden_state_layer_ids"):
            if key in stated:
                stated[key] = tuple(stated[key])
        return stated


class ModelRef(_Record):
    """A target or draft: its id, and either a config.json snapshot or the facts its sources back."""

    model: str = Field(min_length=1, max_length=256, description="HF repo id, local path, or tiny:target|tiny:draft|tiny:eagle3")
    revision: str | None = Field(default=None, max_length=64, description="a branch, tag or commit of the HF repo")
    config: str | None = Field(default=None, max_length=256, description="the model's config.json snapshot, relative to the preset file")
    config_source: str | None = Field(default=None, max_length=1000, description="where the snapshot came from")
    facts: StatedFacts | None = Field(default=None, description="facts the sources state, where no config.json snapshot exists")
    facts_source: str | None = Field(default=None, max_length=2000, description="what backs each stated fact")

    @model_validator(mode="after")
    def _backed(self) -> ModelRef:
        if self.config is not None and self.facts is not None:
            raise PydanticCustomError("snapshot_or_facts", "give either config (a real config.json snapshot) or facts, not both")
        if self.config is not None and not self.config_source:
            raise PydanticCustomError("unsourced", "a config snapshot needs config_source (where the real file came from)")
        if self.facts is not None and not self.facts_source:
            raise PydanticCustomError("unsourced", "stated facts need facts_source (what backs them)")
        return self


class Hardware(_Record):
    gpu: str | None = Field(default=None, max_length=64, description="the GPU the preset is meant for, e.g. H100")
    count: int | None = Field(default=None, ge=1, le=4096, description="how many of them")


class Handled(_Record):
    """A problem the source's own flags take care of: shown by check as handled, not hidden."""

    rule: str = Field(description="the rule code that would fire without the flag", json_schema_extra={"pattern": RULE_CODE.pattern})
    flag: str = Field(description="the flag, as written under flags:, that handles it")
    note: str | None = Field(default=None, max_length=1000)

    @field_validator("rule")
    @classmethod
    def _rule_code(cls, rule: str) -> str:
        if not RULE_CODE.match(rule):
            raise PydanticCustomError("rule_code", f"{rule!r} is not a rule code like DM001")
        return rule


class Preset(_Record):
    """A known launch configuration: the models, the flags as its source writes them, and the sources."""

    name: str = Field(description="lower-case letters, digits, '.', '_' and '-'", json_schema_extra={"pattern": PRESET_NAME.pattern})
    description: str = Field(max_length=2000)
    sources: list[str] = Field(min_length=1, max_length=32, description="where the configuration comes from (URLs, file and line)")
    runtime: Annotated[Runtime, Lax]
    dialect: Annotated[Dialect, Lax] | None = Field(default=None, description="how flags: is spelled; default: the runtime's")
    renders: list[Annotated[Dialect, Lax]] | None = Field(default=None, description="dialects this preset renders to; default: its own")
    target: ModelRef
    draft: ModelRef | None = None
    flags: dict[FlagKey, FlagValue | None] = Field(
        default_factory=dict,
        description="server arguments without the leading '--', in the preset's dialect; true for a switch",
        json_schema_extra={"propertyNames": {"pattern": FLAG_KEY.pattern}},
    )
    env: dict[EnvKey, str] = Field(
        default_factory=dict, description="environment variables the launch sets", json_schema_extra={"propertyNames": {"pattern": ENV_KEY.pattern}}
    )
    hardware: Hardware = Field(default_factory=Hardware)
    sglang_version: str | None = Field(default=None, max_length=32, description="the SGLang release the preset was written for")
    handles: list[Handled] = Field(default_factory=list, description="problems the preset's own flags take care of")
    notes: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        if not PRESET_NAME.match(name):
            raise PydanticCustomError("preset_name", "a preset name is lower-case letters, digits, '.', '_' and '-' (at most 64)")
        return name

    @field_validator("handles")
    @classmethod
    def _handled_flags_are_set(cls, handles: list[Handled], info: ValidationInfo) -> list[Handled]:
        flags = info.data.get("flags")
        if flags is None:  # flags: has problems of its own, reported already
            return handles
        unset = [handled.flag for handled in handles if handled.flag not in flags]
        if unset:
            raise PydanticCustomError("handled_flag", f"{', '.join(map(repr, unset))}: not among this preset's flags")
        return handles

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


SCHEMA_FILE = "preset.schema.json"


def schema_text() -> str:
    """The JSON Schema of a preset file (the draft pydantic generates), as ``specguard presets
    schema`` prints it and ``presets/preset.schema.json`` keeps it."""
    import json

    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", **Preset.model_json_schema()}
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


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
