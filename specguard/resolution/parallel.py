"""The attention-DP width SGLang resolves."""

from __future__ import annotations

from specguard.models import Environment
from specguard.sglang_facts.changes import ATTN_DP_SIZE_FLAG
from specguard.spec import LaunchSpec


def attention_dp_size(spec: LaunchSpec, env: Environment) -> int:
    """The attention-DP width SGLang resolves (1 = no attention DP)."""
    dp = spec.get("dp_size") or 1
    enabled = spec.get("enable_dp_attention")
    if ATTN_DP_SIZE_FLAG.present_in(env.version):
        attn = spec.get("attn_dp_size") or 1
        if attn > 1:
            return attn
        return dp if enabled and dp > 1 else 1
    # Before --attn-dp-size the switch itself is the test (``if ... and self.enable_dp_attention``).
    return max(dp, 2) if enabled else 1
