"""SV001 server-exposed-without-api-key."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from specguard.models import Category, Finding, Severity
from specguard.rules.base import CheckContext, Example, FixAvailability, Rule, RuleDocs
from specguard.rules.examples import LLAMA31_8B

_LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach an address (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost: it resolves to whatever the network says


def check(ctx: CheckContext) -> Iterator[Finding]:
    host = ctx.spec.get("host")
    if host is None or is_loopback(host) or ctx.spec.get("api_key"):
        return
    yield RULE.finding(
        f"{ctx.flag('--host')} {host} serves beyond this machine and no {ctx.flag('--api-key')} is set: "
        "anyone who can reach the port can generate, read /server_info and call the admin routes SGLang "
        "leaves open without a key. Set an API key, or bind 127.0.0.1 behind a proxy that authenticates.",
        flags=("--host", "--api-key"),
    )


RULE = Rule(
    check=check,
    code="SV001",
    category=Category.EXPOSED,
    name="server-exposed-without-api-key",
    summary="--host binds a non-loopback address and no --api-key is set",
    severity=Severity.WARNING,
    fix_availability=FixAvailability.NEVER,
    docs=RuleDocs(
        what="Fires when `--host` is an address other than loopback (`0.0.0.0`, `::`, a LAN or public "
        "address, or a host name other than localhost) and `--api-key` is not set.",
        why="SGLang's HTTP server binds `127.0.0.1` by default. With another `--host` it accepts "
        "requests from the network, and its auth middleware lets every normal endpoint through when "
        "no API key is configured (`auth.py`: \"if api_key is configured, require api_key ... otherwise "
        "allow\"). A GPU server left open is used by whoever finds it.",
        fix="Set `--api-key` (clients send `Authorization: Bearer <key>`), or keep the default host and "
        "put an authenticating proxy in front.",
        fix_safety="No fix: only the user can choose a key.",
    ),
    bad=Example(argv=(*LLAMA31_8B, "--speculative-algorithm", "NGRAM", "--host", "0.0.0.0")),
    good=Example(
        argv=(*LLAMA31_8B, "--speculative-algorithm", "NGRAM", "--host", "0.0.0.0", "--api-key", "sk-example")
    ),
    sources=(
        "sglang 0.5.23: python/sglang/srt/arg_groups/fields/serving.py:65 (host defaults to 127.0.0.1)",
        "sglang 0.5.23: python/sglang/srt/utils/auth.py:145-151 (no api_key: normal endpoints allowed)",
        "sglang 0.5.23: python/sglang/srt/entrypoints/http_server.py:2894 (add_api_key_middleware)",
    ),
)
