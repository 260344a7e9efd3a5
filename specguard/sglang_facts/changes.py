"""Every SGLang version boundary specguard uses, one named change each.

A change is the first release that behaves the new way, and where that was read (a release file
and line, a PR). Rules, the resolution, memory and the runtime import these names; none of them
writes a ``Version("0.x")`` of its own, so one boundary is never written twice with two values.

    if ctx.version >= SPEC_V2_DEFAULT_ON.release: ...
    if SPEC_V2_DEFAULT_ON.present_in(ctx.version): ...
"""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.version import Version


@dataclass(frozen=True)
class Change:
    """The first SGLang release with a behaviour, and the source it was read from."""

    first_release: str
    source: str
    release: Version = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "release", Version(self.first_release))

    def present_in(self, version: Version) -> bool:
        return version >= self.release


# ---- resolution and memory ----
# Read from the released wheels (``pip download --no-deps sglang==X``); paths under sglang/srt/.

# The default attention backend (P38): up to 0.5.4 ``ModelRunner.model_specific_adjustment`` picked
# it after argument resolution, from the resolved topk (0.5.1 ``model_executor/model_runner.py:414-449``);
# from 0.5.5 ``ServerArgs`` picks it before the speculative settings are resolved, from the topk the
# user typed (0.5.23 ``arg_groups/model_override_base.py:277-351``).
DEFAULT_BACKEND_BEFORE_SPEC = Change("0.5.5", "0.5.5 server_args.py:1135-1178")
# trtllm_mha became the default attention backend on SM100.
TRTLLM_DEFAULT_ON_SM100 = Change("0.5.7", "0.5.7 server_args.py:1517")
# ``--attn-dp-size``; before it ``--enable-dp-attention`` alone turned attention DP on.
ATTN_DP_SIZE_FLAG = Change("0.5.22", "0.5.22 arg_groups/parallel_hook.py:39-61")
# --speculative-adaptive arrived in 0.5.11 (server_args.py:5530-5540), switched off while the overlap
# scheduler runs (0.5.11 speculative/adaptive_spec_params.py:38-42: "adaptive is only implemented for
# EAGLEWorker v1"); 0.5.12 dropped that reason.
ADAPTIVE_ON_OVERLAP = Change("0.5.12", "PR 23336; 0.5.11 speculative/adaptive_spec_params.py:38-42")
# SpecV2, the overlap scheduler for speculative decoding, release by release:
#   <= 0.5.4      no V2: the EAGLE family always turns the overlap scheduler off
#   0.5.5-0.5.10  V2 behind SGLANG_ENABLE_SPEC_V2 (default off): EAGLE and EAGLE3 (0.5.5: EAGLE3
#                 shares EAGLE's worker factory, spec_info.py:264-269, 301-305), STANDALONE (0.5.9)
#   0.5.11-0.5.12 default on; an explicit topk > 1 falls back to V1 (overlap off)
#   0.5.13        V2 always; the variable only chooses overlap
#   >= 0.5.14     the variable is gone (a warning until 0.5.20, no trace from 0.5.21)
SPEC_V2 = Change("0.5.5", "0.5.5 environ.py:258 EnvBool(False); server_args.py:1541-1548")
SPEC_V2_STANDALONE = Change("0.5.9", "0.5.9 speculative/spec_info.py:84-94 (StandaloneWorkerV2)")
SPEC_V2_DEFAULT_ON = Change("0.5.11", "0.5.11 environ.py:459 EnvBool(True); server_args.py:3469-3473")
SPEC_V2_ALWAYS = Change("0.5.13", "0.5.13 arg_groups/speculative_hook.py:288-291")
SPEC_V2_VARIABLE_GONE = Change("0.5.14", "0.5.14 arg_groups/speculative_hook.py:69-71")
# NGRAM kept the overlap scheduler off up to 0.5.13.
NGRAM_OVERLAP = Change("0.5.14", "0.5.13 arg_groups/speculative_hook.py:427-430 (the last release that turns it off)")
# ``supports_mixed_chunk`` per algorithm; before it the EAGLE family and DFLASH turned mixed chunk off.
MIXED_CHUNK_PER_ALGORITHM = Change("0.5.19", "0.5.19 speculative/spec_info.py:132, spec_registry.py:73")
# --cuda-graph-max-bs-decode / --cuda-graph-bs-decode (the old spellings removed in 0.5.20).
CUDA_GRAPH_DECODE_FLAGS = Change("0.5.14", "0.5.14 server_args.py:6358-6373")
