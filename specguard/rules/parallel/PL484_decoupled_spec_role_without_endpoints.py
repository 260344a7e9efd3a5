"""PL484 decoupled-spec-role-without-endpoints."""

from __future__ import annotations

from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import (
    SGLANG_DIALECTS,
    CheckContext,
    Example,
    FixAvailability,
    Rule,
    RuleDocs,
)
from specguard.rules.examples import LLAMA31_8B_EAGLE3_CHAIN

ROLE = "--decoupled-spec-role"
# The three settings PortArgs needs to wire the ZMQ mesh between the verifier and drafter engines.
ENDPOINT_FLAGS = (
    "--decoupled-spec-bind-endpoint",
    "--decoupled-spec-connect-endpoints",
    "--decoupled-spec-rank",
)


def check(ctx: CheckContext) -> Iterator[Finding]:
    role = ctx.spec.last_value(ROLE)
    if role in (None, "null"):
        return
    missing = tuple(flag for flag in ENDPOINT_FLAGS if not ctx.spec.has(flag))
    if not missing:
        return
    yield RULE.finding(
        f"{ctx.flag(ROLE)} {role} without {', '.join(ctx.flag(flag) for flag in missing)} in SGLang {ctx.version}: "
        "the server's port setup raises ValueError '--decoupled-spec-bind-endpoint, "
        "--decoupled-spec-connect-endpoints, and --decoupled-spec-rank are required for decoupled speculative "
        f"decoding.' before any engine starts. Give all three (this engine's bind endpoint, its peers' endpoints "
        f"in rank order, and its rank), or drop {ctx.flag(ROLE)}",
        flags=(ROLE, *missing),
    )


RULE = Rule(
    check=check,
    code="PL484",
    category=Category.START,
    name="decoupled-spec-role-without-endpoints",
    summary="--decoupled-spec-role verifier/drafter without its bind endpoint, peer endpoints and rank (0.5.15+)",
    severity=Severity.ERROR,
    fix_availability=FixAvailability.NEVER,
    dialects=SGLANG_DIALECTS,
    docs=RuleDocs(
        what="`--decoupled-spec-role` set to verifier or drafter without all of `--decoupled-spec-bind-endpoint`, "
        "`--decoupled-spec-connect-endpoints` and `--decoupled-spec-rank`, SGLang 0.5.15 or later.",
        why="0.5.15 added decoupled speculative decoding (draft and verify as separate engines on a ZMQ mesh; "
        "server_args.py:1695-1720). `PortArgs.init_new` builds the mesh config when the role is not 'null' and "
        "raises ValueError '--decoupled-spec-bind-endpoint, --decoupled-spec-connect-endpoints, and "
        "--decoupled-spec-rank are required for decoupled speculative decoding.' when any of the three is unset "
        "(0.5.15 server_args.py:7220-7231); the same in 0.5.23 (server_args.py:786-797). 0.5.14 has no such "
        "flags.",
        fix="Give the engine its bind endpoint, the peers' endpoints (a JSON list, in peer-rank order) and its "
        "rank within its role. The values are deployment addresses: no automatic fix.",
        fix_safety="No fix.",
    ),
    bad=Example(
        argv=(*LLAMA31_8B_EAGLE3_CHAIN, ROLE, "verifier"), sglang_version="0.5.15"
    ),
    good=Example(
        argv=(
            *LLAMA31_8B_EAGLE3_CHAIN,
            ROLE,
            "verifier",
            "--decoupled-spec-bind-endpoint",
            "tcp://10.0.0.1:5601",
            "--decoupled-spec-connect-endpoints",
            '["tcp://10.0.0.2:5601"]',
            "--decoupled-spec-rank",
            "0",
        ),
        sglang_version="0.5.15",
    ),
    sources=(
        "sglang 0.5.14: python/sglang/srt/server_args.py (no decoupled_spec_role)",
        "sglang 0.5.15: python/sglang/srt/server_args.py:1695-1720,7220-7231",
        "sglang 0.5.23: python/sglang/srt/server_args.py:786-797",
    ),
    sglang_versions=">=0.5.15",
    log_signatures=(
        r"--decoupled-spec-rank are required for decoupled speculative decoding",
    ),
)
