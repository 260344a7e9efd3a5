"""Compare two tokenizers' vocabularies from their ``tokenizer.json`` files (I/O at the edge).

Only read when a rule needs it (a STANDALONE draft whose vocabulary has the target's size, both
checkpoints on this machine): the size of a vocabulary says nothing about its tokens, the files do.
"""

from __future__ import annotations

from pathlib import Path

from specguard.errors import InputError
from specguard.folders import escape
from specguard.hub import hub_cache_dir
from specguard.json_input import parse_json
from specguard.text_input import read_bytes_bounded

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
    problem = escape(folder, TOKENIZER_FILE, also_inside=(hub_cache_dir(),))
    if problem is not None:
        raise InputError(f"{path} {problem}", hint="copy the file into the model folder")
    document = parse_json(read_bytes_bounded(path, str(path), limit=MAX_TOKENIZER_BYTES, hint=hint), str(path), hint=hint)
    model = document.get("model") if isinstance(document, dict) else None
    vocab = model.get("vocab") if isinstance(model, dict) else None
    by_id: dict[int, str] = {}
    if isinstance(vocab, dict):  # BPE, WordPiece, WordLevel: token -> id
        by_id = {index: token for token, index in vocab.items() if isinstance(index, int)}
    elif isinstance(vocab, list):  # Unigram: [[piece, score], ...] in id order
        by_id = {index: entry[0] for index, entry in enumerate(vocab) if isinstance(entry, list) and entry and isinstance(entry[0], str)}
    else:
        raise InputError(f"{path} has no model.vocab (not a Hugging Face tokenizers file)", hint=hint)
    added_tokens = document.get("added_tokens") or []
    if not isinstance(added_tokens, list):
        raise InputError(f"{path}: added_tokens is not a list", hint=hint)
    for added in added_tokens:
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
