"""JX008 sgl-jax-feature-refuses-speculation."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Dialect, Finding, Severity
from specguard.records import Record
from specguard.rules.base import CheckContext, FixAvailability, Rule, RuleDocs
from specguard.rules.sgl_jax._jax import jax_example, raw_algorithm
from specguard.sglang_facts.sgl_jax import (
    PATHWAYS_PD,
    RECURRENT_EXTRA_BUFFER,
    JaxChange,
)


class RefusingFeature(Record, kw_only=False):
    """An sgl-jax flag whose feature refuses any speculative algorithm, from the commit that added both."""

    flag: str
    value: str | None  # the value that turns it on; None: the flag itself (a switch, or nargs='?')
    change: JaxChange
    failure: str  # what sgl-jax does, as it says it


# Read from sglang-jax's ledger (ledger/sgl-jax): each guard arrived with its flag and holds at HEAD.
REFUSING_FEATURES = (
    RefusingFeature(
        "--enable-recurrent-extra-buffer", None, RECURRENT_EXTRA_BUFFER,
        "ServerArgs raises 'ValueError: --enable-recurrent-extra-buffer does not support speculative decoding yet' "
        "at argument parsing",
    ),
    RefusingFeature(
        "--pd-disaggregation", "pathways", PATHWAYS_PD,
        "the scheduler's Pathways P/D set-up asserts `spec_algorithm is None` (an AssertionError before the "
        "workers are built)",
    ),
)


def _enabled(ctx: CheckContext, feature: RefusingFeature) -> bool:
    item = ctx.spec.item(feature.flag)
    if item is None:
        return False
    # --pd-disaggregation is nargs='?' with const 'pathways': bare, or given pathways, it is on.
    return feature.value is None or not item.values or item.values[-1] == feature.value


def check(ctx: CheckContext) -> Iterator[Finding]:
    algorithm = raw_algorithm(ctx)
    if algorithm is None:
        return
    built = ctx.env.sgl_jax_built
    for feature in REFUSING_FEATURES:
        if not _enabled(ctx, feature) or (built is not None and not feature.change.present_in(built)):
            continue  # a build before the feature has no such flag: argparse says so, not this rule
        yield RULE.finding(
            f"{ctx.flag(feature.flag)} with {ctx.flag('--speculative-algorithm')} {algorithm}: sgl-jax refuses "
            f"speculative decoding with it ({feature.change.ref}, {feature.change.first.isoformat()}, to the HEAD "
            f"specguard read): {feature.failure}. Drop one of them",
            flags=(feature.flag, "--speculative-algorithm"),
        )


RULE = Rule(
    check=check,
    code="JX008",
    category=Category.START,
    name="sgl-jax-feature-refuses-speculation",
    summary="sgl-jax: a feature that refuses speculative decoding (recurrent extra buffer, Pathways P/D)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="sgl-jax launches with a `--speculative-algorithm` and `--enable-recurrent-extra-buffer`, or "
        "`--pd-disaggregation` (pathways).",
        why="Both features arrived refusing speculation and still do at the HEAD specguard read (cddbf6f1): "
        "`ServerArgs.__post_init__` raises for the recurrent extra buffer with any speculative algorithm "
        "(sglang-jax #1408, 8340cd76, 2026-07-09; cddbf6f1 server_args.py:447-452), and "
        "`PathwaysPDSchedulerMixin._pd_init_workers` asserts that no speculative algorithm is set (sglang-jax "
        "#1428, 94ce2692, 2026-07-06: pathways_scheduler.py:67; cddbf6f1 :98), which the scheduler runs when "
        "`--pd-disaggregation` is pathways (scheduler.py:343, :371-372). A build named with "
        "`--sgl-jax-version` before a feature's commit has no such flag, and this rule says nothing for it.",
        fix="Run the speculative launch without the feature, or the feature without speculation: which one "
        "matters more is the user's choice, so no fix is offered.",
        fix_safety="No fix is offered.",
    ),
    bad=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
                    "--disable-overlap-schedule", "--pd-disaggregation", "pathways"),
    good=jax_example("--speculative-eagle-topk", "1", "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
                     "--disable-overlap-schedule"),
    sources=(
        "sglang-jax 8340cd76 (#1408): python/sgl_jax/srt/server_args.py (the flag and its guard arrive together)",
        "sglang-jax cddbf6f1: python/sgl_jax/srt/server_args.py:447-452",
        "sglang-jax 94ce2692 (#1428): python/sgl_jax/srt/disaggregation/pathways_scheduler.py:67, server_args.py --pd-disaggregation",
        "sglang-jax cddbf6f1: python/sgl_jax/srt/disaggregation/pathways_scheduler.py:98; managers/scheduler.py:343,371-372",
    ),
    dialects=(Dialect.SGL_JAX,),
    log_signatures=(r"--enable-recurrent-extra-buffer does not support speculative decoding",),
)
