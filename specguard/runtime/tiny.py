"""The tiny target/draft pair the project builds itself (runtime-anchors.md section 5).

A seeded synthetic corpus of templated Python-like code is tokenised by a byte-level BPE
trained on it; a small Llama target is trained on it, and a one-layer draft is distilled from
the target with token-level KL. Both are written in Hugging Face layout (config.json,
model.safetensors, tokenizer.json, tokenizer_config.json with a chat template). The target's
config uses transformers 5's ``rope_parameters`` and an untied ``lm_head``; the draft's uses
v4's ``rope_theta`` and tied embeddings, so both loader paths are exercised.

The build is deterministic (fixed seeds, fixed step counts, one thread per op where it
matters) and cached under ``SPECGUARD_CACHE_DIR`` or ``~/.cache/specguard`` in a directory
named after a hash of the recipe. Two processes may build at once: each builds in a private
temporary directory and renames it into place; the loser discards its copy. Every build ends
with ``checksums.json`` (size and SHA-256 of each file); a cached copy that fails it (a file
truncated, edited or missing, an interrupted copy) is moved aside and rebuilt. A cache
directory that cannot be written is one line naming ``SPECGUARD_CACHE_DIR``.

``python -m specguard.runtime.tiny [--out DIR]`` builds the pair and prints the two paths.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from specguard.errors import InputError
from specguard.runtime.errors import RuntimeInputError

if TYPE_CHECKING:
    import torch

RECIPE_VERSION = 1

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "<|{{ message['role'] }}|>\n{{ message['content'] }}\n"
    "{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


@dataclass(frozen=True)
class ModelShape:
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int


@dataclass(frozen=True)
class Recipe:
    version: int = RECIPE_VERSION
    seed: int = 1234
    corpus_functions: int = 6000
    vocab_size: int = 512
    seq_len: int = 128
    batch_size: int = 12
    target: ModelShape = ModelShape(64, 128, 6, 4, 2)
    draft: ModelShape = ModelShape(64, 128, 1, 2, 1)
    target_steps: int = 160
    draft_steps: int = 120
    lr: float = 3e-3

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class TinyPair:
    target: Path
    draft: Path


_NAMES = [
    "scale",
    "shift",
    "clip",
    "merge",
    "split",
    "parse",
    "render",
    "load",
    "store",
    "fetch",
    "count",
    "apply",
    "build",
    "check",
    "update",
    "reduce",
]
_ARGS = ["x", "value", "item", "data", "size", "key", "node", "text"]
_OPS = ["+", "-", "*", "//", "%"]


def synthetic_corpus(recipe: Recipe) -> str:
    """Templated code with repeated identifiers: predictable for the model, rich in n-gram repeats."""
    rng = random.Random(recipe.seed)
    parts = []
    for _ in range(recipe.corpus_functions):
        name, arg, op, n = rng.choice(_NAMES), rng.choice(_ARGS), rng.choice(_OPS), rng.randint(0, 99)
        kind = rng.random()
        if kind < 0.5:
            parts.append(f"def {name}_{n}({arg}):\n    value = {arg} {op} {n}\n    return {name}(value)\n")
        elif kind < 0.8:
            parts.append(
                f"def {name}_all({arg}s):\n    result = []\n    for {arg} in {arg}s:\n"
                f"        result.append({name}_{n}({arg}))\n    return result\n"
            )
        else:
            parts.append(f"class {name.title()}{n}:\n    def __init__(self, {arg}):\n        self.{arg} = {arg}\n")
    return "\n".join(parts)


def _train_tokenizer(text: str, vocab_size: int):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator([text], trainer=trainer)
    return tokenizer


def _hf_config(shape: ModelShape, vocab: int, legacy_rope: bool, tied: bool) -> dict:
    cfg = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": shape.hidden_size,
        "intermediate_size": shape.intermediate_size,
        "num_hidden_layers": shape.num_hidden_layers,
        "num_attention_heads": shape.num_attention_heads,
        "num_key_value_heads": shape.num_key_value_heads,
        "head_dim": shape.hidden_size // shape.num_attention_heads,
        "rms_norm_eps": 1e-6,
        "max_position_embeddings": 2048,
        "vocab_size": vocab,
        "bos_token_id": 0,
        "eos_token_id": 1,
        "tie_word_embeddings": tied,
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "dtype": "float32",
    }
    if legacy_rope:
        cfg["rope_theta"] = 10000.0
        cfg["rope_scaling"] = None
    else:
        cfg["rope_parameters"] = {"rope_theta": 10000.0, "rope_type": "default"}
    return cfg


def _batches(data, recipe: Recipe, steps: int, seed: int):  # type: ignore[no-untyped-def]
    import torch

    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        starts = torch.randint(0, data.numel() - recipe.seq_len - 1, (recipe.batch_size,), generator=gen)
        yield torch.stack([data[s : s + recipe.seq_len] for s in starts.tolist()])


def _write_safetensors(path: Path, state: dict[str, torch.Tensor]) -> None:
    """Serialised in memory and written by Python (a tiny model is a few MB): a full disk is then
    an OSError with its errno, which ``_ensure_built`` reports as one line, where safetensors'
    own ``save_file`` raises a ``SafetensorError`` holding only the text."""
    from safetensors.torch import save

    path.write_bytes(save(state, metadata={"format": "pt"}))


def _save(model, out: Path, tokenizer, hf_config: dict) -> None:  # type: ignore[no-untyped-def]
    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}
    if hf_config["tie_word_embeddings"]:
        state.pop("lm_head.weight", None)
    _write_safetensors(out / "model.safetensors", state)
    (out / "config.json").write_text(json.dumps(hf_config, indent=2))
    (out / "generation_config.json").write_text(json.dumps({"bos_token_id": 0, "eos_token_id": 1}))
    (out / "tokenizer.json").write_text(tokenizer.to_str(pretty=True))  # as _write_safetensors, for an OSError
    (out / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "add_bos_token": False,
                "model_max_length": 2048,
                "chat_template": CHAT_TEMPLATE,
            },
            indent=2,
        )
    )


def _track(steps, total: int, label: str):  # type: ignore[no-untyped-def]
    """A progress bar on a terminal; elsewhere (logs, CI, tests) a line at each quarter."""
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import track

        description = f"{label} (built once, then cached)"
        yield from track(steps, total=total, description=description, console=Console(stderr=True), transient=True)
        return
    marks = {total * q // 4 for q in (1, 2, 3)}
    for done, step in enumerate(steps, start=1):
        yield step
        if done in marks:
            _stderr(f"{label}: {done}/{total} training steps")


def build_pair(out_dir: Path, recipe: Recipe = Recipe(), log=print) -> TinyPair:  # type: ignore[no-untyped-def]
    """Build the pair into ``out_dir`` (``target/`` and ``draft/``)."""
    return _build(out_dir, recipe, log, with_draft=True)


def build_target(out_dir: Path, recipe: Recipe = Recipe(), log=print) -> Path:  # type: ignore[no-untyped-def]
    """Build the target alone into ``out_dir/target``: the same bytes as the pair's target (the
    draft is trained after it, from seeds of its own), for a launch that never runs the draft."""
    return _build(out_dir, recipe, log, with_draft=False).target


def _build(out_dir: Path, recipe: Recipe, log, *, with_draft: bool) -> TinyPair:  # type: ignore[no-untyped-def]
    import torch
    import torch.nn.functional as F

    from specguard.runtime.config import parse_config
    from specguard.runtime.model import CausalLM

    began = time.monotonic()
    threads = torch.get_num_threads()
    # One thread: on a shared 2-core box two threads oversubscribe and run many times slower.
    torch.set_num_threads(1)
    try:
        text = synthetic_corpus(recipe)
        tokenizer = _train_tokenizer(text, recipe.vocab_size)
        vocab = tokenizer.get_vocab_size()
        data = torch.tensor(tokenizer.encode(text).ids, dtype=torch.long)

        target_cfg = _hf_config(recipe.target, vocab, legacy_rope=False, tied=False)
        draft_cfg = _hf_config(recipe.draft, vocab, legacy_rope=True, tied=True)

        torch.manual_seed(recipe.seed)
        target = CausalLM(parse_config(target_cfg))
        _init(target)
        opt = torch.optim.AdamW(target.parameters(), lr=recipe.lr, weight_decay=0.0)
        sched = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=recipe.lr, total_steps=recipe.target_steps, pct_start=0.1
        )
        loss = torch.tensor(0.0)
        for batch in _track(_batches(data, recipe, recipe.target_steps, recipe.seed + 1), recipe.target_steps, "tiny target"):
            logits = target.forward_train(batch[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        log(f"tiny target: {recipe.target_steps} steps, loss {loss.item():.3f}, {time.monotonic() - began:.1f} s")
        pair = TinyPair(out_dir / "target", out_dir / "draft")
        _save(target, pair.target, tokenizer, target_cfg)
        (out_dir / "recipe.json").write_text(json.dumps(asdict(recipe), indent=2))
        if not with_draft:
            return pair

        target.eval()
        torch.manual_seed(recipe.seed + 2)
        draft = CausalLM(parse_config(draft_cfg))
        _init(draft)
        opt = torch.optim.AdamW(draft.parameters(), lr=recipe.lr, weight_decay=0.0)
        sched = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=recipe.lr, total_steps=recipe.draft_steps, pct_start=0.1
        )
        for batch in _track(_batches(data, recipe, recipe.draft_steps, recipe.seed + 3), recipe.draft_steps, "tiny draft"):
            with torch.no_grad():
                teacher = torch.log_softmax(target.forward_train(batch[:, :-1]), dim=-1)
            student = torch.log_softmax(draft.forward_train(batch[:, :-1]), dim=-1)
            loss = F.kl_div(
                student.reshape(-1, vocab), teacher.reshape(-1, vocab), log_target=True, reduction="batchmean"
            )
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        log(f"tiny draft: {recipe.draft_steps} steps, KL {loss.item():.3f}, {time.monotonic() - began:.1f} s")
        _save(draft, pair.draft, tokenizer, draft_cfg)
        return pair
    finally:
        torch.set_num_threads(threads)


@dataclass(frozen=True)
class Eagle3Recipe:
    """A one-layer EAGLE3 head for the tiny target, trained SpecForge-style (test-time training).

    Saved in SpecForge's published layout (``LlamaForCausalLMEagle3``, ``midlayer.*``, ``fc``,
    ``norm``, ``lm_head`` over a reduced vocabulary, ``d2t``/``t2d``), without embeddings: the
    runtime shares the target's, as SGLang does.
    """

    version: int = 1
    seed: int = 4321
    aux_layer_ids: tuple[int, ...] = (0, 2, 4)  # low, middle, high layers of the 6-layer target
    draft_vocab_size: int = 256  # the most frequent target tokens of the corpus (SpecForge's choice)
    head: ModelShape = ModelShape(64, 128, 1, 4, 2)
    steps: int = 240
    unroll: int = 3  # SpecForge's ttt_length: later steps read the head's own output
    unroll_decay: float = 0.8
    batch_size: int = 8
    seq_len: int = 96
    lr: float = 3e-3

    def digest(self, pair: Recipe) -> str:
        blob = json.dumps({"pair": asdict(pair), "eagle3": asdict(self)}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


def _eagle3_config(recipe: Eagle3Recipe, target_cfg: dict) -> dict:
    shape = recipe.head
    cfg = _hf_config(shape, target_cfg["vocab_size"], legacy_rope=True, tied=False)
    cfg["architectures"] = ["LlamaForCausalLMEagle3"]
    cfg["draft_vocab_size"] = recipe.draft_vocab_size
    cfg["eagle_config"] = {"eagle_aux_hidden_state_layer_ids": list(recipe.aux_layer_ids)}
    cfg["torch_dtype"] = cfg.pop("dtype")
    return cfg


def _unrolled_eagle3_loss(head, embeds, aux, teacher_logp, recipe: Eagle3Recipe):  # type: ignore[no-untyped-def]
    """SpecForge's test-time training loss over ``recipe.unroll`` draft steps.

    Row ``j`` holds the token at ``j + 1`` and predicts the target's distribution at ``j + 1``.
    Step 0 reads the target's aux states at ``j``; step ``u`` reads step ``u - 1``'s output at
    ``j - 1`` and attends to step 0's keys up to ``j - u`` and to step ``v``'s key at
    ``j - u + v`` (v = 1..u): what the runtime's draft step ``u`` at a committed length ``j - u + 1`` sees.
    """
    import torch

    from specguard.runtime.config import rope_inv_freq

    layer = head.layers[0]
    attn = layer.self_attn
    b, n, _ = embeds.shape
    m = head.cfg.model
    heads, kv, hd = m.num_attention_heads, m.num_key_value_heads, m.head_dim
    freqs = torch.outer(torch.arange(n, dtype=torch.float32), torch.tensor(rope_inv_freq(m)))
    emb = torch.cat([freqs, freqs], dim=-1)
    cos, sin = emb.cos(), emb.sin()

    def rope(x):  # type: ignore[no-untyped-def]
        half = x.shape[-1] // 2
        return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin

    rows = torch.arange(n)
    normed_embeds = layer.input_layernorm(embeds)
    keys: list = []
    values: list = []
    hidden = head.project(aux)
    total = torch.zeros(())
    out = hidden  # replaced by each step's output; step 0 reads the projected aux states instead
    for u in range(recipe.unroll):
        if u > 0:  # the previous step's output one row up; row 0 has none (and no loss)
            hidden = torch.cat([torch.zeros_like(out[:, :1]), out[:, :-1]], dim=1)
        x = torch.cat([normed_embeds, layer.hidden_norm(hidden)], dim=-1)
        q = rope(attn.q_proj(x).view(b, n, heads, hd).transpose(1, 2))
        keys.append(rope(attn.k_proj(x).view(b, n, kv, hd).transpose(1, 2)).repeat_interleave(heads // kv, dim=1))
        values.append(attn.v_proj(x).view(b, n, kv, hd).transpose(1, 2).repeat_interleave(heads // kv, dim=1))
        allowed = [rows.unsqueeze(0) <= (rows - u).unsqueeze(1)]
        allowed += [rows.unsqueeze(0) == (rows - u + v).unsqueeze(1) for v in range(1, u + 1)]
        mask = torch.cat(allowed, dim=1)
        mask[:u] = False
        mask[:u, :n] = rows.unsqueeze(0) == 0  # rows without a loss still need one key to stay finite
        scores = torch.cat([q @ k.transpose(-1, -2) for k in keys], dim=-1) * hd**-0.5
        probs = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        a = probs @ torch.cat(values, dim=2)
        h = hidden + attn.o_proj(a.transpose(1, 2).reshape(b, n, heads * hd))
        out = h + layer.mlp(layer.post_attention_layernorm(h))
        logq = torch.log_softmax(head.lm_head(head.norm(out)), dim=-1)
        loss = -(teacher_logp.exp() * logq).sum(-1)[:, u:].mean()
        total = total + recipe.unroll_decay**u * loss
    return total


def build_eagle3_head(target_dir: Path, out: Path, pair: Recipe = Recipe(), recipe: Eagle3Recipe = Eagle3Recipe(), log=print) -> Path:  # type: ignore[no-untyped-def]
    """Train the tiny EAGLE3 head on the tiny target's aux hidden states; write it to ``out``."""
    import torch

    from specguard.runtime.config import load_config
    from specguard.runtime.eagle import EagleHead, parse_head_config
    from specguard.runtime.loader import load_model
    from specguard.runtime.tokenizer import Tokenizer

    began = time.monotonic()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        target = load_model(target_dir)
        target_raw = json.loads((target_dir / "config.json").read_text())
        text = synthetic_corpus(pair)
        data = torch.tensor(Tokenizer(target_dir).encode(text), dtype=torch.long)
        counts = torch.bincount(data, minlength=target.config.vocab_size)
        hot = torch.sort(torch.topk(counts, recipe.draft_vocab_size).indices).values
        d2t = hot - torch.arange(recipe.draft_vocab_size)
        t2d = torch.zeros(target.config.vocab_size, dtype=torch.bool)
        t2d[hot] = True
        cfg = _eagle3_config(recipe, target_raw)
        torch.manual_seed(recipe.seed)
        head = EagleHead(parse_head_config(cfg, load_config(target_dir), "tiny EAGLE3 config"))
        _init(head)
        embed = target.model.embed_tokens.weight.detach()
        opt = torch.optim.AdamW(head.parameters(), lr=recipe.lr, weight_decay=0.0)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=recipe.lr, total_steps=recipe.steps, pct_start=0.1)
        shape = replace(pair, seq_len=recipe.seq_len + 2, batch_size=recipe.batch_size)
        loss = torch.tensor(0.0)
        for batch in _track(_batches(data, shape, recipe.steps, recipe.seed + 1), recipe.steps, "tiny EAGLE3 head"):
            with torch.no_grad():
                logits, aux = target.forward_train_with_aux(batch[:, :-1], recipe.aux_layer_ids)
                # row j: aux at j, token j + 1, the target's distribution at j + 1 over the draft vocabulary
                teacher = torch.log_softmax(logits[:, 1:, hot], dim=-1)
                aux = aux[:, :-1]
                embeds = embed[batch[:, 1:-1]]
            loss = _unrolled_eagle3_loss(head, embeds, aux, teacher, recipe)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        log(f"tiny EAGLE3 head: {recipe.steps} steps, loss {loss.item():.3f}, {time.monotonic() - began:.1f} s")
        out.mkdir(parents=True, exist_ok=True)
        state = {"midlayer." + k.removeprefix("layers.0."): v for k, v in head.state_dict().items() if k.startswith("layers.0.")}
        state.update({k: v for k, v in head.state_dict().items() if not k.startswith("layers.")})
        state.update({"d2t": d2t, "t2d": t2d})
        _write_safetensors(out / "model.safetensors", {k: v.detach().contiguous().clone() for k, v in state.items()})
        (out / "config.json").write_text(json.dumps(cfg, indent=2))
        (out / "recipe.json").write_text(json.dumps(asdict(recipe), indent=2))
        return out
    finally:
        torch.set_num_threads(threads)


def ensure_tiny_eagle3(cache_dir: Path | None = None, pair: Recipe = Recipe(), recipe: Eagle3Recipe = Eagle3Recipe()) -> TinyPair:
    """Paths of the tiny target and its EAGLE3 head (``.draft``), building (or healing) them on
    first use; the STANDALONE draft, which an EAGLE3 launch never runs, is not built for it."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_root()
    target = ensure_tiny_target(root, pair)
    final = tiny_eagle3_path(root, pair, recipe)
    _ensure_built(root, final, lambda scratch: build_eagle3_head(target, scratch, pair, recipe, log=_stderr), _stderr)
    return TinyPair(target, final)


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _init(model) -> None:  # type: ignore[no-untyped-def]
    import torch

    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            torch.nn.init.ones_(p)
        else:
            torch.nn.init.normal_(p, std=0.02)


def default_cache_root() -> Path:
    env = os.environ.get("SPECGUARD_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "specguard"


CHECKSUMS = "checksums.json"


class TinyCacheError(InputError, RuntimeInputError):
    """The tiny-model cache directory cannot be created or written (the CLI and the runtime both
    report it as one line, exit 2)."""

    def __str__(self) -> str:
        return self.one_line()


def _file_digests(directory: Path) -> dict[str, dict[str, int | str]]:
    digests: dict[str, dict[str, int | str]] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file() and p.name != CHECKSUMS):
        data = path.read_bytes()
        digests[path.relative_to(directory).as_posix()] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    return digests


def write_checksums(directory: Path) -> None:
    """Seal a finished build: written last, so its presence means every file above was complete."""
    (directory / CHECKSUMS).write_text(json.dumps(_file_digests(directory), indent=1, sort_keys=True))


def damage(directory: Path) -> str | None:
    """Why a cached build cannot be used (None: intact). The files are a few MB; hashing is milliseconds."""
    try:
        expected = json.loads((directory / CHECKSUMS).read_text())
    except FileNotFoundError:
        return f"no {CHECKSUMS} (an interrupted or older build)"
    except (OSError, ValueError) as error:
        return f"{CHECKSUMS} unreadable ({error})"
    found = _file_digests(directory)
    for name, want in expected.items():
        got = found.get(name)
        if got is None:
            return f"{name} is missing"
        if got != want:
            return f"{name} differs from its checksum ({got['size']} bytes, expected {want['size']})"
    return None


def _cache_error(root: Path, error: OSError) -> TinyCacheError:
    reason = error.strerror or str(error)
    return TinyCacheError(
        f"cannot write the tiny-model cache at {root} ({reason})",
        hint="set SPECGUARD_CACHE_DIR to a writable directory with about 10 MB free",
    )


def _ensure_built(root: Path, final: Path, build, log) -> None:  # type: ignore[no-untyped-def]
    """Build into a private directory beside ``final`` and rename it into place, unless an intact
    copy is there already; a damaged copy is moved aside first."""
    problem = damage(final) if final.exists() else None
    if final.exists() and problem is None:
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
        if problem is not None:
            log(f"specguard: the cached tiny model at {final} is damaged ({problem}); rebuilding it")
            aside = Path(tempfile.mkdtemp(prefix=f".damaged-{final.name}-", dir=root))
            os.rename(final, aside / final.name)
            shutil.rmtree(aside, ignore_errors=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=root))
    except OSError as error:
        raise _cache_error(root, error) from None
    try:
        try:
            build(scratch)
            write_checksums(scratch)
        except OSError as error:
            raise _cache_error(root, error) from None
        try:
            os.rename(scratch, final)
        except OSError:
            # Another process won the race: use its copy if it is whole.
            if not final.exists() or damage(final) is not None:
                raise
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)


def tiny_pair_paths(cache_dir: Path | None = None, recipe: Recipe = Recipe()) -> TinyPair:
    """Where the tiny pair lives (built or not): ``launch --dry-run`` shows these and writes nothing."""
    final = (Path(cache_dir) if cache_dir is not None else default_cache_root()) / f"tiny-{recipe.digest()}"
    return TinyPair(final / "target", final / "draft")


def tiny_target_path(cache_dir: Path | None = None, recipe: Recipe = Recipe()) -> Path:
    """Where the tiny target is (built or not): the pair's when the pair is built, else a build of
    the target alone (the same bytes)."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_root()
    pair = tiny_pair_paths(root, recipe)
    if is_built(pair.target.parent):
        return pair.target
    return root / f"tiny-target-{recipe.digest()}" / "target"


def ensure_tiny_target(cache_dir: Path | None = None, recipe: Recipe = Recipe()) -> Path:
    """The tiny target, building (or healing) it alone on first use: no draft is trained for it."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_root()
    target = tiny_target_path(root, recipe)
    if target == tiny_pair_paths(root, recipe).target:
        return ensure_tiny_pair(root, recipe).target  # checked (and healed) like any use of the pair
    _ensure_built(root, target.parent, lambda scratch: build_target(scratch, recipe, log=_stderr), _stderr)
    return target


def tiny_eagle3_path(cache_dir: Path | None = None, pair: Recipe = Recipe(), recipe: Eagle3Recipe = Eagle3Recipe()) -> Path:
    return (Path(cache_dir) if cache_dir is not None else default_cache_root()) / f"tiny-eagle3-{recipe.digest(pair)}"


def is_built(directory: Path) -> bool:
    """A sealed build (its checksums are not re-verified here)."""
    return (directory / CHECKSUMS).is_file()


def ensure_tiny_pair(cache_dir: Path | None = None, recipe: Recipe = Recipe()) -> TinyPair:
    """Paths of the tiny target and draft, building (or healing) them on first use.

    ``cache_dir`` is the root under which ``tiny-<recipe-hash>/`` lives (default:
    ``$SPECGUARD_CACHE_DIR`` or ``~/.cache/specguard``).
    """
    root = Path(cache_dir) if cache_dir is not None else default_cache_root()
    pair = tiny_pair_paths(root, recipe)
    _ensure_built(root, pair.target.parent, lambda scratch: build_pair(scratch, recipe, log=_stderr), _stderr)
    return pair


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m specguard.runtime.tiny", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=None, help="cache root (default $SPECGUARD_CACHE_DIR or ~/.cache/specguard)"
    )
    args = parser.parse_args(argv)
    pair = ensure_tiny_pair(args.out)
    print(f"target: {pair.target}")
    print(f"draft: {pair.draft}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
