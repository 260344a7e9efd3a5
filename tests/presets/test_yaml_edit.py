"""Corrected values go into a preset's text as line edits: nothing else of the user's text moves."""

from __future__ import annotations

import io
import textwrap

from ruamel.yaml import YAML

from specguard.presets.yaml_edit import edit_sections

KEYS = ("flags", "env", "handles")


def edited(text: str, document: dict) -> str:
    text = textwrap.dedent(text)
    return edit_sections(text, YAML().load(io.StringIO(text)), document, KEYS, renames=lambda key: (f"{key}-decode",))


def test_a_changed_value_keeps_its_comment_and_quotes_style_elsewhere() -> None:
    text = """\
    name: mine   # my preset
    flags:
      model: 'org/name'
      mem-fraction-static: 0.9   # measured on our H100s
      cuda-graph-bs: [1, 2, 4]
    """
    out = edited(text, {"flags": {"model": "org/name", "mem-fraction-static": 0.85, "cuda-graph-bs": [1, 2, 4]}})
    assert out == textwrap.dedent(text).replace("0.9   #", "0.85   #")


def test_removed_and_added_keys_touch_only_their_lines() -> None:
    text = """\
    flags:
      model: m
      # the old name
      cuda-graph-max-bs: 8
      log-level: warning
    notes:
        - "a long note that stays wrapped as the user wrote it"
    """
    out = edited(text, {"flags": {"model": "m", "log-level": "warning", "max-running-requests": 8}})
    assert out == textwrap.dedent("""\
    flags:
      model: m
      # the old name
      log-level: warning
      max-running-requests: 8
    notes:
        - "a long note that stays wrapped as the user wrote it"
    """)


def test_a_renamed_flag_keeps_its_place_and_comment() -> None:
    text = "flags:\n  model: m\n  cuda-graph-max-bs: 8  # docs\n  log-level: warning\n"
    out = edited(text, {"flags": {"model": "m", "log-level": "warning", "cuda-graph-max-bs-decode": 8}})
    assert out == "flags:\n  model: m\n  cuda-graph-max-bs-decode: 8  # docs\n  log-level: warning\n"


def test_a_section_removed_or_added() -> None:
    text = "flags:\n  model: m\nenv:\n  SGLANG_ENABLE_SPEC_V2: 'True'   # spec v2\nhardware: {gpu: H100}\n"
    assert edited(text, {"flags": {"model": "m"}}) == "flags:\n  model: m\nhardware: {gpu: H100}\n"
    added = edited("flags:\n  model: m\n", {"flags": {"model": "m"}, "env": {"A": "1"}})
    assert added == "flags:\n  model: m\nenv:\n  A: '1'\n"


def test_a_multi_line_value_and_a_quoted_value_with_a_hash() -> None:
    text = "flags:\n  cuda-graph-bs:\n  - 1\n  - 2\n  api-key: 'a # b'  # secret\n"
    out = edited(text, {"flags": {"cuda-graph-bs": [1, 2, 4], "api-key": "c"}})
    assert out == "flags:\n  cuda-graph-bs: [1, 2, 4]\n  api-key: c  # secret\n"
