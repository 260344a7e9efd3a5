"""JX233 draft-runner-sampler-rng-missing."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.rules.base import CheckContext, FixAvailability, Rule, RuleDocs
from specguard.rules.sgl_jax._jax import jax_example, raw_algorithm, runnable_in
from specguard.sglang_facts.sgl_jax import (
    DRAFT_SAMPLER_RNG_FIXED,
    DRAFT_SAMPLER_RNG_MISSING,
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    built = ctx.env.sgl_jax_built
    if built is None or not DRAFT_SAMPLER_RNG_MISSING.present_in(built) or DRAFT_SAMPLER_RNG_FIXED.present_in(built):
        return
    algorithm = raw_algorithm(ctx)
    if algorithm not in runnable_in(built):
        return
    yield RULE.finding(
        f"{algorithm} on this sgl-jax build ({built.isoformat()}): from {DRAFT_SAMPLER_RNG_MISSING.ref} "
        f"({DRAFT_SAMPLER_RNG_MISSING.first.isoformat()}) the model runner sets _sampler_base_rng only for the "
        "target, while the draft worker's initialize_jit reads it, so every EAGLE/EAGLE3 launch fails with "
        f"AttributeError as the draft worker starts; {DRAFT_SAMPLER_RNG_FIXED.ref} "
        f"({DRAFT_SAMPLER_RNG_FIXED.first.isoformat()}) fixes it. Use a build from "
        f"{DRAFT_SAMPLER_RNG_FIXED.first.isoformat()} or later (or before {DRAFT_SAMPLER_RNG_MISSING.first.isoformat()})",
        flags=("--speculative-algorithm",),
    )


_EAGLE3 = ("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
           "--disable-overlap-schedule")

RULE = Rule(
    check=check,
    code="JX233",
    category=Category.START,
    name="draft-runner-sampler-rng-missing",
    summary="sgl-jax builds of 2026-04-23 .. 2026-05-13: every EAGLE/EAGLE3 launch fails as the draft worker starts",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="sgl-jax speculative launches on a build dated from 2026-04-23 (sglang-jax #940, bc770647) to "
        "before 2026-05-14 (#1063, 8c785960), as `--sgl-jax-version` names it.",
        why="#940 moved the sampler's base RNG key into `ModelRunner.__init__`, but only under "
        "`if not self.is_draft_worker` (bc770647 model_runner.py:153-155), and `initialize_jit` reads "
        "`self._sampler_base_rng` (:228). `EAGLEWorker` is a draft-worker `ModelWorker` and calls "
        "`self.model_runner.initialize_jit()` in its constructor (eagle_worker.py:107), so the draft runner "
        "raises AttributeError and the server never starts (NEXTN already failed earlier at those builds, "
        "JX007; DFLASH did not exist). The key was set only for the target up to 8c785960^ (:150-152); #1063 "
        "sets it for every runner (8c785960 model_runner.py:150-151). Builds are known by date: the commits "
        "of 2026-04-23 before bc770647 and the one of 2026-05-14 before 8c785960 are judged by their day.",
        fix="Use an sgl-jax build from 2026-05-14 (8c785960) or later.",
        fix_safety="No automatic fix: the build is the installed code.",
    ),
    bad=jax_example(*_EAGLE3, build="bc770647"),
    good=jax_example(*_EAGLE3, build="8c785960"),
    sources=(
        "sglang-jax ea5f4205 (bc770647^): python/sgl_jax/srt/model_executor/model_runner.py (no _sampler_base_rng)",
        "sglang-jax bc770647 (#940): python/sgl_jax/srt/model_executor/model_runner.py:153-155,228; speculative/eagle_worker.py:59-63,107",
        "sglang-jax 6f9def60 (8c785960^): python/sgl_jax/srt/model_executor/model_runner.py:150-152,227",
        "sglang-jax 8c785960 (#1063): python/sgl_jax/srt/model_executor/model_runner.py:150-151",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(r"object has no attribute '_sampler_base_rng'",),
)
