"""``specguard check --explain-memory``: the budget as a table (human) or a ``memory`` section (JSON)."""

from __future__ import annotations

from typing import Any

from specguard.memory.estimate import GIB, MemoryBudget, estimate


def budget_of(ctx, spec=None) -> MemoryBudget | None:
    """The budget of ``ctx``'s launch, or of ``spec`` (the corrected launch) in the same context."""
    if spec is not None and spec != ctx.spec:
        ctx = ctx.with_spec(spec)
    return estimate(ctx.spec, ctx.target, ctx.draft, ctx.env, ctx.resolution)


def why_unknown(ctx) -> str:
    if ctx.env.gpu is None:
        return "GPU unknown: pass --gpu (e.g. --gpu H100) to estimate memory"
    if ctx.env.gpu.memory_gib is None:
        return f"the memory of {ctx.env.gpu.name} is not known to specguard"
    if ctx.target is None:
        return "target model unknown: pass --target or --model-path"
    return "the target's config.json lacks the shape facts (hidden size, layers, heads, vocab, context)"


def memory_json(ctx, spec=None) -> dict[str, Any]:
    budget = budget_of(ctx, spec)
    label = "corrected" if spec is not None and spec != ctx.spec else "given"
    if budget is None:
        return {"memory": {"launch": label, "estimated": False, "reason": why_unknown(ctx)}}
    return {"memory": {"launch": label, "estimated": True, **budget.as_json()}}


def rows(budget: MemoryBudget) -> list[tuple[str, str, str]]:
    """(line, GiB, detail) in reading order: what the GPU has, where the static part goes, the rest."""
    tokens = f"{budget.kv_pool_tokens:,} tokens (need {budget.tokens_needed:,})"
    out = [
        (line.name, f"{line.gib:.2f}", line.detail)
        for line in (budget.gpu_memory, budget.usable, budget.static_budget, budget.target_weights, budget.draft_weights)
    ]
    out.append((budget.kv_pool.name, f"{budget.kv_pool.gib:.2f}", budget.kv_pool.detail))
    out.append(("  tokens it holds", "", tokens))
    out += [
        (line.name, f"{line.gib:.2f}", line.detail)
        for line in (budget.headroom, budget.tree, budget.graphs, budget.activations, budget.draft_outside_static, budget.spare)
        if line is not budget.draft_outside_static or line.bytes
    ]
    return out


def verdict(budget: MemoryBudget) -> str:
    if not budget.weights_fit:
        return "does not fit: the weights exceed the static budget"
    if not budget.runtime_fits:
        return "does not fit: the headroom is smaller than graphs + tree + activations" + (
            " + the draft outside the static budget" if budget.draft_outside_static.bytes else ""
        )
    if budget.kv_short:
        return "fits, with less KV than the context and concurrency need"
    return f"fits, {budget.spare.bytes / GIB:.1f} GiB spare"


def print_memory(ctx, console: Any, spec=None) -> None:
    from rich.table import Table

    budget = budget_of(ctx, spec)
    corrected = spec is not None and spec != ctx.spec
    if budget is None:
        console.print(f"memory: not estimated ({why_unknown(ctx)})")
        return
    title = (
        f"memory per GPU{' (corrected launch)' if corrected else ''}: {budget.gpu}, tp {budget.tp_size}, "
        f"{budget.weights_dtype} weights, {budget.kv_dtype} KV, mem_fraction_static {budget.mem_fraction_static} "
        f"({budget.mem_fraction_origin})"
    )
    table = Table(title=title, expand=False)
    table.add_column("line")
    table.add_column("GiB", justify="right")
    table.add_column("detail")
    for name, gib, detail in rows(budget):
        table.add_row(name, gib, detail)
    console.print(table)
    console.print(f"memory: {verdict(budget)} (an estimate; assumptions in `specguard rule MM001`)")
