"""The OOM recipe as a search: apply its steps in order until the estimate fits.

SGLang's speculative-decoding guide, "OOM Troubleshooting" (docs/advanced_features/
speculative_decoding, the seed sglang-speculative-decoding.md): step 1 *lower*
``--mem-fraction-static`` (more headroom for the draft tree, CUDA graphs and activations), step 2
lower the CUDA-graph max batch size (4, then 2), step 3 shrink the draft tree (3 steps, topk 1,
4 draft tokens), step 4 lower ``--max-running-requests``; "Increase --mem-fraction-static last, only
after the run is stable". SGLang's hyperparameter-tuning guide says the same of OOM ("reduce
--mem-fraction-static to a smaller value, such as 0.8 or 0.7"), as do its CUDA-graph capture
failure hints (``model_executor/runner_backend_utils/__init__.py`` CUDA_GRAPH_CAPTURE_FAILED_MSG).

Raising the fraction is a different remedy, never called a recipe step: SGLang asks for it when the
loaded weights leave no room for the KV cache (``mem_cache/kv_cache_configurator.py:3050-3057``),
and its tuning guide raises it to grow the KV pool "while still reserving enough memory for
activations and CUDA graph buffers". Steps accumulate; after each one the fraction is re-chosen as
the largest that still leaves the runtime headroom the estimate needs (capped at the launch's own
value unless raising is allowed), and the first combination that satisfies the goal is the fix.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from specguard.memory.estimate import GIB, MemoryBudget, estimate
from specguard.models import Edit, FlagValue
from specguard.records import Record
from specguard.resolution.cuda_graph import graph_max_flag
from specguard.spec import LaunchSpec

MARGIN_BYTES = GIB // 2  # kept free on top of the estimated runtime need
MAX_FRACTION = 0.95
RECIPE_GRAPH_MAX_BS = (4, 2)
RECIPE_TREE = {"--speculative-num-steps": 3, "--speculative-eagle-topk": 1, "--speculative-num-draft-tokens": 4}
RECIPE_MAX_RUNNING_REQUESTS = 4


def best_fraction(budget: MemoryBudget) -> float:
    """The largest mem_fraction_static whose headroom covers tree + graphs + activations + margin, and before
    0.5.14 the draft outside the static budget (its KV pool follows the fraction, so this is exact only at the
    budget's own fraction: ``plan`` re-estimates at the one chosen)."""
    need = budget.tree.bytes + budget.graphs.bytes + budget.activations.bytes + budget.draft_outside_static.bytes + MARGIN_BYTES
    fraction = 1 - need / budget.usable.bytes
    return min(MAX_FRACTION, math.floor(fraction * 100) / 100)


class Plan(Record):
    # (the fraction in effect, the one chosen) when the plan changes --mem-fraction-static.
    fraction: tuple[float, float] | None
    recipe_steps: tuple[str, ...]
    edits: tuple[Edit, ...]
    budget: MemoryBudget

    @property
    def title(self) -> str:
        parts = []
        steps = self.recipe_steps
        if self.fraction is not None:
            before, after = self.fraction
            if after < before:
                steps = (f"step 1: lower --mem-fraction-static from {before:g} to {after:g}", *steps)
            else:
                parts.append(f"raise --mem-fraction-static from {before:g} to {after:g}, the most that leaves the runtime headroom")
        if steps:
            parts.append("OOM recipe " + "; ".join(steps))
        return "; ".join(parts)


def _estimate(ctx, spec: LaunchSpec) -> MemoryBudget | None:
    new = ctx.with_spec(spec)
    return estimate(new.spec, new.target, new.draft, new.env, new.resolution)


def plan(ctx, goal: Callable[[MemoryBudget], bool], steps: tuple[int, ...] = (2, 3, 4), *, may_raise: bool) -> Plan | None:
    """The first prefix of the recipe (with the fraction re-chosen) whose estimate meets ``goal``.

    ``steps`` picks which of the recipe's steps 2-4 may be used (step 1 always is); ``may_raise``
    lets the fraction rise above the launch's (the weights do not fit, or the KV pool is to grow)."""
    version = ctx.version
    graph_flag = graph_max_flag(version)
    old_flags = [f for f in ("--cuda-graph-max-bs",) if f != graph_flag and ctx.spec.has(f)]
    budget = estimate(ctx.spec, ctx.target, ctx.draft, ctx.env, ctx.resolution)
    if budget is None:
        return None
    stages: list[tuple[str, dict[str, FlagValue]]] = []
    for bs in RECIPE_GRAPH_MAX_BS if 2 in steps else ():
        if budget.graph_bs and max(budget.graph_bs) > bs:
            stages.append((f"step 2: {graph_flag} {bs}", {graph_flag: bs, **{f: None for f in old_flags}}))
    if 3 in steps and ctx.algorithm is not None and ctx.resolution.num_draft_tokens and ctx.resolution.num_draft_tokens > 4:
        stages.append(("step 3: shrink the tree to 3 steps, topk 1, 4 draft tokens", dict(RECIPE_TREE)))
    if 4 in steps and budget.max_running_requests > RECIPE_MAX_RUNNING_REQUESTS:
        stages.append((f"step 4: --max-running-requests {RECIPE_MAX_RUNNING_REQUESTS}", {"--max-running-requests": RECIPE_MAX_RUNNING_REQUESTS}))

    chosen: dict[str, FlagValue] = {}
    titles: list[str] = []
    for index in range(len(stages) + 1):
        if index:
            title, edits = stages[index - 1]
            chosen.update(edits)
            if titles and titles[-1].split(":")[0] == title.split(":")[0]:
                titles[-1] = title  # step 2 again, with the smaller batch size
            else:
                titles.append(title)
        spec = ctx.spec
        for name, value in chosen.items():
            spec = spec.apply(Edit(name=name, value=value))
        trial = _estimate(ctx, spec)
        if trial is None:
            return None
        fraction = best_fraction(trial)
        if not may_raise:
            fraction = min(fraction, trial.mem_fraction_static)
        if fraction > 0 and fraction != trial.mem_fraction_static:
            with_fraction = spec.apply(Edit(name="--mem-fraction-static", value=fraction))
            fitted = _estimate(ctx, with_fraction)
            if fitted is not None and goal(fitted):
                fitted_edits = (Edit(name="--mem-fraction-static", value=fraction), *(Edit(name=n, value=v) for n, v in chosen.items()))
                return Plan(fraction=(trial.mem_fraction_static, fraction), recipe_steps=tuple(titles), edits=fitted_edits, budget=fitted)
        if index and goal(trial):
            return Plan(fraction=None, recipe_steps=tuple(titles), edits=tuple(Edit(name=n, value=v) for n, v in chosen.items()), budget=trial)
    return None
