"""FX086 spec-grammar-tensor-index-xgrammar."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import (
    Applicability,
    Category,
    Edit,
    Finding,
    RequestFeature,
    Severity,
)
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.examples import LLAMA31_8B_EAGLE3
from specguard.sglang_facts.algorithms import EAGLE_WORKER_ALGORITHMS

GRAMMAR_BACKEND = "--grammar-backend"
# Every worker that verifies a draft tree under a grammar walks it with spec_utils.traverse_tree
# (0.5.11: eagle_worker.py:924, eagle_worker_v2.py:828, multi_layer_eagle_worker.py:510, ngram_worker.py:290).
TREE_GRAMMAR_ALGORITHMS = EAGLE_WORKER_ALGORITHMS | {"NGRAM"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.algorithm not in TREE_GRAMMAR_ALGORITHMS:
        return
    item = ctx.spec.item(GRAMMAR_BACKEND)
    backend = item.values[-1] if item is not None and item.values else "xgrammar"  # 0.5.11 server_args.py:2835-2837
    if backend != "xgrammar":
        return
    yield RULE.finding(
        f"{ctx.algorithm} with the xgrammar backend in SGLang {ctx.version}: the draft-tree walk hands xgrammar "
        "tensor indices where its FFI wants an int, so the first json_schema/regex/ebnf request crashes the "
        "scheduler with a TypeError in fill_next_token_bitmask (sglang#24283; 0.5.12 converts them). Upgrade, "
        f"or refuse structured output with {ctx.flag(GRAMMAR_BACKEND)} none",
        flags=("--speculative-algorithm", GRAMMAR_BACKEND),
        fix=fix_of(f"set {GRAMMAR_BACKEND} none", Applicability.UNSAFE, Edit(name=GRAMMAR_BACKEND, value="none")),
    )


RULE = Rule(
    check=check,
    code="FX086",
    category=Category.CRASH,
    needs=RequestFeature.STRUCTURED_OUTPUT,
    name="spec-grammar-tensor-index-xgrammar",
    summary="Speculative decoding with xgrammar in 0.5.10-0.5.11 crashes on the first structured-output request",
    severity=Severity.WARNING,
    docs=RuleDocs(
        what="EAGLE/NEXTN, EAGLE3, STANDALONE or NGRAM with the xgrammar grammar backend (the default) in "
        "0.5.10, 0.5.10.post1 and 0.5.11.",
        why="To mask a draft tree, `traverse_tree` recurses with `retrieve_next_token[curr]`, a 0-d torch "
        "tensor, and passes it as the row index to `grammar.fill_vocab_mask` (0.5.11 "
        "speculative/spec_utils.py:675 and traverse_tree). 0.5.10 moved to xgrammar 0.1.32, whose FFI "
        "`fill_next_token_bitmask` rejects the tensor: 'receives an ffi.Tensor where it expects an int', and "
        "the scheduler dies with every in-flight request (sglang#24283, traceback through "
        "eagle_worker_v2.py:828 -> spec_utils.py:675 -> reasoner_grammar_backend.py:75). 0.5.9 pinned xgrammar "
        "0.1.27; 0.5.12 passes `int(...)` indices (spec_utils.py traverse_tree). The launch cannot tell whether "
        "clients send structured-output requests, so this is a warning.",
        fix="Upgrade to 0.5.12 or later, or set `--grammar-backend none` so constrained requests are refused.",
        fix_safety="Unsafe: `--grammar-backend none` turns structured output off.",
    ),
    bad=Example(
        argv=LLAMA31_8B_EAGLE3,
        sglang_version="0.5.11",
    ),
    good=Example(
        argv=LLAMA31_8B_EAGLE3,
        sglang_version="0.5.12",
    ),
    sources=(
        "https://github.com/sgl-project/sglang/issues/24283",
        "sglang 0.5.11: python/sglang/srt/speculative/spec_utils.py:675",
        "sglang 0.5.11: python/sglang/srt/constrained/xgrammar_backend.py:103-104",
        "sglang 0.5.11: python/sglang/srt/server_args.py:2835-2837",
        "sglang 0.5.10 and 0.5.11 wheels: Requires-Dist xgrammar==0.1.32 (0.5.9: 0.1.27; 0.5.12: 0.2.0)",
    ),
    sglang_versions=">=0.5.10,<0.5.12",
)
