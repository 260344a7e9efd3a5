"""MM: GPU memory and CUDA graphs."""

from specguard.rules.memory import MM001_memory_does_not_fit_gpu as MM001
from specguard.rules.memory import (
    MM002_kv_pool_short_of_context_and_concurrency as MM002,
)
from specguard.rules.memory import (
    MM003_max_running_requests_above_cuda_graph_bs as MM003,
)
from specguard.rules.memory import (
    MM004_cuda_graph_bs_gaps_pad_speculative_batches as MM004,
)
from specguard.rules.memory import MM174_unified_memory_speculative_refused as MM174
from specguard.rules.memory import MM213_deepep_v2_decode_graph_token_budget as MM213
from specguard.rules.memory import (
    MM215_flashinfer_a2a_decode_graph_token_budget as MM215,
)
from specguard.rules.memory import MM216_megamoe_decode_graph_token_budget as MM216
from specguard.rules.memory import (
    MM373_rejection_sampling_draft_probs_recycled as MM373,
)
from specguard.rules.memory import MM471_flydsl_megamoe_decode_capacity as MM471
from specguard.rules.memory import MM491_unified_memory_target_not_hybrid as MM491
from specguard.rules.memory import MM492_unified_memory_draft_cannot_fuse as MM492
from specguard.rules.memory import (
    MM511_cutedsl_a2a_verify_graph_token_budget as MM511,
)
from specguard.rules.memory import (
    MM602_dflash_full_prefill_graph_keeps_padded_rows as MM602,
)

RULES = (
    MM001.RULE,
    MM002.RULE,
    MM003.RULE,
    MM004.RULE,
    MM174.RULE,
    MM213.RULE,
    MM215.RULE,
    MM216.RULE,
    MM373.RULE,
    MM471.RULE,
    MM491.RULE,
    MM492.RULE,
    MM511.RULE,
    MM602.RULE,
)
