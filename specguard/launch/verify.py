"""Compare what the runtime resolved (``/server_info``) with what specguard predicted; read the statistics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from specguard.resolution import Resolution, canonical_algorithm

# (what specguard predicts, the runtime's server_info key)
COMPARED_FIELDS: tuple[tuple[str, str], ...] = (
    ("algorithm", "speculative_algorithm"),
    ("num_steps", "speculative_num_steps"),
    ("eagle_topk", "speculative_eagle_topk"),
    ("num_draft_tokens", "speculative_num_draft_tokens"),
    ("max_running_requests", "max_running_requests"),
)


@dataclass(frozen=True)
class Comparison:
    field: str
    predicted: Any
    resolved: Any

    @property
    def matches(self) -> bool:
        return _norm(self.predicted) == _norm(self.resolved)


def compare(predicted: Resolution, server_info: dict[str, Any]) -> list[Comparison]:
    """One row per field the runtime reports and specguard predicts (unknown predictions are skipped)."""
    rows = []
    for ours, theirs in COMPARED_FIELDS:
        if theirs not in server_info:
            continue
        value = getattr(predicted, ours)
        if value is None and ours != "algorithm":
            continue
        resolved = server_info[theirs]
        if ours == "algorithm":
            value, resolved = canonical_algorithm(value), canonical_algorithm(resolved)
        rows.append(Comparison(theirs, value, resolved))
    return rows


def speculation_on(server_info: dict[str, Any]) -> bool:
    return bool(server_info.get("speculative_algorithm"))


def avg_spec_accept_length(server_info: dict[str, Any] | None) -> float | None:
    """``internal_states[0].avg_spec_accept_length``: absent until the first decode-log roll-up."""
    if not server_info:
        return None
    states = server_info.get("internal_states") or []
    if states and isinstance(states[0], dict) and states[0].get("avg_spec_accept_length") is not None:
        return float(states[0]["avg_spec_accept_length"])
    return None


def batching_summary(server_info: dict[str, Any] | None) -> str | None:
    """The scheduler's own counters, where the runtime reports them (specguard's reference
    runtime: ``internal_states[0].batching_stats``; SGLang has no such key): iterations, the batch
    sizes they ran at, and the accept length over every verify pass since start."""
    states = (server_info or {}).get("internal_states") or []
    stats = states[0].get("batching_stats") if states and isinstance(states[0], dict) else None
    if not isinstance(stats, dict) or not stats.get("decode_iterations"):
        return None
    sizes = [int(size) for size in (stats.get("batch_size_histogram") or {})]
    text = (
        f"{stats['decode_iterations']} decode iterations, {float(stats.get('avg_batch_size') or 0):.2f} requests "
        f"per iteration on average (largest {max(sizes, default=0)})"
    )
    accept, rounds = stats.get("spec_accept_length_since_start"), stats.get("spec_verify_rounds_total")
    if accept is not None and rounds:
        text += f"; accept length {float(accept):.2f} over {rounds} verify passes since start"
    return text


def accept_length_meaning(value: float, server_info: dict[str, Any] | None) -> str:
    """What an accept length says, against the most a verify pass can commit."""
    ceiling = None
    if server_info:
        steps, draft_tokens = server_info.get("speculative_num_steps"), server_info.get("speculative_num_draft_tokens")
        if canonical_algorithm(server_info.get("speculative_algorithm") or "") == "NGRAM":
            # An NGRAM tree has no depth cap: one long corpus match can chain every draft token,
            # and its speculative_num_steps (tokens // BFS breadth) bounds nothing (SGLang 0.5.23
            # speculative/ngram_info.py:48-53, max_tree_depth = draft_token_num).
            ceiling = draft_tokens or None
        else:
            if steps:
                ceiling = steps + 1  # one token per draft step along the accepted path, plus the bonus
            if draft_tokens and ceiling:
                ceiling = min(ceiling, draft_tokens)
    text = (
        f"{value:.2f} tokens committed per target forward (accepted drafts plus the target's own bonus token); "
        "1.00 means no draft token was ever accepted"
    )
    if ceiling:
        text += f", {ceiling} is the most this tree can give (every draft accepted)"
    if value <= 1.05:
        text += ". Speculation is not paying off: check that the draft belongs to this target"
    return text


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        return value.upper()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
