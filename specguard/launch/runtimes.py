"""Which runtime runs a launch, and the exact command it gets.

* ``sglang``: ``python -m sglang.launch_server ARGS`` (GPU; SGLang installed here).
* ``reference``: ``python -m specguard.runtime ARGS``, specguard's bundled runtime (CPU or GPU),
  for the configurations it supports (``specguard.runtime.flags.parse_flags`` decides).
* ``sgl-jax``: ``python -m sgl_jax.launch_server ARGS`` where sgl-jax is installed.
* ``slime``: slime starts SGLang inside its rollout: specguard prints the ``SGLANG_ARGS``
  block for the user's script and starts nothing.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from dataclasses import dataclass, field, replace

from specguard import records
from specguard.dialects import render, render_command
from specguard.errors import InputError
from specguard.inputs import CheckInputs
from specguard.models import Dialect, Edit
from specguard.redact import redact_argv, redact_env, redact_text
from specguard.spec import LaunchSpec

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 30000
TINY_PREFIX = "tiny:"


MODULES = {"sglang": "sglang.launch_server", "reference": "specguard.runtime", "sgl-jax": "sgl_jax.launch_server"}
INSTALL_HINTS = {
    "sglang": "pip install 'sglang[all]' on a GPU machine (https://docs.sglang.ai/get_started/install.html)",
    "sgl-jax": "pip install sglang-jax on a TPU host (https://github.com/sgl-project/sglang-jax)",
}
REFERENCE_MODULES = ("torch", "fastapi", "uvicorn", "safetensors", "tokenizers")
# PyTorch's own index of CPU-only wheels: torch from PyPI on Linux pulls several GB of CUDA.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def reference_install_hint() -> str:
    """The command that installs the runtime extra the way this specguard was installed: from a
    clone (an editable install, PEP 660 direct_url.json) or from the registry; torch from the CPU
    index first, so the extra does not pull a CUDA build of torch."""
    import json
    from importlib import metadata

    torch_first = f"pip install torch --index-url {TORCH_CPU_INDEX}"
    direct_url: dict = {}
    for distribution in metadata.distributions(name="specguard"):  # an in-tree egg-info can come first
        try:
            direct_url = json.loads(distribution.read_text("direct_url.json") or "{}")
        except ValueError:
            continue
        if direct_url:
            break
    if direct_url.get("dir_info", {}).get("editable"):
        clone = direct_url.get("url", "").removeprefix("file://") or "."
        return f"{torch_first} && pip install -e '{clone}[runtime]' (torch, fastapi, uvicorn, safetensors, tokenizers)"
    return f"{torch_first} && pip install 'specguard[runtime]' (torch, fastapi, uvicorn, safetensors, tokenizers)"


@dataclass(frozen=True)
class LaunchPlan:
    runtime: str
    server_args: tuple[str, ...]
    env: dict[str, str]
    host: str
    port: int
    startable: bool = True
    reason: str = ""
    python: str = field(default_factory=lambda: sys.executable)
    printed_command: str | None = None  # for runtimes specguard does not start itself

    @property
    def argv(self) -> list[str]:
        # A command for another machine names its python plainly; one run here, this interpreter.
        python = self.python if self.startable else "python"
        return [python, "-m", MODULES[self.runtime], *self.server_args]

    @property
    def shown_argv(self) -> list[str]:
        """``argv`` as it may be printed: secrets masked (specguard/redact.py)."""
        return redact_argv(self.argv)

    @property
    def shell(self) -> str:
        """The command as printed (dry run, the "starting" line): secrets masked."""
        if self.printed_command is not None:
            return redact_text(self.printed_command)
        prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in redact_env(self.env).items())
        return f"{prefix} {shlex.join(self.shown_argv)}" if prefix else shlex.join(self.shown_argv)

    @property
    def api_key(self) -> str | None:
        return _value_of(self.server_args, "--api-key")

    @property
    def served_model_name(self) -> str:
        return _value_of(self.server_args, "--served-model-name") or _value_of(self.server_args, "--model-path") or _value_of(
            self.server_args, "--model"
        ) or "default"


def _value_of(argv: tuple[str, ...], flag: str) -> str | None:
    value = None
    for index, token in enumerate(argv):
        if token == flag and index + 1 < len(argv):
            value = argv[index + 1]
        elif token.startswith(flag + "="):
            value = token.split("=", 1)[1]
    return value


# ------------------------------------------------------------------------------- tiny models


def uses_tiny(inputs: CheckInputs) -> bool:
    references = [*inputs.server_args, inputs.target or "", inputs.draft or ""]
    return any(str(token).startswith(TINY_PREFIX) for token in references)


def resolve_tiny(inputs: CheckInputs, *, build: bool = True) -> tuple[CheckInputs, str | None]:
    """Replace ``tiny:target`` / ``tiny:draft`` / ``tiny:eagle3`` with the tiny models' directories
    (built on first use; the EAGLE3 head only when named). With ``build=False`` (a dry run) nothing
    is written: the directories are where a launch would build them, and the note says they are
    not built yet (rules that need their config.json stay quiet)."""
    if not uses_tiny(inputs):
        return inputs, None
    from specguard.runtime import tiny  # build with torch on first use only

    named = {*inputs.server_args, inputs.target, inputs.draft}
    # Only what the launch names is built: an EAGLE3 launch never runs the STANDALONE draft.
    if "tiny:draft" in named:
        pair = tiny.ensure_tiny_pair() if build else tiny.tiny_pair_paths()
        target, draft = pair.target, pair.draft
    else:
        target, draft = (tiny.ensure_tiny_target() if build else tiny.tiny_target_path()), None
    eagle3 = None
    if "tiny:eagle3" in named:
        eagle3 = tiny.ensure_tiny_eagle3().draft if build else tiny.tiny_eagle3_path()
    paths = {"tiny:target": str(target)}
    if draft is not None:
        paths["tiny:draft"] = str(draft)
    if eagle3 is not None:
        paths["tiny:eagle3"] = str(eagle3)
    missing = [p for p in {target.parent, *([eagle3] if eagle3 else [])} if not tiny.is_built(p)]
    note = None
    if missing:
        note = f"the tiny models are not built yet ({', '.join(sorted(map(str, missing)))}): a launch builds them once; a dry run writes nothing"

    def swap(token: str | None) -> str | None:
        if token is None or not token.startswith(TINY_PREFIX):
            return token
        if token not in paths:
            raise InputError(f"unknown tiny model {token!r}", hint="use tiny:target, tiny:draft or tiny:eagle3")
        return paths[token]

    return records.replace(
        inputs,
        server_args=[swap(t) or "" for t in inputs.server_args],
        target=swap(inputs.target),
        draft=swap(inputs.draft),
        # The real config.json is now at hand: a preset's stated facts must not stand in for it.
        target_fallback=None if inputs.target_fallback is not None and uses_tiny_ref(inputs.target) else inputs.target_fallback,
        draft_fallback=None if inputs.draft_fallback is not None and uses_tiny_ref(inputs.draft) else inputs.draft_fallback,
        models_may_be_absent=inputs.models_may_be_absent or bool(missing),
    ), note


def uses_tiny_ref(reference: str | None) -> bool:
    return bool(reference and reference.startswith(TINY_PREFIX))


# ------------------------------------------------------------------------------- choosing


def module_available(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def reference_refusal(server_args: list[str]) -> str | None:
    """Why the reference runtime cannot run these flags (None: it can)."""
    missing = [m for m in REFERENCE_MODULES if not module_available(m)]
    if missing:
        return f"the reference runtime needs {', '.join(missing)}: {reference_install_hint()}"
    from specguard.runtime.errors import RuntimeInputError
    from specguard.runtime.flags import parse_flags

    try:
        parse_flags(list(server_args))
    except RuntimeInputError as error:
        return str(error)
    return None


def endpoint_edits(host: str | None, port: int | None) -> tuple[Edit, ...]:
    """The launcher's own --host/--port as edits of the launch: the check sees them as if they
    were SERVER_ARGS (SV001 warns of an exposed --host whichever way it was given)."""
    edits = []
    if host is not None:
        edits.append(Edit(name="--host", value=host))
    if port is not None:
        edits.append(Edit(name="--port", value=port))
    return tuple(edits)


def plan_launch(
    spec: LaunchSpec,
    *,
    requested: str,
    preset_runtime: str | None,
    gpu_platform: str | None,
    strict: bool = True,
) -> LaunchPlan:
    """The runtime and command for ``spec`` (already corrected, host and port applied).

    ``requested``: "auto", "sglang" or "reference" (``--runtime``). With ``strict`` False (a dry
    run), a launch no runtime here can start gives SGLang's command, marked not startable,
    instead of an error: it is what the user runs elsewhere.
    """
    host = spec.get("host") or DEFAULT_HOST
    port = spec.get("port") or DEFAULT_PORT
    env = dict(spec.env)

    if spec.dialect is Dialect.SLIME:
        return LaunchPlan(
            runtime="slime",
            server_args=tuple(render(spec, Dialect.SLIME)),
            env=env,
            host=host,
            port=port,
            startable=False,
            reason="slime starts SGLang inside its rollout: put these arguments in your slime launch script",
            printed_command=render_command(spec, Dialect.SLIME),
        )
    if spec.dialect is Dialect.SGL_JAX or preset_runtime == "sgl-jax":
        args = tuple(render(spec, Dialect.SGL_JAX))
        if module_available("sgl_jax"):
            return LaunchPlan("sgl-jax", args, env, host, port, reason="sgl-jax is installed here")
        return LaunchPlan(
            "sgl-jax",
            args,
            env,
            host,
            port,
            startable=False,
            reason=f"sgl-jax is not installed here: {INSTALL_HINTS['sgl-jax']}; run the command on a TPU host",
            printed_command=render_command(spec, Dialect.SGL_JAX),
        )

    args = tuple(render(spec, Dialect.SGLANG))
    has_gpu = gpu_platform in ("cuda", "rocm")
    sglang_here = module_available("sglang")

    if requested == "sglang":
        if not sglang_here:
            if not strict:
                return LaunchPlan("sglang", args, env, host, port, startable=False, reason=f"SGLang is not installed here: {INSTALL_HINTS['sglang']}")
            raise InputError("--runtime sglang: SGLang is not installed in this Python", hint=INSTALL_HINTS["sglang"])
        return LaunchPlan("sglang", args, env, host, port, reason="asked for (--runtime sglang)")
    if requested == "reference":
        refusal = reference_refusal(list(args))
        if refusal:
            raise InputError(f"--runtime reference cannot run this launch: {refusal}", hint="use --runtime sglang on a GPU machine")
        return LaunchPlan("reference", args, env, host, port, reason="asked for (--runtime reference)")

    if preset_runtime == "reference":
        refusal = reference_refusal(list(args))
        if refusal:
            raise InputError(f"the preset runs on the reference runtime, which refuses: {refusal}")
        return LaunchPlan("reference", args, env, host, port, reason="the preset names the reference runtime")
    if sglang_here and has_gpu:
        return LaunchPlan("sglang", args, env, host, port, reason="SGLang is installed and a GPU is present")
    refusal = reference_refusal(list(args))
    if refusal is None:
        why = "no GPU" if sglang_here else "SGLang is not installed"
        return LaunchPlan("reference", args, env, host, port, reason=f"{why}; the reference runtime supports this launch")
    missing = "no GPU is present" if sglang_here else "SGLang is not installed"
    if not strict:
        return LaunchPlan(
            "sglang", args, env, host, port, startable=False,
            reason=f"{missing} and the reference runtime refuses this launch ({refusal}): run this on a GPU machine with SGLang",
        )
    raise InputError(
        f"no runtime can start this launch here: {missing}, and the reference runtime refuses it ({refusal})",
        hint=f"{INSTALL_HINTS['sglang']}; or see `specguard launch --dry-run` for the command to run elsewhere",
    )


def per_node_commands(plan: LaunchPlan, spec: LaunchSpec) -> list[str]:
    """One command per node (``--node-rank`` 0..nnodes-1) for a multi-node launch; empty for one node."""
    from specguard.models import Edit

    nnodes = spec.get("nnodes") or 1
    if nnodes <= 1 or not plan.startable and plan.runtime == "slime":
        return []
    commands = []
    for rank in range(nnodes):
        node_spec = spec.apply(Edit(name="--node-rank", value=rank))
        node_args = tuple(render(node_spec, Dialect.SGL_JAX if plan.runtime == "sgl-jax" else Dialect.SGLANG))
        commands.append(replace(plan, server_args=node_args, printed_command=None).shell)
    return commands
