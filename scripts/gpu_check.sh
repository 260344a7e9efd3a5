#!/usr/bin/env bash
# The GPU check: everything of the bundled runtime that only a GPU can show, in one command of
# at most 9 minutes on one H100, with no network. Writes every result as JSON and a short text
# summary (summary.txt) into OUT, and exits non-zero when any step fails.
#
#   bash scripts/gpu_check.sh OUT              # on a GPU machine (torch with CUDA)
#   bash scripts/gpu_check.sh OUT --dry-run    # anywhere: the same steps on the CPU, tiny sizes
#
# Steps (each its own log in OUT, its status in OUT/steps.json):
#   runtime-tests  tests/runtime on the device (lossless greedy equality for every algorithm,
#                  chains and trees, batched and single)
#   launch         `specguard launch --preset tiny-cpu-eagle3 -- --device cuda` through the CLI:
#                  native API and OpenAI client give plain decoding's text, Ctrl-C leaves nothing
#   roofline       plain decode and verify forwards of Llama-3.1-8B's shape (random bf16
#                  weights built on the GPU) at batch 1, 4 and 16, eager and CUDA graph, against
#                  the measured copy bandwidth and `accept --gpu`'s roofline estimate
#   accept         `specguard accept --gpu H100 --device cuda` on the tiny EAGLE3 pair
#
# Packages the GPU machine lacks come as wheels in .whl (scripts/gpu_wheels.sh makes it, here,
# where the registry is reachable); the tiny pair comes built in .tiny-cache when present
# (SPECGUARD_CACHE_DIR), else it is built on the machine first.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gpu_check.sh OUT [--dry-run]}
dry_run=0
[ "${2:-}" = "--dry-run" ] && dry_run=1
mkdir -p "$out"
out=$(cd "$out" && pwd)

python=${PYTHON:-python3}
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/specguard-site .whl/*.whl || exit 2
  export PYTHONPATH="/tmp/specguard-site:$PWD${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
if [ -z "${SPECGUARD_CACHE_DIR:-}" ] && [ -d .tiny-cache ]; then export SPECGUARD_CACHE_DIR="$PWD/.tiny-cache"; fi

if [ "$dry_run" = 1 ]; then
  device=cpu
  runtime_tests=(tests/runtime/test_runtime_greedy.py -k "chain or tree")
  roofline=(--dry-run)
  accept_sizes=(--max-new-tokens 16 --steps 2 --topk 1)
else
  device=cuda
  runtime_tests=(tests/runtime)
  roofline=(--device cuda --gpu H100)
  accept_sizes=(--max-new-tokens 64 --steps 3,5 --topk 1,4 --draft-tokens 8)
fi
export SPECGUARD_TEST_DEVICE=$device

steps_json="$out/steps.json"
echo "[" >"$steps_json"
failed=0
first=1
step() {  # step NAME COMMAND...: run, log to OUT/NAME.log, record its status and seconds
  local name=$1
  shift
  local began=$SECONDS
  echo "== $name: $*"
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  local seconds=$((SECONDS - began))
  [ "$rc" = 0 ] || failed=1
  [ "$first" = 1 ] || echo "," >>"$steps_json"
  first=0
  printf '  {"step": "%s", "exit_code": %d, "seconds": %d}' "$name" "$rc" "$seconds" >>"$steps_json"
  echo "   exit $rc after ${seconds}s (log: $name.log)"
  tail -n 3 "$out/$name.log" | sed 's/^/   | /'
}

{
  echo "specguard GPU check ($([ "$dry_run" = 1 ] && echo "dry run on the CPU: no figure here is a GPU's" || echo "on the GPU"))"
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  git rev-parse --short HEAD 2>/dev/null || true
  "$python" -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no CUDA device')"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
} | tee "$out/summary.txt"

step runtime-tests "$python" -m pytest -q -x "${runtime_tests[@]}" --junitxml="$out/runtime-tests.xml"
step launch "$python" -m pytest -q tests/launch/test_launch_reference.py -k eagle3_preset_serves
step roofline "$python" benchmarks/runtime/bench_gpu_roofline.py "${roofline[@]}" --out "$out/roofline.json"
accept_json() {  # the figures alone on stdout, into accept.json; messages go to the log
  "$python" -m specguard accept --target tiny:target --draft tiny:eagle3 --device "$device" --gpu H100 \
    "${accept_sizes[@]}" --format json >"$out/accept.json"
}
step accept accept_json
echo "" >>"$steps_json"
echo "]" >>"$steps_json"

{
  echo
  cat "$out/roofline.txt" 2>/dev/null
  echo
  "$python" - "$steps_json" <<'PY'
import json, sys
steps = json.load(open(sys.argv[1]))
for s in steps:
    print(f"{s['step']:<14} {'ok' if s['exit_code'] == 0 else 'FAILED (exit %d)' % s['exit_code']:<16} {s['seconds']:>4} s")
PY
} | tee -a "$out/summary.txt"
exit "$failed"
