"""Every config.json key specguard reads is type-checked: the table in config_values names each
one, a wrong value of each is one line naming the file and the key, and every real config passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from specguard import facts
from specguard.catalog import MODELS
from specguard.config_values import (
    MODEL_KEYS,
    NESTED_KEYS,
    TOP_KEYS,
    Kind,
    check_config,
)
from specguard.errors import InputError
from tests.conftest import HF_CONFIGS, SHARED

# One value of the right JSON kind for the wrong Kind, per Kind: each must be refused.
WRONG = {
    Kind.POSITIVE_INT: ["8", 8.0, -1, 0, True, 2**64, [8]],
    Kind.COUNT: ["0", 1.5, -1, False, 2**64, {}],
    Kind.POSITIVE_NUMBER: ["1e6", -1.0, 0, True, 10**400, 1e308, []],
    Kind.STRING: [3, True, ["x"], {}],
    Kind.BOOLEAN: ["yes", 1, 0, []],
    Kind.DTYPE: ["banana16", "bf16", "torch.bfloat16", "int8", 16],
    Kind.CLASS_NAMES: ["LlamaForCausalLM", [1], {}],
    Kind.NAMES: ["full_attention", [1], {}],
    Kind.INT_LIST: ["1,2", ["1"], [1.5], [True], 3],
    Kind.OBJECT: ["x", [1], 3, True],
}


def _all_keys() -> list[tuple[str, Kind]]:
    keys = [*MODEL_KEYS.items(), *TOP_KEYS.items(), *((f"text_config.{k}", kind) for k, kind in MODEL_KEYS.items())]
    keys += [(f"{outer}.{inner}", kind) for outer, inner_keys in NESTED_KEYS.items() for inner, kind in inner_keys.items()]
    return keys


def _set(dotted: str, value: object) -> dict:
    config: dict = {}
    *parents, last = dotted.split(".")
    section = config
    for key in parents:
        section = section.setdefault(key, {})
    section[last] = value
    return config


@pytest.mark.parametrize(("dotted", "kind"), _all_keys(), ids=[k for k, _ in _all_keys()])
def test_every_key_refuses_every_wrong_value(dotted: str, kind: Kind) -> None:
    for value in WRONG[kind]:
        with pytest.raises(InputError) as raised:
            check_config(_set(dotted, value), Path("/m/config.json"))
        assert raised.value.message.startswith(f"/m/config.json: {dotted} is "), raised.value.message


def test_every_key_facts_reads_is_checked() -> None:
    """A key read but not checked is a fact guessed from whatever the file holds."""
    read = {key for _, keys in facts._PICKED_FIELDS.values() for key in keys}
    read |= {"architectures", "torch_dtype", "dtype", "rope_scaling", "rope_parameters", "rope_theta", "block_size"}
    assert read <= set(MODEL_KEYS)
    assert {"text_config", "eagle_config", "dflash_config", "quantization_config", "auto_map", "target_hidden_size", "num_aux_hidden_states"} <= set(TOP_KEYS)


def _real_configs() -> list[Path]:
    return sorted([*MODELS.rglob("config.json"), *HF_CONFIGS.rglob("config.json"), *(SHARED / "fixtures" / "draft-templates").rglob("*.json")])


def test_every_real_config_passes() -> None:
    configs = _real_configs()
    assert len(configs) > 50
    for path in configs:
        check_config(json.loads(path.read_text()), path)


def test_null_means_not_stated() -> None:
    check_config({key: None for key, _ in _all_keys() if "." not in key}, Path("config.json"))
