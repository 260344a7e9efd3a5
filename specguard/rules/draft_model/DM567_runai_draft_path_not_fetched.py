"""DM567 runai-draft-path-not-fetched."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B

DRAFT_PATH = "--speculative-draft-model-path"
# utils/runai_utils.py SUPPORTED_SCHEMES (0.5.10 :10, 0.5.16 :14), compared lower-cased (is_runai_obj_uri).
RUNAI_SCHEMES = ("s3://", "gs://", "az://")


def _is_runai_uri(path: str | None) -> bool:
    return path is not None and path.lower().startswith(RUNAI_SCHEMES)


def check(ctx: CheckContext) -> Iterator[Finding]:
    draft = ctx.spec.get("speculative_draft_model_path")
    if ctx.algorithm is None or not _is_runai_uri(draft):
        return
    # Only the target's and the tokenizer's URIs are fetched; a draft at the same URI rides on them.
    tokenizer = ctx.spec.last_value("--tokenizer-path")
    if draft in (ctx.spec.get("model_path"), tokenizer):
        return
    yield RULE.finding(
        f"{ctx.flag(DRAFT_PATH)} {draft} in SGLang {ctx.version}: argument handling downloads the object-store "
        "metadata (config.json, tokenizer) of --model-path and --tokenizer-path only, so the draft's model config "
        "is read from a local cache folder nothing filled and the draft worker fails to start. SGLang 0.5.17 "
        "fetches the draft's metadata too and streams its weights (runai_streamer): upgrade, or download the draft "
        "and give its local path",
        flags=(DRAFT_PATH,),
    )


RULE = Rule(
    check=check,
    code="DM567",
    category=Category.START,
    name="runai-draft-path-not-fetched",
    summary="A draft on object storage (s3://, gs://, az://) other than the target's is never fetched and the "
    "draft fails to load (0.5.10 to 0.5.16)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--speculative-draft-model-path` an object-storage URI (s3://, gs://, az://, any case) that is neither "
        "`--model-path` nor `--tokenizer-path`, with a speculative algorithm, SGLang 0.5.10 (which added Run:ai "
        "object-storage loading) to 0.5.16.",
        why="Before the processes start, SGLang downloads the metadata of object-storage paths so that each process "
        "can read config.json from a local cache folder; up to 0.5.16 it does so for the model and tokenizer paths "
        "only (0.5.10 server_args.py:851-861 `_maybe_download_model_for_runai`; 0.5.16 :3130-3140 "
        "`_handle_model_source_paths`). The draft's `ModelConfig` still swaps its URI for that cache folder "
        "(`_maybe_pull_model_for_runai`, 0.5.16 configs/model_config.py:272, :1558-1563; the folder is "
        "`ObjectStorageModel.get_path`, utils/runai_utils.py:117-132) and reads config.json from it "
        "(`get_config`, :281-290), so the draft worker fails. The draft's weights would also load with the target's "
        "load format, since nothing defaults `--speculative-draft-load-format`. 0.5.17 adds the draft path to the "
        "download loop (server_args.py:3794-3808) and defaults its load format to runai_streamer "
        "(`_handle_load_format`, :7267-7272); 0.5.23 keeps both (arg_groups/model_path_hook.py:30-42, :202-211).",
        fix="Upgrade to SGLang 0.5.17, or download the draft and pass its local path. No automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=(
            *LLAMA31_8B,
            "--speculative-algorithm",
            "EAGLE3",
            DRAFT_PATH,
            "s3://models/llama31-8b-eagle3",
        ),
        sglang_version="0.5.16",
    ),
    good=Example(
        argv=(
            *LLAMA31_8B,
            "--speculative-algorithm",
            "EAGLE3",
            DRAFT_PATH,
            "s3://models/llama31-8b-eagle3",
        ),
        sglang_version="0.5.17",
    ),
    sources=(
        "sglang 0.5.10rc0: python/sglang/srt/utils (no runai_utils.py)",
        "sglang 0.5.10: python/sglang/srt/server_args.py:851-861; utils/runai_utils.py:10",
        (
            "sglang 0.5.16: python/sglang/srt/server_args.py:3130-3140; configs/model_config.py:272,281-290,1558-1563; "
            "utils/runai_utils.py:14,48-50,117-132"
        ),
        "sglang 0.5.17: python/sglang/srt/server_args.py:3794-3808,7267-7272",
        "sglang 0.5.23: python/sglang/srt/arg_groups/model_path_hook.py:30-42,202-211",
    ),
    sglang_versions=">=0.5.10,<0.5.17",
)
