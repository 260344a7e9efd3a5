"""DM140 reads target_layer_ids and num_target_layers where SGLang does (parse_dflash_draft_config)."""

from __future__ import annotations

import json
from pathlib import Path

from specguard.facts import facts_from_config
from specguard.rules.base import Example
from specguard.rules.draft_model import (
    DM140_dflash_target_layer_ids_without_target_count as DM140,
)

SPECFORGE = Path(__file__).parents[3].parent / "shared" / "fixtures" / "draft-templates" / "sgl-project-SpecForge" / "qwen3-8b-dflash.json"
ARGV = ("--model-path", "Qwen/Qwen3-8B", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path", "d")
FIELDS = ("num_hidden_layers", "dflash_target_layer_ids", "dflash_num_target_layers")


def _fires(config: dict) -> int:
    facts = facts_from_config(config, source="d")
    draft = {name: getattr(facts, name) for name in FIELDS if getattr(facts, name) is not None}
    return len(list(DM140.check(Example(argv=ARGV, draft=draft, sglang_version="0.5.17").context())))


def test_dflash_config_wins_over_the_top_level() -> None:
    facts = facts_from_config({"num_target_layers": 36, "target_layer_ids": [0], "dflash_config": {"target_layer_ids": [1, 9]}}, source="d")
    assert facts.dflash_target_layer_ids == (1, 9)
    assert facts.dflash_num_target_layers == 36


def test_the_specforge_template_without_its_target_count() -> None:
    config = json.loads(SPECFORGE.read_text())
    assert _fires(config) == 0  # it states num_target_layers 36
    del config["num_target_layers"]
    assert _fires(config) == 1
