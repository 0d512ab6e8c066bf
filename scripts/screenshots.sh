#!/usr/bin/env bash
# Makes screenshots/*.png from real runs of miniclaw-tui against the local scripted model server
# (examples/mock_model_server.rs), in tmux, rendered by scripts/ansi_to_png.py. Not run in CI.
#
#   scripts/screenshots.sh            # all pictures
#   scripts/screenshots.sh narrow     # only the ones named
#
# Needs tmux, python3 with pyte and Pillow, and fonts: DejaVu Sans Mono, WenQuanYi Micro Hei (CJK)
# and, for colour emoji, Noto Color Emoji. Missing pieces are installed when possible (pip; apt-get
# as root), otherwise the script says what to install and stops.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/screenshots
WAIT_SECONDS=${WAIT_SECONDS:-30}

say() { printf '[screenshots] %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# --- what the pictures need ------------------------------------------------------------------
check_tools() {
    command -v tmux >/dev/null || die "tmux is missing: apt-get install tmux (or your system's package)"
    command -v python3 >/dev/null || die "python3 is missing"
    if ! python3 -c 'import pyte, PIL' 2>/dev/null; then
        say "installing the Python packages pyte and pillow (pip install --user pyte pillow)"
        python3 -m pip install --quiet --user pyte pillow \
            || python3 -m pip install --quiet pyte pillow \
            || die "could not install pyte and pillow: pip install pyte pillow"
    fi
    local fonts=(
        /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf:fonts-dejavu-core
        /usr/share/fonts/truetype/wqy/wqy-microhei.ttc:fonts-wqy-microhei
        /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf:fonts-noto-color-emoji
    )
    local missing=()
    for entry in "${fonts[@]}"; do
        [[ -e ${entry%%:*} ]] || missing+=("${entry##*:}")
    done
    if ((${#missing[@]})); then
        if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
            say "installing fonts: ${missing[*]}"
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
                || die "could not install ${missing[*]}: apt-get install ${missing[*]}"
        else
            die "fonts missing: apt-get install ${missing[*]} (Debian/Ubuntu package names)"
        fi
    fi
}

# --- the program and the model server ----------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/miniclaw-shots.XXXXXX")
SOCKET=miniclaw-shots-$$
SERVER_PIDS=()
cleanup() {
    tmux -L "$SOCKET" kill-server 2>/dev/null || true
    for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT

BIN=$ROOT/target/release/miniclaw-tui
SERVER=$ROOT/target/release/examples/mock_model_server

build() {
    say "building the release binary and the example model server"
    cargo build --release --quiet --bin miniclaw-tui --example mock_model_server --example gen_history
}

# start_server SCENARIO VAR: starts the example server; sets VAR to its URL.
start_server() {
    local log=$TMP/server-$1.out
    "$SERVER" "$1" >"$log" 2>&1 &
    SERVER_PIDS+=($!)
    for _ in $(seq 100); do
        if grep -q '^http://' "$log"; then
            printf -v "$2" '%s' "$(head -n1 "$log")"
            return
        fi
        sleep 0.1
    done
    die "the model server did not start: $(cat "$log")"
}

# --- driving the program in tmux ------------------------------------------------------------------
# launch NAME COLS ROWS URL ARGS...: runs the program in its own window with a fresh home and workspace.
launch() {
    local name=$1 cols=$2 rows=$3 url=$4
    shift 4
    local dir=$TMP/$name
    mkdir -p "$dir/home"
    local cmd
    cmd=$(printf '%q ' env -i PATH="$PATH" TERM=xterm-256color COLORTERM=truecolor LANG=C.UTF-8 \
        HOME="$dir/home" XDG_CONFIG_HOME="$dir/home/.config" XDG_DATA_HOME="$dir/home/.local/share" \
        XDG_STATE_HOME="$dir/home/.local/state" DEEPSEEK_API_KEY=sk-screenshots DEEPSEEK_BASE_URL="$url" \
        "$BIN" --workspace workspace --no-mouse "$@")
    # The shell waits after the program so a crash stays on screen to read.
    tmux -L "$SOCKET" new-session -d -s "$name" -x "$cols" -y "$rows" -c "$dir" "$cmd; sleep 600"
}

screen_text() { tmux -L "$SOCKET" capture-pane -p -t "$1"; }

# wait_for NAME TEXT: waits until TEXT is on the screen.
wait_for() {
    local deadline=$((SECONDS + WAIT_SECONDS))
    until screen_text "$1" | grep -qF -- "$2"; do
        if ((SECONDS > deadline)); then
            say "timed out waiting for '$2' in $1; the screen was:"
            screen_text "$1" >&2
            exit 1
        fi
        sleep 0.1
    done
}

keys() { tmux -L "$SOCKET" send-keys -t "$@"; }

# Types a prompt and sends it.
prompt() {
    keys "$1" -l "$2"
    wait_for "$1" "$2"
    keys "$1" Enter
}

# shoot NAME [dark|light]: captures the screen (with colours) and renders it to
# screenshots/NAME.png as a terminal with a dark (default) or light background shows it.
shoot() {
    local name=$1 background=${2:-dark} size
    size=$(tmux -L "$SOCKET" display-message -p -t "$name" '#{pane_width} #{pane_height}')
    tmux -L "$SOCKET" capture-pane -e -p -t "$name" >"$TMP/$name.ansi"
    # shellcheck disable=SC2086 # the size is two words on purpose
    python3 "$ROOT/scripts/ansi_to_png.py" "$TMP/$name.ansi" $size "$OUT/$name.png" "$background"
    tmux -L "$SOCKET" kill-session -t "$name"
    say "wrote screenshots/$name.png ($size)"
}

# --- the pictures ------------------------------------------------------------------------------------
DEMO_DONE="The sum is"

shot_turn_timeline() {
    launch turn-timeline 140 40 "$DEMO_URL"
    wait_for turn-timeline "deepseek-flash"
    prompt turn-timeline "What is in my workspace? Leave me a note."
    wait_for turn-timeline "$DEMO_DONE"
    wait_for turn-timeline "idle"
    keys turn-timeline C-o
    wait_for turn-timeline "Observation"
    shoot turn-timeline
}

shot_pro_reasoning() {
    launch pro-reasoning 140 40 "$THINK_URL" --model deepseek-v4-pro
    wait_for pro-reasoning "deepseek-v4-pro"
    prompt pro-reasoning "Is 2^31 - 1 prime?"
    # Mid-stream: the reasoning has gone past Euler but the answer has not started.
    wait_for pro-reasoning "62k"
    wait_for pro-reasoning "Checking"
    shoot pro-reasoning
}

shot_light_theme() {
    launch light-theme 140 40 "$DEMO_URL" --theme light
    wait_for light-theme "deepseek-flash"
    prompt light-theme "What is in my workspace? Leave me a note."
    wait_for light-theme "$DEMO_DONE"
    wait_for light-theme "idle"
    shoot light-theme light
}

shot_narrow() {
    launch narrow 70 30 "$DEMO_URL"
    wait_for narrow "deepseek-flash"
    prompt narrow "What is in my workspace?"
    wait_for narrow "$DEMO_DONE"
    wait_for narrow "idle"
    shoot narrow
}

shot_approval() {
    launch approval 140 40 "$DEMO_URL" --approval ask
    wait_for approval "approval: ask"
    prompt approval "What is in my workspace? Leave me a note."
    wait_for approval "Write notes.md?"
    wait_for approval "+# Notes"
    shoot approval
}

shot_command_changes() {
    local ws=$TMP/command-changes/workspace
    mkdir -p "$ws"
    printf 'def add(a, b):\n    return a - b\n' >"$ws/calc.py"
    printf 'old\n' >"$ws/old.txt"
    printf 'build/\n' >"$ws/.gitignore"
    launch command-changes 140 40 "$COMMAND_URL"
    wait_for command-changes "deepseek-flash"
    prompt command-changes "Fix add in calc.py with sed."
    wait_for command-changes "Fixed"
    wait_for command-changes "idle"
    prompt command-changes "/diff"
    wait_for command-changes "return a + b"
    shoot command-changes
}

shot_compaction() {
    mkdir -p "$TMP/compaction/workspace"
    "$ROOT/target/release/examples/gen_history" "$TMP/compaction/workspace" 300 >/dev/null
    launch compaction 140 40 "$COMPACT_URL" --context-tokens 20000
    wait_for compaction "deepseek-flash"
    prompt compaction "Where are we?"
    wait_for compaction "Compacted 300 turns"
    wait_for compaction "eviction"
    wait_for compaction "idle"
    shoot compaction
}

main() {
    check_tools
    build
    mkdir -p "$OUT"
    start_server demo DEMO_URL
    start_server think THINK_URL
    start_server command-edit COMMAND_URL
    start_server compact COMPACT_URL
    local shots=("$@")
    ((${#shots[@]})) || shots=(turn-timeline pro-reasoning light-theme narrow approval command-changes compaction)
    for shot in "${shots[@]}"; do
        "shot_${shot//-/_}"
    done
}

main "$@"
