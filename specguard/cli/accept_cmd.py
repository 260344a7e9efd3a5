"""``specguard accept``: how many tokens a draft gets accepted on your prompts, before renting a GPU.

Runs the bundled reference runtime's lossless decoder (CPU or CUDA) over a grid of
steps/topk/draft tokens, prints the accept length and per-position acceptance of each setting
(a table and a terminal plot; ``--plot FILE.png`` draws them), and with ``--gpu`` estimates
tokens/s per setting and batch size from a roofline model (``specguard/roofline.py``).

Exit codes: 0 done; 2 usage or input error (bad flag, model, prompts file); 130 stopped by
Ctrl-C (the figures measured so far are printed first).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, overload

from specguard.cli.errors import clean_errors
from specguard.cli.parsing import Invocation, Option, at_least
from specguard.errors import InputError
from specguard.records import Record

DEFAULT_BATCH_SIZES = "1,2,4,8,16,32,64,128,256"


def _ints(flag: str, text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"{flag} {text!r}: expected comma-separated integers", hint="e.g. 1,2,3,4") from None
    if any(v < 1 for v in values):
        raise InputError(f"{flag} {text!r}: values must be at least 1")
    return values


@overload
def _resolve_tiny(reference: str) -> str: ...
@overload
def _resolve_tiny(reference: None) -> None: ...
def _resolve_tiny(reference: str | None) -> str | None:
    if reference is None or not reference.startswith("tiny:"):
        return reference
    from specguard.runtime.tiny import (
        ensure_tiny_eagle3,
        ensure_tiny_pair,
        ensure_tiny_target,
    )

    # Each reference builds only its own model (the target alone trains no draft).
    builders = {
        "tiny:target": lambda: ensure_tiny_target(),
        "tiny:draft": lambda: ensure_tiny_pair().draft,
        "tiny:eagle3": lambda: ensure_tiny_eagle3().draft,
    }
    if reference not in builders:
        raise InputError(f"unknown tiny model {reference!r}", hint="use tiny:target, tiny:draft or tiny:eagle3")
    return str(builders[reference]())


class AcceptOptions(Record):
    target: Annotated[str, Option("--target", "Target checkpoint directory (Hugging Face layout), or tiny:target.", required=True)]
    draft: Annotated[str | None, Option("--draft", "Draft model or EAGLE/EAGLE3 head directory, or tiny:draft / tiny:eagle3; none: NGRAM.")] = None
    algorithm: Annotated[str | None, Option("--algorithm", "STANDALONE, NGRAM, EAGLE or EAGLE3 (default: from the draft's config).")] = None
    prompts: Annotated[
        Path | None, Option("--prompts", "JSONL (prompt / text / messages per line) or text (prompts separated by blank lines).", convert=Path)
    ] = None
    max_new_tokens: Annotated[int, Option("--max-new-tokens", "Tokens generated per prompt.", convert=at_least(int, 1))] = 64
    steps: Annotated[str, Option("--steps", "speculative_num_steps values to try.")] = "1,2,3,4,5"
    topk: Annotated[str, Option("--topk", "speculative_eagle_topk values (NGRAM: max BFS breadth).")] = "1"
    draft_tokens: Annotated[str, Option("--draft-tokens", "speculative_num_draft_tokens for trees (chains use steps + 1).")] = "8"
    temperature: Annotated[float, Option("--temperature", "0: greedy.", convert=at_least(float, 0.0))] = 0.0
    device: Annotated[str, Option("--device", "cpu or cuda: where to measure.")] = "cpu"
    dtype: Annotated[str, Option("--dtype", "auto, float32, float16 or bfloat16.")] = "auto"
    gpu: Annotated[str | None, Option("--gpu", "Estimate tokens/s on this GPU (H100, H200, A100, A100-40GB).")] = None
    batch_sizes: Annotated[str, Option("--batch-sizes", "Batch sizes for the --gpu estimate.")] = DEFAULT_BATCH_SIZES
    context: Annotated[int | None, Option("--context", "Context length for the estimate (default: mean prompt + half the output).", convert=int)] = None
    plot: Annotated[Path | None, Option("--plot", "Also draw the figures to this PNG file (needs matplotlib).", convert=Path)] = None
    output_format: Annotated[str, Option("--format", "table or json.")] = "table"


OPTIONS = {"accept": AcceptOptions}
DETAILS = {"accept": (__doc__ or "").split("\n\n", 1)[1].strip()}


def run(invocation: Invocation[AcceptOptions]) -> int:
    """Measure accept length and per-position acceptance for a grid of speculative settings."""
    o = invocation.options
    output_format, device, plot = o.output_format, o.device, o.plot
    as_json = output_format == "json"
    with clean_errors(lambda: as_json):
        if output_format not in ("table", "json"):
            raise InputError(f"--format {output_format!r}", hint="use table or json")
        if device not in ("cpu", "cuda"):
            raise InputError(f"--device {device!r}", hint="use cpu or cuda")
        if plot is not None and plot.suffix.lower() != ".png":
            raise InputError(f"--plot {plot}: expected a .png file name")
        _run(o.target, o.draft, o.algorithm, o.prompts, o.max_new_tokens, o.steps, o.topk, o.draft_tokens, o.temperature, device,
             o.dtype, o.gpu, o.batch_sizes, o.context, plot, as_json)
    return 0


def _run(target, draft, algorithm, prompts, max_new_tokens, steps, topk, draft_tokens, temperature, device, dtype,  # type: ignore[no-untyped-def]
         gpu, batch_sizes, context, plot, as_json) -> None:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from specguard.environment import gpu_by_name, gpu_throughput

    console = Console(stderr=True)
    steps_list, topk_list, ndt_list = _ints("--steps", steps), _ints("--topk", topk), _ints("--draft-tokens", draft_tokens)
    batches = _ints("--batch-sizes", batch_sizes)
    hardware = None
    if gpu is not None:
        spec = gpu_by_name(gpu)
        bandwidth, flops, source = gpu_throughput(spec)
        hardware = {"gpu": spec.name, "bandwidth": bandwidth, "flops": flops, "source": source, "weight_bytes": 2, "kv_bytes": 2}
    if plot is not None:
        import importlib.util

        if importlib.util.find_spec("matplotlib") is None:
            raise InputError("--plot needs matplotlib", hint="pip install 'specguard[plot]' (or pip install matplotlib)")
    missing = [m for m in ("torch", "safetensors", "tokenizers") if importlib_missing(m)]
    if missing:
        raise InputError(f"specguard accept runs the reference runtime and needs {', '.join(missing)}", hint="pip install 'specguard[runtime]'")

    import torch

    from specguard.runtime.acceptance import (
        detect_algorithm,
        forward_cost,
        load_pair,
        measure,
        read_prompts,
        seconds_per_forward,
        settings_grid,
    )
    from specguard.runtime.errors import RuntimeInputError
    from specguard.runtime.flags import SUPPORTED_ALGORITHMS

    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda: no CUDA device is available to torch here", hint="use --device cpu")
    draft_dir = _resolve_tiny(draft)  # first: a tiny:draft builds the pair, whose target tiny:target then is
    target_dir = _resolve_tiny(target)
    try:
        algo = (algorithm or detect_algorithm(draft_dir)).upper()
        if algo not in SUPPORTED_ALGORITHMS:
            raise InputError(f"--algorithm {algorithm}", hint="use STANDALONE, NGRAM, EAGLE or EAGLE3")
        if algo != "NGRAM" and draft_dir is None:
            raise InputError(f"--algorithm {algo} needs --draft")
        grid = settings_grid(algo, steps_list, topk_list, ndt_list)
        if not grid:
            raise InputError("no valid setting in the grid", hint="num_draft_tokens must be at most 1 + topk + (steps - 1) * topk^2")
        _refuse_impossible_rounds(algo, grid, target_dir)
        if device == "cpu":
            torch.set_num_threads(max(1, min(torch.get_num_threads(), 8)))
        pair = load_pair(target_dir, draft_dir if algo != "NGRAM" else None, algo, device, None if dtype == "auto" else dtype)
        if device == "cpu" and sum(p.numel() for p in pair.target.parameters()) < 50_000_000:
            torch.set_num_threads(1)  # a small model's step is per-op overhead: threads only add synchronisation
        texts = read_prompts(prompts, pair.tokenizer)
    except RuntimeInputError as error:  # CheckpointError included: one clear line
        raise InputError(str(error)) from None
    prompt_ids = [pair.tokenizer.encode(t) or [0] for t in texts]
    longest = max(len(p) for p in prompt_ids) + max_new_tokens
    context = pair.target.config.max_position_embeddings
    if longest > context:
        # The cache is sized for the longest prompt plus its new tokens: past the target's context
        # the positions have no meaning and the allocation may not fit at all.
        raise InputError(
            f"--max-new-tokens {max_new_tokens}: the longest prompt plus {max_new_tokens} new tokens is {longest} tokens, "
            f"past the target's context of {context}",
            hint=f"give --max-new-tokens at most {max(1, context - (longest - max_new_tokens))}",
        )
    pair.setup(longest, max(s.num_draft_tokens + s.num_steps * s.topk for s in grid))

    # Expected duration: one target forward per verify, upper bound of max_new_tokens verifies per prompt.
    per_forward = seconds_per_forward(pair, prompt_ids)
    draft_share = 0.0 if pair.draft is None else max(s.num_steps for s in grid)
    expected = len(grid) * len(prompt_ids) * max_new_tokens / 2 * per_forward * (1 + 0.2 * draft_share)
    # Always said (on stderr, before measuring): with big models on a small machine it is minutes or hours.
    console.print(
        f"{algo}: {len(grid)} settings x {len(prompt_ids)} prompts x {max_new_tokens} tokens on {device}; "
        f"a target forward takes {per_forward * 1000:,.1f} ms, so this should take about {expected:,.0f} s "
        "(Ctrl-C stops early and prints the figures so far)"
    )
    results = []
    interrupted = False
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=True, disable=as_json and not console.is_terminal) as progress:
        task = progress.add_task("measuring", total=len(grid) * len(prompt_ids))
        try:
            for setting in grid:
                progress.update(task, description=setting.label)
                results.append(measure(pair, setting, prompt_ids, max_new_tokens, temperature,
                                       on_prompt=lambda: progress.advance(task)))
        except KeyboardInterrupt:
            interrupted = True
    report: dict[str, Any] = {
        "algorithm": algo,
        "target": target_dir,
        "draft": draft_dir,
        "device": device,
        "prompts": len(prompt_ids),
        "max_new_tokens": max_new_tokens,
        "temperature": temperature,
        "complete": not interrupted,
        "settings": [m.as_dict() for m in results],
    }
    if hardware is not None and results:
        from specguard.roofline import Cost, estimate

        target_cost = Cost(**forward_cost(pair.target).as_dict())
        draft_cost = Cost(**forward_cost(pair.draft).as_dict()) if pair.draft is not None else None
        ctx = context or (sum(len(p) for p in prompt_ids) / len(prompt_ids) + max_new_tokens / 2)
        roof = estimate(algo, results, target_cost, draft_cost, batches, ctx, hardware)
        roof.update(gpu=hardware["gpu"], source=hardware["source"], context=ctx,
                    weight_bytes=hardware["weight_bytes"], kv_bytes=hardware["kv_bytes"])
        report["estimate"] = roof
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        _print_report(report, results)
    if plot is not None and results:
        _draw_png(report, results, plot)
        print(f"plot written to {plot}")
    if interrupted:
        print("stopped by Ctrl-C: the figures above cover the settings measured so far", file=sys.stderr)
        raise SystemExit(130)


def _refuse_impossible_rounds(algorithm: str, grid: list[Any], target_dir: str) -> None:
    """A setting the server refuses (``runtime.flags.round_limit``, the one bound for both) is
    refused before any weight loads: measured, a round past the target's context drafts for
    minutes and then fails allocating its tree."""
    from specguard.runtime.config import load_config
    from specguard.runtime.flags import round_limit

    config = load_config(Path(target_dir))
    for setting in grid:
        steps, ndt = setting.num_steps, setting.num_draft_tokens
        # NGRAM's breadth walks its trie, not the vocabulary (as the server checks it)
        topk = 1 if algorithm == "NGRAM" else setting.topk
        limit = round_limit(steps, topk, ndt, context=config.max_position_embeddings, vocab=config.vocab_size)
        if limit is None:
            continue
        if limit.bound == "vocab":
            raise InputError(f"--topk {topk}: more than the target's {limit.limit} tokens", hint="the server refuses it too; use a smaller --topk")
        # NGRAM derives its steps from --draft-tokens: that is the flag to name
        chain = algorithm != "NGRAM" and steps + 1 >= ndt
        flag, value = ("--steps", steps) if chain else ("--draft-tokens", ndt)
        raise InputError(
            f"{flag} {value}: a speculative round of {limit.value} tokens does not fit the target's context length of {limit.limit}",
            hint=f"the server refuses it too; keep a round within {limit.limit} tokens",
        )


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None


def _bar(value: float, scale: float, width: int = 30) -> str:
    filled = 0 if scale <= 0 else round(width * min(value, scale) / scale)
    return "█" * filled + "·" * (width - filled)


def _print_report(report: dict, results: list) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"{report['algorithm']} acceptance on {report['prompts']} prompts x {report['max_new_tokens']} tokens"
                        f" (temperature {report['temperature']})")
    for col in ("setting", "accept length", "verify passes", "accepted drafts", "acceptance by position (1, 2, ...)"):
        table.add_column(col)
    for m in results:
        table.add_row(m.setting.label, f"{m.accept_length:.2f}", f"{m.verify_ct:,}", f"{m.correct_drafts:,}",
                      " ".join(f"{x:.2f}" for x in m.position_acceptance))
    console.print(table)
    top = max(m.setting.num_draft_tokens for m in results)
    console.print("accept length (tokens per target forward; the bar's end is the largest draft + 1):")
    for m in results:
        console.print(f"  {m.setting.label:<28} {_bar(m.accept_length, top)} {m.accept_length:.2f}")
    best = max(results, key=lambda m: m.accept_length)
    console.print(f"per-position acceptance of {best.setting.label} (share of rounds whose draft at that depth was kept):")
    for depth, share in enumerate(best.position_acceptance, 1):
        console.print(f"  position {depth:<3} {_bar(share, 1.0)} {share:.2f}")
    est = report.get("estimate")
    if est:
        table = Table(title=f"roofline estimate on {est['gpu']} (context {est['context']:,.0f} tokens, "
                            f"{est['weight_bytes']}-byte weights and KV)")
        for col in ("batch", "plain tokens/s", "best setting", "its tokens/s", "speedup"):
            table.add_column(col)
        for row in est["rows"]:
            best_row = row["best"] or {"setting": "-", "tokens_per_s": 0.0}
            table.add_row(f"{row['batch']:,}", f"{row['plain_tokens_per_s']:,.0f}", best_row["setting"],
                          f"{best_row['tokens_per_s']:,.0f}", f"{row['speedup']:.2f}x")
        console.print(table)
        if est["stops_paying_at_batch"] is None:
            console.print(f"speculation pays at every batch size tried (up to {est['rows'][-1]['batch']:,})")
        elif est["pays_up_to_batch"] is None:
            console.print(f"speculation does not pay at any batch size tried (from {est['rows'][0]['batch']:,})")
        else:
            console.print(f"speculation pays up to batch {est['pays_up_to_batch']:,} and stops paying "
                          f"at batch {est['stops_paying_at_batch']:,}")
        console.print("assumptions: " + "; ".join(est["assumptions"]))
        console.print(f"GPU figures: {est['source']}")


def _draw_png(report: dict, results: list, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = accept_figure(report, results)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def accept_figure(report: dict, results: list) -> Any:
    """The --plot figure. Draft positions and batch sizes are counts: their axes tick at whole
    numbers only (matplotlib's default locator put a tick at position 1.5), with thousands
    separators where large."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator

    thousands = FuncFormatter(lambda value, _position: f"{value:,.0f}")
    panels = 3 if report.get("estimate") else 2
    fig, axes = plt.subplots(1, panels, figsize=(5 * panels, 4))
    labels = [m.setting.label.replace(" draft", "\ndraft") for m in results]
    axes[0].bar(range(len(results)), [m.accept_length for m in results])
    axes[0].set_xticks(range(len(results)), labels, rotation=60, fontsize=6)
    axes[0].set_ylabel("accept length")
    axes[0].set_title(f"{report['algorithm']} accept length")
    for m in results:
        axes[1].plot(range(1, len(m.position_acceptance) + 1), m.position_acceptance, marker="o", label=m.setting.label)
    axes[1].xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[1].set_xlabel("draft position")
    axes[1].set_ylabel("share of rounds accepted")
    axes[1].set_ylim(0, 1)
    axes[1].legend(fontsize=5)
    axes[1].set_title("acceptance by position")
    est = report.get("estimate")
    if est:
        batches = [r["batch"] for r in est["rows"]]
        axes[2].plot(batches, [r["plain_tokens_per_s"] for r in est["rows"]], label="plain", marker="o")
        axes[2].plot(batches, [r["best"]["tokens_per_s"] if r["best"] else 0 for r in est["rows"]], label="best speculative", marker="o")
        axes[2].set_xscale("log", base=2)
        axes[2].xaxis.set_major_locator(matplotlib.ticker.FixedLocator(batches))
        axes[2].xaxis.set_minor_locator(NullLocator())
        axes[2].xaxis.set_major_formatter(thousands)
        axes[2].yaxis.set_major_formatter(thousands)
        axes[2].set_xlabel("batch size")
        axes[2].set_ylabel("tokens/s (roofline)")
        axes[2].legend(fontsize=7)
        axes[2].set_title(f"estimate on {est['gpu']}")
    fig.tight_layout()
    return fig
