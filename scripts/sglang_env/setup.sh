#!/usr/bin/env bash
# Create (or verify) specguard's SGLang 0.5.23 argument-resolution venv.
#
#   scripts/sglang_env/setup.sh            # -> <repo>/.venv-sglang
#   SPECGUARD_SGLANG_VENV=/some/dir scripts/sglang_env/setup.sh
#
# Idempotent: a stamp file records the hash of this script + requirements.lock + the stub;
# when it matches and the import smoke test passes, nothing is reinstalled.
# Last line of stdout is the venv's python path.
#
# Env knobs:
#   SPECGUARD_SGLANG_VENV        venv location (default <repo>/.venv-sglang)
#   SPECGUARD_PYTHON             interpreter for the venv (default python3.11, then python3); must be 3.11
#                                (the sglang 0.5.23 wheel is cp311)
#   SPECGUARD_TORCH_INDEX_URL    extra index for the CPU torch build on machines whose pip has no local
#                                torch==2.13.0+cpu (e.g. https://download.pytorch.org/whl/cpu)
#   SPECGUARD_SGLANG_FORCE=1     recreate the venv from scratch
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="${SPECGUARD_SGLANG_VENV:-$REPO/.venv-sglang}"
SGLANG_VERSION="0.5.23"
LOCK="$HERE/requirements.lock"
STUB="$HERE/torchvision_stub/torchvision"

log() { echo "[sglang_env] $*" >&2; }

pick_python() {
  if [[ -n "${SPECGUARD_PYTHON:-}" ]]; then echo "$SPECGUARD_PYTHON"; return; fi
  for c in python3.11 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
      echo "$c"; return
    fi
  done
  log "need Python 3.11 (sglang ${SGLANG_VERSION} ships cp311 wheels only); set SPECGUARD_PYTHON"; exit 2
}

stamp_value() {
  cat "$0" "$LOCK" "$STUB"/*.py | sha256sum | cut -d' ' -f1
}

smoke() {
  # The import chain resolve_once() needs (pipeline imports sglang.srt.configs, transformers, ...).
  PYTHONWARNINGS=ignore HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 "$VENV/bin/python" - <<'PY'
import importlib.metadata as md
import torch
from sglang.srt.server_args import prepare_server_args, ServerArgs  # noqa: F401
import sglang.srt.arg_groups.pipeline  # noqa: F401
import sglang.srt.arg_groups.validation_hook  # noqa: F401
import sglang.srt.runtime_context  # noqa: F401
assert md.version("sglang") == "0.5.23", md.version("sglang")
assert torch.__version__.startswith("2.13.0"), torch.__version__
assert md.version("transformers") == "5.19.0"
PY
}

STAMP="$VENV/.specguard-sglang-env"
WANT="$(stamp_value)"
if [[ "${SPECGUARD_SGLANG_FORCE:-0}" != "1" && -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  if smoke; then
    log "up to date: $VENV"
    echo "$VENV/bin/python"
    exit 0
  fi
  log "stamp matches but the smoke import failed; rebuilding"
fi

PY="$(pick_python)"
if [[ "${SPECGUARD_SGLANG_FORCE:-0}" == "1" || ! -x "$VENV/bin/python" ]]; then
  rm -rf "$VENV"
  log "creating venv $VENV with $("$PY" --version)"
  "$PY" -m venv "$VENV"
fi
VPY="$VENV/bin/python"

PIP_ARGS=(--no-deps --only-binary=:all: --disable-pip-version-check --no-input -q)
if [[ -n "${SPECGUARD_TORCH_INDEX_URL:-}" ]]; then
  PIP_ARGS+=(--extra-index-url "$SPECGUARD_TORCH_INDEX_URL")
fi

# One pip run, no resolver walk: the lock is complete and every line is pinned.
# torch==2.13.0 matches the local 2.13.0+cpu wheel (pip find-links) and pip prefers it
# over the PyPI CUDA build; --no-deps means no nvidia-* or other torch is ever pulled.
log "installing $(grep -cvE '^\s*(#|$)' "$LOCK") pinned packages + sglang==${SGLANG_VERSION} (--no-deps)"
"$VPY" -m pip install "${PIP_ARGS[@]}" -r "$LOCK" "sglang==${SGLANG_VERSION}" 2>&1 \
  | grep -vE "is ignored: it is neither a file nor a directory|^sglang .* requires |dependency resolver does not currently|dependency conflicts" >&2 || true

# Refuse a non-CPU / non-2.13.0 torch.
"$VPY" - <<'PY'
import torch, sys
v = torch.__version__
if not v.startswith("2.13.0"):
    sys.exit(f"wrong torch in venv: {v}")
if torch.version.cuda is not None:
    print(f"[sglang_env] WARNING: torch {v} is a CUDA build (cuda {torch.version.cuda}); "
          "set SPECGUARD_TORCH_INDEX_URL to a CPU index", file=sys.stderr)
PY

# torchvision stand-in: plain package copied into site-packages, deliberately without
# dist-info (see torchvision_stub/torchvision/__init__.py for why).
SITE="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
if "$VPY" -m pip show -q torchvision >/dev/null 2>&1; then
  log "removing a real torchvision (it does not match torch 2.13.0+cpu)"
  "$VPY" -m pip uninstall -y -q torchvision >&2
fi
rm -rf "$SITE/torchvision"
cp -r "$STUB" "$SITE/torchvision"
find "$SITE/torchvision" -name '__pycache__' -prune -exec rm -rf {} +

smoke
echo "$WANT" > "$STAMP"
log "ready: $VENV ($(du -sh "$VENV" | cut -f1))"
echo "$VPY"
