"""Secrets in a launch are shown masked wherever specguard or its runtime prints or serves them.

What counts as a secret, in one place:

- flags: SGLang's server arguments that carry one, in every release specguard knows
  (``SGLANG_SECRET_FLAGS``; tests/launch/test_launch_secrets.py holds the table against
  specguard/data/sglang-0.5.23-flags.json and sglang-history.json), slime's own
  (``--wandb-key``), each in any dialect's spelling (slime's ``--sglang-`` prefix), and any
  other flag whose name says so (``--hf-token``, ``--db-password``);
- env vars: SGLang's own (``SGLANG_S3_SECRET_ACCESS_KEY``, ``SGLANG_S3_ACCESS_KEY_ID``), the
  ones tools read a credential from (``HF_TOKEN``, ``WANDB_API_KEY``, every ``AWS_*``), and any
  name whose words say so (SECRET, PASSWORD, CREDENTIAL, ..._TOKEN, API_KEY, ACCESS_KEY).

Only what is displayed is masked: human, JSON and SARIF reports, dry runs, the "starting" line,
notes and error messages. What runs keeps the real value, and so does a file the user asks for
(``check --write``): it is a launch that must still start.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from specguard.records import replace

if TYPE_CHECKING:
    from specguard.spec import LaunchSpec

MASK = "***"

# sglang/srt/server_args.py, every release in sglang-history.json (0.4.0 .. 0.5.23).
SGLANG_SECRET_FLAGS = ("--api-key", "--admin-api-key", "--ssl-keyfile-password")
# slime/utils/arguments.py: the Weights & Biases key a slime launch passes on.
SLIME_SECRET_FLAGS = ("--wandb-key",)
SECRET_FLAGS = (*SGLANG_SECRET_FLAGS, *SLIME_SECRET_FLAGS)
# Env vars SGLang reads a credential from (sglang/srt/environ.py, the S3 model loader).
SGLANG_SECRET_ENV = ("SGLANG_S3_ACCESS_KEY_ID", "SGLANG_S3_SECRET_ACCESS_KEY")
# Prefixes whose every variable is a credential or names one (AWS_ACCESS_KEY_ID, AWS_SESSION_TOKEN).
SECRET_ENV_PREFIXES = ("AWS_",)

# A name that says it holds a secret. Kept narrow on purpose: SGLang has many flags and env vars
# with TOKEN or KEY in their names that are counts or switches (--bucket-time-to-first-token,
# SGLANG_LOG_DECODE_GRAPH_KEY), and --ssl-keyfile is a path.
_SECRET_WORDS = re.compile(r"(?:^|[-_])(?:secrets?|passwords?|passwd|passphrase|credentials?|apikey)(?:[-_]|$)", re.IGNORECASE)
_SECRET_FLAG_END = re.compile(
    r"(?:^|-)(?:(?:api|access|secret|private|auth|wandb|hf|signing|encryption)-key(?:-id)?"
    r"|(?:hf|hub|github|gh|auth|access|bearer|api|session|refresh)-token)$|^token$",
    re.IGNORECASE,
)
# Outside SGLang's own variables (judged by its table above), a name ending in KEY or TOKEN is a
# credential's: HF_TOKEN, GITHUB_TOKEN, WANDB_API_KEY, OPENAI_API_KEY, WANDB_KEY.
_SECRET_ENV_END = re.compile(r"._(?:KEY|KEY_ID|TOKEN)$", re.IGNORECASE)
_SGLANG_ENV_PREFIXES = ("SGLANG_", "SGL_")
_SLIME_PREFIX = "--sglang-"


def is_secret_flag(token: str) -> bool:
    """Whether ``token`` (``--api-key`` or ``--api-key=VALUE``, any dialect's spelling) is a
    flag whose value is a secret."""
    option = token.split("=", 1)[0]
    if not option.startswith("--"):
        return False
    if option.startswith(_SLIME_PREFIX):
        option = "--" + option[len(_SLIME_PREFIX) :]
    name = option[2:]
    return option in SECRET_FLAGS or bool(_SECRET_WORDS.search(name) or _SECRET_FLAG_END.search(name))


def is_secret_env(name: str) -> bool:
    if name in SGLANG_SECRET_ENV or _SECRET_WORDS.search(name):
        return True
    upper = name.upper()
    if upper.startswith(_SGLANG_ENV_PREFIXES):
        return False
    return upper.startswith(SECRET_ENV_PREFIXES) or bool(_SECRET_ENV_END.search(name))


def is_secret_name(name: str) -> bool:
    """A flag (``--api-key``) or an env var (``HF_TOKEN``): the two namespaces cannot collide."""
    return is_secret_flag(name) if name.startswith("--") else is_secret_env(name)


def redact_argv(argv: Sequence[str]) -> list[str]:
    out: list[str] = []
    hide_next = False
    for token in argv:
        if hide_next:
            out.append(MASK)
            hide_next = False
        elif is_secret_flag(token) and "=" in token:
            out.append(token.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(token)
            hide_next = is_secret_flag(token)
    return out


def redact_env(env: Mapping[str, str] | Iterable[tuple[str, str]]) -> dict[str, str]:
    pairs = env.items() if isinstance(env, Mapping) else env
    return {key: MASK if is_secret_env(key) else value for key, value in pairs}


def redact_value(name: str, value: Any) -> Any:
    """A flag's or env var's value as it may be shown (a change, a fix's edit)."""
    if value is None or value is True or value is False or not is_secret_name(name):
        return value
    return MASK


def redact_flag_mapping(flags: Mapping[str, Any]) -> dict[str, Any]:
    """A preset's ``flags:`` (names without the dashes) as it may be shown."""
    shown: dict[str, Any] = {}
    for key, value in flags.items():
        if not is_secret_flag("--" + key) or value is None or isinstance(value, bool):
            shown[key] = value
        else:
            shown[key] = [MASK] * len(value) if isinstance(value, list) else MASK
    return shown


def redact_spec(spec: LaunchSpec) -> LaunchSpec:
    """``spec`` with every secret value masked, to render for display. Each flag is judged by its
    canonical name too, so an abbreviation SGLang's parser accepts (``--api-k``) is masked as well."""
    items = tuple(
        replace(item, values=tuple(MASK for _ in item.values))
        if item.values and (is_secret_flag(item.flag) or is_secret_flag(item.written or ""))
        else item
        for item in spec.items
    )
    env = tuple((key, MASK if is_secret_env(key) else value) for key, value in spec.env)
    return replace(spec, items=items, env=env)


# In text (a shell line, a message): a flag, then '=' or blanks, then one shell word (quoted or
# bare); or NAME=word (an env prefix, export, docker -e, --env).
_WORD = r"""(?:'[^']*'|"[^"]*"|[^\s'";|&()<>]+)+"""
_FLAG_IN_TEXT = re.compile(rf"(?<![\w-])(--[A-Za-z0-9][\w-]*)(=|[ \t]+(?!-))({_WORD})")
_ASSIGNMENT_IN_TEXT = re.compile(rf"(?<![\w-])([A-Za-z_][A-Za-z0-9_]*)=({_WORD})")
# A Hugging Face token anywhere (an exception's message may carry one).
_HF_TOKEN = re.compile(r"hf_[A-Za-z0-9]{10,}")


# A YAML entry `key: value` under a preset's flags: or env:, the value up to a comment.
_YAML_ENTRY = re.compile(r"^(\s+)([A-Za-z0-9_][\w-]*)(\s*:[ \t]+)(\S(?:.*?\S)?)([ \t]+#.*)?$")


def redact_yaml_text(text: str, secrets: Iterable[str] = ()) -> str:
    """A preset's YAML text as it may be shown: the value of a secret flag under ``flags:`` or of
    a secret env var under ``env:`` masked, the rest (comments, order, layout) as written.
    ``secrets``: the secret values the parsed preset holds; wherever the line reading above could
    not place them (flow style ``flags: {api-key: x}``, a value continued on the next line) they
    are masked where they stand as a whole word."""
    return mask_values(_redact_yaml_entries(text), secrets)


def mask_values(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each of ``secrets`` masked where it stands as a whole word, and any Hugging
    Face token. For prose that specguard wrote about a launch whose secrets are known (a finding's
    message: "no --api-key is set" names the flag, not a value, and must read as written)."""
    for secret in sorted({s for s in secrets if s and s != MASK}, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(secret)}(?![\w-])", MASK, text)
    return _HF_TOKEN.sub("hf_" + MASK, text)


def spec_secrets(spec: LaunchSpec) -> list[str]:
    """The secret values a launch holds: its secret flags' values and its secret env vars'."""
    values = [value for key, value in spec.env if is_secret_env(key)]
    for item in spec.items:
        if is_secret_flag(item.flag) or is_secret_flag(item.written or ""):
            values += list(item.values)
    return values


def secret_values(flags: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """The values of a preset's secret flags (names without dashes) and secret env vars."""
    values = [str(value) for key, value in env.items() if is_secret_env(key)]
    for key, value in flags.items():
        if is_secret_flag("--" + key) and value is not None and not isinstance(value, bool):
            values += [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return values


def _redact_yaml_entries(text: str) -> str:
    lines = text.splitlines(keepends=True)
    section = None
    for number, line in enumerate(lines):
        if re.match(r"[A-Za-z_]", line):  # a top-level key: which section follows?
            section = line.split(":", 1)[0].strip()
            continue
        match = _YAML_ENTRY.match(line.rstrip("\r\n"))
        if match is None or section not in ("flags", "env"):
            continue
        key = match.group(2)
        if is_secret_flag("--" + key) if section == "flags" else is_secret_env(key):
            ending = line[len(line.rstrip("\r\n")) :]
            lines[number] = f"{match.group(1)}{key}{match.group(3)}'{MASK}'{match.group(5) or ''}{ending}"
    return "".join(lines)


def redact_text(text: str) -> str:
    def flag(match: re.Match) -> str:
        return f"{match.group(1)}{match.group(2)}{MASK}" if is_secret_flag(match.group(1)) else match.group(0)

    def assignment(match: re.Match) -> str:
        return f"{match.group(1)}={MASK}" if is_secret_env(match.group(1)) else match.group(0)

    text = _FLAG_IN_TEXT.sub(flag, text)
    text = _ASSIGNMENT_IN_TEXT.sub(assignment, text)
    return _HF_TOKEN.sub("hf_" + MASK, text)
