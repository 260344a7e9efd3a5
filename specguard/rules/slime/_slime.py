"""What slime (THUDM/slime) does with ``--sglang-*`` flags. Pure data, read from slime's git history.

slime HEAD = 624b824a (2026-08-21); file ``slime/backends/sglang_utils/arguments.py``.
"""

from __future__ import annotations

from specguard.dialects import SLIME_SPELLING
from specguard.spec import FlagItem

SLIME_HEAD = "624b824a (2026-08-21)"

# ``skipped_args`` at HEAD: SGLang arguments (by dest) that slime never registers as --sglang-*.
SKIPPED_DESTS_HEAD = (
    "model_path",
    "config",
    "trust_remote_code",
    "random_seed",
    "enable_memory_saver",
    "tp_size",
    "port",
    "nnodes",
    "node_rank",
    "dist_init_addr",
    "gpu_id_step",
    "base_gpu_id",
    "nccl_port",
    "skip_server_warmup",
    "enable_return_routed_experts",
)
# "dtype" was skipped until 1c81e5d0 "code sync (#1329)" (2026-01-04).
DTYPE_ALLOWED_SINCE = "1c81e5d0 (2026-01-04)"

# What to write instead: slime sets each of these itself (``sglang_engine.py`` ``_compute_server_args``).
REPLACEMENT = {
    "model_path": "--hf-checkpoint (slime passes it as model_path)",
    "trust_remote_code": "nothing: slime always passes trust_remote_code=True",
    "random_seed": "--seed (slime passes seed + rank * num_gpus_per_node)",
    "enable_memory_saver": "--offload-rollout (slime passes it as enable_memory_saver)",
    "tp_size": "--rollout-num-gpus-per-engine (slime sets tp = gpus per engine // --sglang-pp-size)",
    "port": "nothing: slime allocates each engine's port",
    "nccl_port": "nothing: slime allocates each engine's NCCL port",
    "nnodes": "nothing: slime derives nnodes from --rollout-num-gpus-per-engine and --num-gpus-per-node",
    "node_rank": "nothing: slime derives each engine's node rank",
    "dist_init_addr": "nothing: slime sets each engine's dist_init_addr",
    "gpu_id_step": "nothing: slime passes gpu_id_step=1",
    "base_gpu_id": "nothing: slime picks each engine's base GPU from its Ray placement",
    "skip_server_warmup": "nothing: slime always skips the warm-up",
    "enable_return_routed_experts": "--use-rollout-routing-replay (slime then sets it)",
    "config": "a YAML of server args is not supported; --sglang-config is slime's own deployment YAML",
}
# Dropped flags whose effect slime applies anyway: a warning, not an error.
HARMLESS = frozenset({"trust_remote_code", "skip_server_warmup"})

# slime's own --sglang-* flags (as the parser canonicalises them: --sglang-X -> --X).
SLIME_OWN_SGLANG_FLAGS = frozenset(
    {"--router-ip", "--router-port", "--router-request-timeout-secs", "--server-concurrency", "--config"}
)


def written_as_sglang(item: FlagItem) -> str | None:
    """The ``--sglang-*`` spelling the user typed for this item, or None if it came from a slime flag.

    The parser records ``written`` only when the spelling differs from the dialect's canonical one;
    for the fields slime owns (model path, TP size) the canonical spelling is slime's own flag.
    An alias such as ``--sglang-model`` cannot be told apart from ``--hf-checkpoint`` (written None).
    """
    if item.written is not None:
        return item.written if item.written.startswith("--sglang-") else None
    if item.flag in SLIME_SPELLING:
        return None
    return "--sglang-" + item.flag[2:]
