"""The values SGLang will run with, as one frozen record every rule reads (``ctx.resolution``)."""

from __future__ import annotations

from specguard.records import Record, field
from specguard.sglang_facts.defaults import SpecParams


class Resolution(Record):
    """The values SGLang will run with; ``set_by`` names the resolution step for each one it sets."""

    algorithm: str | None = None
    num_steps: int | None = None
    eagle_topk: int | None = None
    num_draft_tokens: int | None = None
    draft_model_path: str | None = None
    max_running_requests: int | None = None
    attention_backend: str | None = None  # the backend the target runs: --attention-backend, else SGLang's default for the GPU
    draft_attention_backend: str | None = None
    page_size: int | None = None  # the KV page size after the backends' page constraints
    cuda_graph_max_bs: int | None = None  # the decode CUDA-graph max batch size at argument time
    disable_overlap_schedule: bool | None = None
    # SGLANG_ENABLE_SPEC_V2=1 keeps the overlap scheduler on over --disable-overlap-schedule (0.5.4.post1-0.5.10.post1)
    spec_v2_env_overrides_overlap_flag: bool = False
    enable_mixed_chunk: bool | None = None
    # --speculative-adaptive: True when SGLang runs it, False when it switches it off, None when not asked
    adaptive: bool | None = None
    adaptive_off_reason: str | None = None  # why SGLang switches --speculative-adaptive off
    attention_dp_size: int = 1  # the attention-DP width SGLang resolves (1: no attention DP)
    # Set by a model hook (resolution/model_hooks.py); None where the hook does not set it.
    fp8_gemm_runner_backend: str | None = None
    linear_attn_verify_backend: str | None = None
    enable_symm_mem: bool | None = None  # False where SGLang drops --enable-symm-mem
    set_by: dict[str, str] = field(default_factory=dict)

    def params(self) -> SpecParams | None:
        if self.num_steps is None or self.eagle_topk is None or self.num_draft_tokens is None:
            return None
        return SpecParams(num_steps=self.num_steps, eagle_topk=self.eagle_topk, num_draft_tokens=self.num_draft_tokens)
