#!/usr/bin/env bash
# Download, here (where the package registry is reachable), the wheels scripts/gpu_check.sh
# installs on a GPU machine that has no network. That machine's image has torch, tokenizers,
# safetensors, huggingface-hub, numpy, pyyaml, rich, httpx and jinja2 (its Python is 3.12); the
# runtime's server (fastapi, uvicorn), the records (msgspec), the preset reader (pydantic,
# ruamel.yaml) and the OpenAI client the launch check talks through are carried, at the versions
# installed in this checkout's .venv (those the test suite ran with), with their dependencies.
#
#   bash scripts/gpu_wheels.sh [DEST]      # DEST defaults to .whl (git-ignored)
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-.whl}
python=.venv/bin/python
[ -x "$python" ] || { echo "gpu_wheels.sh: no .venv here; run the set-up in README.md first" >&2; exit 2; }
packages=(fastapi uvicorn pydantic ruamel.yaml openai msgspec)
pins=()
for name in "${packages[@]}"; do
  version=$("$python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')
  [ -n "$version" ] || { echo "gpu_wheels.sh: $name is not installed in .venv (pip install -e '.[runtime,test]')" >&2; exit 2; }
  pins+=("$name==$version")
done
mkdir -p "$dest"
platforms=()
for n in 17 24 27 28 31 34; do platforms+=(--platform "manylinux_2_${n}_x86_64"); done
"$python" -m pip download --quiet --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" --platform manylinux2014_x86_64 -d "$dest" "${pins[@]}"
echo "$(ls "$dest"/*.whl | wc -l) wheels, $(du -sh "$dest" | cut -f1), in $dest: ${pins[*]}"
