"""tokenizer.json through ``tokenizers`` and the chat template of tokenizer_config.json through jinja2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from specguard.runtime.errors import CheckpointError, RequestError


def _token_text(value: Any) -> str | None:
    if isinstance(value, dict):
        return value.get("content")
    return value if isinstance(value, str) else None


class Tokenizer:
    def __init__(self, tokenizer_dir: Path | str) -> None:
        from tokenizers import Tokenizer as HFTokenizer

        tokenizer_dir = Path(tokenizer_dir)
        path = tokenizer_dir / "tokenizer.json"
        if not path.is_file():
            raise CheckpointError(f"{path} is missing; the reference runtime needs a tokenizer.json")
        self.path = tokenizer_dir
        try:
            self._tok = HFTokenizer.from_file(str(path))
        except Exception as error:  # noqa: BLE001 - tokenizers raises its own untyped Exception
            raise CheckpointError(f"{path}: not a readable tokenizer.json ({error})") from None
        config_path = tokenizer_dir / "tokenizer_config.json"
        config: dict[str, Any] = {}
        if config_path.is_file():
            try:
                config = json.loads(config_path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as error:
                raise CheckpointError(f"{config_path}: not readable JSON ({error})") from None
            if not isinstance(config, dict):
                raise CheckpointError(f"{config_path}: holds a JSON {type(config).__name__}, not an object")
        self.bos_token = _token_text(config.get("bos_token"))
        self.eos_token = _token_text(config.get("eos_token"))
        self.add_bos = bool(config.get("add_bos_token", False))
        template = config.get("chat_template")
        if isinstance(template, list):
            template = next((t.get("template") for t in template if t.get("name") == "default"), None)
        self.chat_template: str | None = template
        self._compiled_template: Any = None

    @property
    def vocab_size(self) -> int:
        return self._tok.get_vocab_size(with_added_tokens=True)

    def token_id(self, text: str | None) -> int | None:
        return None if text is None else self._tok.token_to_id(text)

    @property
    def eos_token_id(self) -> int | None:
        return self.token_id(self.eos_token)

    @property
    def bos_token_id(self) -> int | None:
        return self.token_id(self.bos_token)

    def encode(self, text: str) -> list[int]:
        ids = self._tok.encode(text, add_special_tokens=False).ids
        bos = self.bos_token_id
        if self.add_bos and bos is not None and (not ids or ids[0] != bos):
            ids = [bos, *ids]
        return ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(ids, skip_special_tokens=True)

    def vocab_fingerprint(self) -> dict[str, int]:
        return self._tok.get_vocab(with_added_tokens=True)

    def apply_chat_template(self, messages: list[dict[str, Any]]) -> str:
        if not self.chat_template:
            raise RequestError("the model's tokenizer_config.json has no chat_template; use /v1/completions")
        if self._compiled_template is None:
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            def raise_exception(message: str) -> None:
                raise RequestError(f"chat template: {message}")

            env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
            env.globals["raise_exception"] = raise_exception
            self._compiled_template = env.from_string(self.chat_template)
        return self._compiled_template.render(
            messages=messages,
            add_generation_prompt=True,
            bos_token=self.bos_token or "",
            eos_token=self.eos_token or "",
        )
