"""What launch reads from a runtime's /server_info (specguard.launch.verify)."""

from __future__ import annotations

from specguard.launch.verify import batching_summary


def _info(stats: dict | None) -> dict:
    state = {"avg_spec_accept_length": 3.1}
    if stats is not None:
        state["batching_stats"] = stats
    return {"speculative_algorithm": "EAGLE3", "internal_states": [state]}


def test_the_reference_runtimes_counters_are_summarised():
    stats = {
        "decode_iterations": 40,
        "batch_size_histogram": {"1": 10, "4": 20, "16": 10},
        "avg_batch_size": 6.25,
        "spec_accept_length_since_start": 3.684,
        "spec_verify_rounds_total": 40,
    }
    assert batching_summary(_info(stats)) == (
        "40 decode iterations, 6.25 requests per iteration on average (largest 16); "
        "accept length 3.68 over 40 verify passes since start"
    )


def test_plain_decoding_has_no_accept_length_part():
    stats = {"decode_iterations": 3, "batch_size_histogram": {"1": 3}, "avg_batch_size": 1.0}
    assert batching_summary(_info(stats)) == "3 decode iterations, 1.00 requests per iteration on average (largest 1)"


def test_nothing_to_say_without_counters():
    assert batching_summary(_info(None)) is None  # SGLang reports no batching_stats
    assert batching_summary(_info({"decode_iterations": 0})) is None  # nothing decoded yet
    assert batching_summary(None) is None
    assert batching_summary({"internal_states": ["not a dict"]}) is None
