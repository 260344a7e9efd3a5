"""Compare two tokenizers' vocabularies from their ``tokenizer.json`` files (I/O at the edge).

Only read when a rule needs it (a STANDALONE draft whose vocabulary has the target's size, both
checkpoints on this machine): the size of a vocabulary says nothing about its tokens, the files do.
"""

from __future__ import annotations

import json
from pathlib import Path

from specguard.errors import InputError

TOKENIZER_FILE = "tokenizer.json"
# Hub tokenizers run to ~20 MB (Gemma 3's is 33 MB); a file far beyond that is not a tokenizer.
MAX_TOKENIZER_BYTES = 256 * 1024 * 1024


def read_vocabulary(folder: Path) -> dict[int, str] | None:
    """id -> token of ``folder/tokenizer.json`` (the model's vocabulary plus its added tokens);
    None when the folder has no tokenizer.json (a SentencePiece-only checkpoint is not read)."""
    path = folder / TOKENIZER_FILE
    if not path.is_file():
        return None
    hint = "fix or re-download the file, or check the draft and target tokenizers by hand"
    try:
        if path.stat().st_size > MAX_TOKENIZER_BYTES:
            raise InputError(f"{path} is larger than {MAX_TOKENIZER_BYTES // 2**20} MB, not a tokenizer.json", hint=hint)
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{path} cannot be read as JSON ({type(error).__name__})", hint=hint) from None
    model = document.get("model") if isinstance(document, dict) else None
    vocab = model.get("vocab") if isinstance(model, dict) else None
    by_id: dict[int, str] = {}
    if isinstance(vocab, dict):  # BPE, WordPiece, WordLevel: token -> id
        by_id = {index: token for token, index in vocab.items() if isinstance(index, int)}
    elif isinstance(vocab, list):  # Unigram: [[piece, score], ...] in id order
        by_id = {index: entry[0] for index, entry in enumerate(vocab) if isinstance(entry, list) and entry and isinstance(entry[0], str)}
    else:
        raise InputError(f"{path} has no model.vocab (not a Hugging Face tokenizers file)", hint=hint)
    for added in document.get("added_tokens") or []:
        if isinstance(added, dict) and isinstance(added.get("id"), int) and isinstance(added.get("content"), str):
            by_id[added["id"]] = added["content"]
    return by_id


def vocabulary_agreement(target_folder: Path, draft_folder: Path) -> float | None:
    """The share of the target's token ids that name the same token in the draft's tokenizer
    (1.0: the draft's ids mean what the target reads them as); None when either file is absent."""
    target = read_vocabulary(target_folder)
    draft = read_vocabulary(draft_folder)
    if not target or draft is None:
        return None
    same = sum(1 for index, token in target.items() if draft.get(index) == token)
    return same / len(target)
