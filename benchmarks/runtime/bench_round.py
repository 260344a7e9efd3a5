"""In process: the 16-row EAGLE3 round against the 16-row plain decode step, and the ceiling they
set on bench_concurrency.py's "EAGLE3 c16 / plain c16" (issue #28), with no server, HTTP or
client in the way.

    python benchmarks/runtime/bench_round.py [--levels 20] [--new-tokens 64] [--json OUT]

The tiny pair and the tiny EAGLE3 head (chain k=3, the preset's), set up as the server sets them
up (its cache rows and slots, one torch thread). A level is bench_concurrency.py's concurrency-16
level without the server: 16 greedy requests (its prompts, in its order), prefilled together and
decoded to ``--new-tokens`` each, a request leaving the batch when it has them, as in the
server. Levels of plain decoding and of EAGLE3 alternate (the order reversed every other level),
so load on a shared machine hits both alike; every step or round that advanced all 16 rows is
timed, wall clock and the thread's CPU time, and the medians are kept.

Reported: the 16-row EAGLE3 round, the tokens it gives a request (accepted drafts plus the bonus,
counting only the tokens the request asked for), the 16-row plain step, and the ceiling
``tokens per round x plain step / round``: what EAGLE3 at concurrency 16 could give over plain
decoding at concurrency 16 if nothing but these forwards and their host work took time. Beside
it, the same ratio over a whole level's decoding (its tail, where rows have left, included;
prefill excluded). Every EAGLE3 output is checked against plain greedy decoding (exit 1 on a
difference).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_concurrency import PROMPTS

ROWS = 16
CONTEXT = 2048  # the tiny pair's max_position_embeddings: the server's context length


def build(new_tokens: int):  # type: ignore[no-untyped-def]
    """Plain and EAGLE3 decoders on their own targets, each set up as its server sets it up."""
    import torch

    from specguard.runtime.eagle import load_eagle_head
    from specguard.runtime.flags import SPEC_MAX_RUNNING_REQUESTS
    from specguard.runtime.loader import load_model
    from specguard.runtime.speculative import Decoder, SamplingParams, SpecConfig
    from specguard.runtime.tiny import ensure_tiny_eagle3, ensure_tiny_pair
    from specguard.runtime.tokenizer import Tokenizer

    torch.set_num_threads(1)
    pair = ensure_tiny_pair()
    rows = (
        SPEC_MAX_RUNNING_REQUESTS + 1
    )  # and the row kept for /health_generate (_cache_rows)
    eagle3 = SpecConfig("EAGLE3", num_steps=3, topk=1, num_draft_tokens=4)
    plain_target = load_model(pair.target)
    plain_target.setup_cache(CONTEXT + 1 + 1, rows)
    target = load_model(pair.target)
    head = load_eagle_head(ensure_tiny_eagle3().draft, target)
    target.setup_cache(CONTEXT + eagle3.num_draft_tokens + 1, rows)
    head.setup_cache(CONTEXT + eagle3.num_steps * eagle3.topk + 2, rows)
    tok = Tokenizer(pair.target)
    prompts = [tok.encode(PROMPTS[i % len(PROMPTS)]) for i in range(ROWS)]
    params = SamplingParams(max_new_tokens=new_tokens, temperature=0.0)
    return (
        {
            "plain": Decoder(plain_target, SpecConfig()),
            "eagle3": Decoder(target, eagle3, head),
        },
        prompts,
        params,
    )


def level(decoder, prompts, params, new_tokens: int) -> dict:  # type: ignore[no-untyped-def]
    """One level: (wall, CPU) seconds of each 16-row step and useful tokens per request of each,
    (wall, CPU) seconds of all its steps (the tail's, with fewer rows, too), outputs."""
    seqs = [decoder.start(prompt, params, row) for row, prompt in enumerate(prompts)]
    decoder.prefill_many(seqs)
    step = decoder.spec_step if decoder.speculative else decoder.plain_step
    outputs = [[seq.committed[-1]] for seq in seqs]
    running = list(range(len(seqs)))
    times: list[tuple[float, float]] = []
    tokens: list[float] = []
    total = [0.0, 0.0]
    while running:
        wall, cpu = time.perf_counter(), time.thread_time()
        results = step([seqs[i] for i in running])
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        total[0] += wall
        total[1] += cpu
        useful = [
            min(len(r.tokens), new_tokens - len(outputs[i]))
            for i, r in zip(running, results)
        ]
        if len(running) == ROWS:
            times.append((wall, cpu))
            tokens.append(sum(useful) / ROWS)
        for i, r, n in zip(running, results, useful):
            outputs[i].extend(r.tokens[:n])
        running = [i for i in running if len(outputs[i]) < new_tokens]
    return {"times": times, "tokens": tokens, "level": tuple(total), "outputs": outputs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--levels", type=int, default=20, help="timed levels per mode (alternating)"
    )
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    opts = parser.parse_args()

    import torch

    decoders, prompts, params = build(opts.new_tokens)
    began = datetime.datetime.now(datetime.UTC)
    load_before = os.getloadavg()
    with torch.inference_mode():
        reference = level(decoders["plain"], prompts, params, opts.new_tokens)[
            "outputs"
        ]  # and a warm-up
        level(decoders["eagle3"], prompts, params, opts.new_tokens)
        samples: dict[str, dict[str, list]] = {
            mode: {"times": [], "tokens": [], "levels": []} for mode in decoders
        }
        differing = checked = 0
        order = list(decoders)
        for index in range(opts.levels):
            for mode in order if index % 2 == 0 else order[::-1]:
                got = level(decoders[mode], prompts, params, opts.new_tokens)
                samples[mode]["times"] += got["times"]
                samples[mode]["tokens"] += got["tokens"]
                samples[mode]["levels"].append(got["level"])
                differing += sum(
                    out != ref for out, ref in zip(got["outputs"], reference)
                )
                checked += len(reference)
    load_after = os.getloadavg()

    def medians(mode: str, key: str) -> tuple[float, float]:
        times = samples[mode][key]
        return statistics.median(w for w, _ in times) * 1e3, statistics.median(
            c for _, c in times
        ) * 1e3

    round_wall, round_cpu = medians("eagle3", "times")
    step_wall, step_cpu = medians("plain", "times")
    eagle3_level, plain_level = medians("eagle3", "levels"), medians("plain", "levels")
    per_round = statistics.mean(samples["eagle3"]["tokens"])
    figures = {
        "date": began.strftime("%Y-%m-%d %H:%M UTC"),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "levels": opts.levels,
        "eagle3_round_ms": {"wall": round(round_wall, 3), "cpu": round(round_cpu, 3)},
        "eagle3_rounds_timed": len(samples["eagle3"]["times"]),
        "eagle3_tokens_per_round": round(per_round, 3),
        "plain_step_ms": {"wall": round(step_wall, 3), "cpu": round(step_cpu, 3)},
        "plain_steps_timed": len(samples["plain"]["times"]),
        "ceiling": {
            "wall": round(per_round * step_wall / round_wall, 3),
            "cpu": round(per_round * step_cpu / round_cpu, 3),
        },
        "level_ms": {
            "eagle3": [round(x, 2) for x in eagle3_level],
            "plain": [round(x, 2) for x in plain_level],
        },
        "level_ratio": {
            "wall": round(plain_level[0] / eagle3_level[0], 3),
            "cpu": round(plain_level[1] / eagle3_level[1], 3),
        },
        "outputs_differing_from_plain_greedy": f"{differing} of {checked}",
    }
    print(
        f"\n{figures['date']}, load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
        f"{opts.levels} levels per mode, {ROWS} rows, {opts.new_tokens} new tokens, greedy, one torch thread\n"
    )
    print("| 16 rows | wall ms (median) | CPU ms (median) | timed |")
    print("|---|---|---|---|")
    print(
        f"| EAGLE3 chain k=3 round | {round_wall:.3f} | {round_cpu:.3f} | {figures['eagle3_rounds_timed']} |"
    )
    print(
        f"| plain step | {step_wall:.3f} | {step_cpu:.3f} | {figures['plain_steps_timed']} |"
    )
    print(f"\ntokens per request per EAGLE3 round: {per_round:.2f}")
    print(
        f"ceiling of EAGLE3 c16 / plain c16 (tokens per round x plain step / round): "
        f"{figures['ceiling']['wall']:.2f}x wall, {figures['ceiling']['cpu']:.2f}x CPU"
    )
    print(
        f"a whole level's decoding (its tail with fewer rows too), plain / EAGLE3: "
        f"{plain_level[0]:.1f} / {eagle3_level[0]:.1f} ms wall = {figures['level_ratio']['wall']:.2f}x, "
        f"{plain_level[1]:.1f} / {eagle3_level[1]:.1f} ms CPU = {figures['level_ratio']['cpu']:.2f}x"
    )
    print(
        f"EAGLE3 outputs differing from plain greedy decoding: {differing} of {checked}"
    )
    if opts.json:
        opts.json.write_text(json.dumps(figures, indent=2))
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
