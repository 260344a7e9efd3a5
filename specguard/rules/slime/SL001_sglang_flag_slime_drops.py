"""SL001 sglang-flag-slime-drops."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.flags import FLAGS_BY_NAME, extracted_flags
from specguard.models import Applicability, Category, Dialect, Edit, Finding, Severity
from specguard.rules.base import CheckContext, Example, Rule, RuleDocs, fix_of
from specguard.rules.slime._slime import (
    DTYPE_ALLOWED_SINCE,
    HARMLESS,
    REPLACEMENT,
    SKIPPED_DESTS_HEAD,
    SLIME_HEAD,
    written_as_sglang,
)


def _dest(flag: str) -> str | None:
    modeled = FLAGS_BY_NAME.get(flag)
    if modeled is not None:
        return modeled.dest
    extracted = extracted_flags().get(flag)
    return extracted.dest if extracted else None


def check(ctx: CheckContext) -> Iterator[Finding]:
    seen: set[str] = set()
    for item in ctx.spec.items:
        if not item.flag or item.extra:
            continue
        spelling = written_as_sglang(item)
        if spelling is None or spelling in seen:
            continue
        dest = _dest(item.flag)
        if dest == "dtype":
            seen.add(spelling)
            yield RULE.finding(
                f"{spelling} is passed to SGLang by slime since {DTYPE_ALLOWED_SINCE}; older slime (e.g. the "
                "Sep-2025 main the EAGLE3 guide was written against) does not register it and stops with "
                "'unrecognized arguments'. There, --fp16 is the only way to set the rollout dtype (it also "
                "switches Megatron training to fp16)",
                flags=(item.flag,),
                severity=Severity.INFO,
            )
            continue
        if dest not in SKIPPED_DESTS_HEAD or dest == "config":
            continue
        seen.add(spelling)
        siblings = [i for i in ctx.spec.items if i.flag == item.flag and written_as_sglang(i) is None]
        fix = None
        if not siblings:
            fix = fix_of(f"remove {spelling}, which slime drops", Applicability.SAFE, Edit(name=item.flag, value=None))
        instead = REPLACEMENT.get(dest, "the slime flag for it")
        yield RULE.finding(
            f"slime does not register {spelling} (it is in slime's skipped_args): slime HEAD drops it silently "
            f"(parse_known_args), older slime stops with 'unrecognized arguments'. Use {instead}",
            flags=(item.flag,),
            fix=fix,
            severity=Severity.WARNING if dest in HARMLESS else None,
        )


RULE = Rule(
    check=check,
    code="SL001",
    category=Category.START,
    name="sglang-flag-slime-drops",
    summary="A --sglang-* flag that slime does not pass to SGLang",
    severity=Severity.ERROR,
    docs=RuleDocs(
        what="Fires for `--sglang-X` where X is one of slime's `skipped_args`: model_path, trust_remote_code, "
        "random_seed, enable_memory_saver, tp_size, port, nnodes, node_rank, dist_init_addr, gpu_id_step, "
        "base_gpu_id, nccl_port, skip_server_warmup, enable_return_routed_experts (aliases included, e.g. "
        "`--sglang-tensor-parallel-size`). `--sglang-dtype` gets an info note.",
        why="slime re-registers every SGLang flag as `--sglang-X` except these (`slime/backends/sglang_utils/"
        f"arguments.py`, HEAD {SLIME_HEAD}), because it sets the fields itself in `_compute_server_args` "
        "(model path from `--hf-checkpoint`, TP from `--rollout-num-gpus-per-engine`, ports and ranks from "
        "its Ray placement, ...). On HEAD the SGLang flags are parsed with `parse_known_args` and Megatron "
        "ignores unknown flags, so the flag is dropped without a word; on Sep-2025 slime the flags were on "
        "Megatron's parser and argparse stops with 'unrecognized arguments'. `dtype` was skipped until "
        f"{DTYPE_ALLOWED_SINCE} (1c81e5d0 'code sync (#1329)'); `enable_return_routed_experts` was added in "
        "Nov 2025 (42cc163f) and `config` at HEAD (where `--sglang-config` is slime's own deployment YAML, "
        "so it is not reported). trust_remote_code and skip_server_warmup are warnings: slime sets both on "
        "anyway.",
        fix="Remove the flag and use slime's own setting (named in the message).",
        fix_safety="Safe: slime drops the flag, so removing it changes nothing that runs. No fix is offered "
        "when the same field is also set through slime's own flag (removing would drop both).",
    ),
    bad=Example(
        argv=("--hf-checkpoint", "/root/Llama-3.1-8B-Instruct", "--sglang-tp-size", "2",
              "--sglang-speculative-algorithm", "EAGLE3"),
        dialect=Dialect.SLIME,
    ),
    good=Example(
        argv=("--hf-checkpoint", "/root/Llama-3.1-8B-Instruct", "--rollout-num-gpus-per-engine", "2",
              "--sglang-speculative-algorithm", "EAGLE3"),
        dialect=Dialect.SLIME,
    ),
    sources=(
        "design: dialects.md §1.2 (skipped_args by version), §1.3 (what slime sets), §1.4 (parsing hazard)",
        f"THUDM/slime {SLIME_HEAD}: slime/backends/sglang_utils/arguments.py (skipped_args, sglang_parse_args)",
        "THUDM/slime 1c81e5d0 (2026-01-04): 'code sync (#1329)' removes dtype from skipped_args",
        "seed: slime-speculative-decoding.en.md (--sglang-dtype float16; --rollout-num-gpus-per-engine)",
    ),
    dialects=(Dialect.SLIME,),
)
