#!/usr/bin/env bash
# Install everything the tests need into .venv and run them. Used by the README and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
python -m pip install --quiet --upgrade pip
# The CPU build of torch lies on local disk; installing it first keeps the runtime extra from
# pulling a multi-GB CUDA build.
python -m pip install --quiet torch==2.13.0
python -m pip install --quiet -e '.[runtime,test]'
# SGLang's own argument parser, for the parity suite (sglang --no-deps plus the few light
# modules its argument resolution imports). A failed build fails the run: the parity tests
# would fail without it. SPECGUARD_SKIP_SGLANG_ENV=1 skips the build and those tests in a local
# run only; CI always builds it, so that parity is never claimed untested.
if [ "${SPECGUARD_SKIP_SGLANG_ENV:-0}" = "1" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "error: SPECGUARD_SKIP_SGLANG_ENV=1 is for local runs; CI runs the parity suite" >&2
    exit 2
  fi
  echo "warning: SPECGUARD_SKIP_SGLANG_ENV=1: the parity environment is not built and its tests skip" >&2
else
  bash scripts/sglang_env/setup.sh
fi
# The two newest SGLang wheels, for the release ledger's generator test (the newest release pair,
# regenerated from its wheels, must be all in the ledger): downloaded once, kept in .cache/.
if [ -z "${SPECGUARD_SGLANG_WHEELS:-}" ]; then
  mkdir -p .cache/sgl-wheels
  for release in 0.5.22 0.5.23; do python -m pip download --quiet --no-deps "sglang==$release" -d .cache/sgl-wheels; done
  export SPECGUARD_SGLANG_WHEELS="$PWD/.cache/sgl-wheels"
fi
# zsh and fish, so the completion tests drive those shells too (they skip, naming the shell,
# where it cannot be installed).
if ! command -v zsh >/dev/null || ! command -v fish >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    { apt-get update -qq && apt-get install -y -qq zsh fish; } >/dev/null 2>&1 || echo "warning: zsh/fish not installed; their completion tests will skip"
  fi
fi
# The gates: lint and types (settings in pyproject.toml); a new finding fails CI.
python -m ruff check
python -m mypy
python -m pytest -q "$@"
