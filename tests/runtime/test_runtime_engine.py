"""The scheduler (``specguard.runtime.engine.Engine``) in this process, on the tiny target with
the real decoder: what it hands the decoder each iteration."""

from __future__ import annotations

import threading

from specguard.runtime.flags import parse_flags
from specguard.runtime.generate_input import GenerateInput, SamplingParams
from specguard.runtime.scheduler_process import build_engine


def test_a_request_that_takes_a_freed_row_is_batched_in_row_order(tiny_pair):
    """A request admitted into a finished request's row joins the batch in row order, so the
    rows stay one contiguous ascending run, which the model reads as a view of the cache rather
    than gathering it in every layer (model.row_range_of)."""
    args = parse_flags(["--model-path", str(tiny_pair.target), "--context-length", "256"]).args
    engine, _ = build_engine(args)
    batches: list[list[int]] = []
    real_step = engine.decoder.plain_step

    def recording_step(seqs):  # the real decode step, with the rows it was given written down
        batches.append([seq.row for seq in seqs])
        return real_step(seqs)

    engine.decoder.plain_step = recording_step  # type: ignore[method-assign]
    done: dict[str, threading.Event] = {rid: threading.Event() for rid in ("short", "long1", "long2", "late")}
    outputs: dict[str, list[int]] = {}

    def deliver_to(rid: str):
        def deliver(kind: str, payload) -> None:
            assert kind != "error", payload
            if kind == "done":
                outputs[rid] = payload["output_ids"]
                done[rid].set()

        return deliver

    def submit(rid: str, new_tokens: int) -> None:
        sampling = SamplingParams(max_new_tokens=new_tokens, temperature=0.0)
        engine.submit(GenerateInput(input_ids=[5, 6, 7], sampling=sampling, ignore_eos=True, rid=rid), deliver_to(rid))

    engine.start()
    try:
        submit("short", 2)
        submit("long1", 120)
        submit("long2", 120)
        assert done["short"].wait(60)
        submit("late", 8)  # takes row 0, the short request's, while rows 1 and 2 still decode
        for rid in ("late", "long1", "long2"):
            assert done[rid].wait(60), rid
    finally:
        engine.stop()
        engine.join(timeout=30)
    assert [len(outputs[rid]) for rid in ("short", "long1", "long2", "late")] == [2, 120, 120, 8]
    assert any(batch == [0, 1, 2] for batch in batches[2:]), batches  # "late" rejoined, first
    assert all(batch == sorted(batch) for batch in batches), [b for b in batches if b != sorted(b)]
