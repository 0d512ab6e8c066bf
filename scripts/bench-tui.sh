#!/usr/bin/env bash
# Measures the release binary in tmux (160x45) against the local scripted model server, with the
# budgets of the speed issue: start-up, idle CPU and writes, streaming CPU and lag (a realistic
# markdown answer and a long pro reasoning, every SSE event its own write), keystroke latency
# while streaming, resident memory, and a session of STEPS tool steps: its first frame, a page of
# scrolling, its memory and the same answer streamed with it open.
# Prints one line per figure: `name value unit (budget X) PASS|FAIL`.
# Usage: scripts/bench-tui.sh [TOKENS] [TOKENS_PER_SECOND]   (defaults 20000 2000)
#        BENCH_BIN=path/to/miniclaw-tui scripts/bench-tui.sh  (another build of the program)
#        STEPS=2000 STEP_BYTES=4096 scripts/bench-tui.sh      (the long session's size)
set -euo pipefail
cd "$(dirname "$0")/.."

TOKENS=${1:-20000}
RATE=${2:-2000}
STEPS=${STEPS:-2000}
STEP_BYTES=${STEP_BYTES:-4096}
cargo build --release --quiet --bin miniclaw-tui --example mock_model_server --example gen_history
# BENCH_BIN measures another build of the program (e.g. one from before a change).
BIN=${BENCH_BIN:-$PWD/target/release/miniclaw-tui}
EX=$PWD/target/release/examples
TCK=$(getconf CLK_TCK)
WORK=$(mktemp -d)
SESSION="mcbench$$"
SERVER_PIDS=()

cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    for pid in "${SERVER_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
}
trap cleanup EXIT

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# utime + stime in clock ticks (fields 14 and 15; the name field may hold spaces).
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
written() { awk '/^wchar/ {print $2}' "/proc/$1/io"; }
screen() { tmux capture-pane -p -t "$SESSION"; }
# report NAME VALUE UNIT BUDGET  — PASS when VALUE <= BUDGET.
report() {
    local verdict
    verdict=$(awk -v v="$2" -v b="$4" 'BEGIN { print (v <= b) ? "PASS" : "FAIL" }')
    printf '%-28s %10s %-4s (budget %s) %s\n' "$1" "$2" "$3" "$4" "$verdict"
}
# wait_for TEXT TIMEOUT_MS: polls the screen; prints the ms waited (or -1).
wait_for() {
    local start end
    start=$(now_ms)
    while :; do
        if screen | grep -qF -- "$1"; then
            end=$(now_ms)
            echo $((end - start))
            return
        fi
        if [ $(( $(now_ms) - start )) -gt "$2" ]; then
            echo -1
            return
        fi
        sleep 0.002
    done
}
# wait_change BEFORE TIMEOUT_MS: polls until the screen differs from BEFORE; prints the ms waited.
wait_change() {
    local start
    start=$(now_ms)
    while [ "$(screen)" = "$1" ]; do
        if [ $(( $(now_ms) - start )) -gt "$2" ]; then
            echo -1
            return
        fi
    done
    echo $(( $(now_ms) - start ))
}
# calibrate: how long tmux itself takes to show a printed status line (subtracted from start-up).
calibrate() {
    local best=1000000 t0 ms
    for _ in 1 2 3; do
        tmux kill-session -t "$SESSION" 2>/dev/null || true
        t0=$(now_ms)
        tmux new-session -d -s "$SESSION" -x 160 -y 45 "printf 'F1 help'; sleep 5"
        wait_for "F1 help" 5000 >/dev/null
        ms=$(( $(now_ms) - t0 ))
        [ "$ms" -lt "$best" ] && best=$ms
    done
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    echo "$best"
}
# launch WORKSPACE [FLAG...]: starts the program against $URL in a fresh tmux session; sets PID
# and STARTUP_MS.
launch() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    mkdir -p "$WORK/home"
    local t0
    t0=$(now_ms)
    tmux new-session -d -s "$SESSION" -x 160 -y 45 -c "$WORK" \
        "exec env HOME=$WORK/home XDG_DATA_HOME=$WORK/home/data XDG_CONFIG_HOME=$WORK/home/config \
         DEEPSEEK_API_KEY=x DEEPSEEK_BASE_URL=$URL $BIN --workspace $1 ${*:2}"
    local waited
    waited=$(wait_for "F1 help" 10000)
    STARTUP_MS=$(( $(now_ms) - t0 ))
    [ "$waited" -ge 0 ] || { echo "the program did not draw its first frame"; screen; exit 1; }
    PID=$(tmux list-panes -t "$SESSION" -F '#{pane_pid}')
}

# serve NAME ARGS...: starts the mock model server with ARGS, its output in $WORK/NAME.out;
# sets URL and OUT.
serve() {
    OUT="$WORK/$1.out"
    "$EX/mock_model_server" "${@:2}" >"$OUT" &
    SERVER_PIDS+=($!)
    for _ in $(seq 100); do [ -s "$OUT" ] && break; sleep 0.05; done
    URL=$(head -n1 "$OUT")
}
# stream PROMPT MARKER: sends PROMPT, waits for MARKER on screen; sets STREAM_CPU (% of a core,
# from sending to the marker), ARRIVAL_MS (first to last byte at the server) and LAG_MS (last
# byte to the marker on screen). KEY_MS is set when KEYS is: typed 2 s into the stream.
stream() {
    local t0 t1 c0 c1 seen done_at start_at
    tmux send-keys -t "$SESSION" "$1" Enter
    t0=$(now_ms); c0=$(cpu_ticks "$PID")
    for _ in $(seq 200); do grep -q stream-start "$OUT" && break; sleep 0.01; done
    if [ -n "${KEYS:-}" ]; then
        sleep 2
        tmux send-keys -t "$SESSION" -l "$KEYS"
        KEY_MS=$(wait_for "$KEYS" 5000)
    fi
    seen=$(wait_for "$2" 600000)
    t1=$(now_ms); c1=$(cpu_ticks "$PID")
    [ "$seen" -ge 0 ] || { echo "the marker $2 never appeared"; screen | tail -5; exit 1; }
    done_at=$(awk '/stream-done/ {print $2}' "$OUT" | tail -n1)
    start_at=$(awk '/stream-start/ {print $2}' "$OUT" | tail -n1)
    STREAM_CPU=$(awk -v t=$((c1 - c0)) -v k="$TCK" -v ms=$((t1 - t0)) 'BEGIN { printf "%.1f", 100 * t / k / (ms / 1000) }')
    ARRIVAL_MS=$((done_at - start_at))
    LAG_MS=$((t1 - done_at))
}

serve long long "$TOKENS" "$RATE"

echo "# miniclaw-tui in tmux 160x45, $TOKENS tokens at $RATE tokens/s; $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

# 1. Empty workspace: start-up, memory, idle.
TMUX_MS=$(calibrate)
echo "# tmux alone takes $TMUX_MS ms to show a printed line; start-up figures below have it subtracted"
mkdir -p "$WORK/ws"
launch "$WORK/ws"
report startup_empty_first_frame "$((STARTUP_MS - TMUX_MS))" ms 30
sleep 1
report rss_after_startup "$(rss_mb "$PID")" MB 20
c0=$(cpu_ticks "$PID"); w0=$(written "$PID")
sleep 10
c1=$(cpu_ticks "$PID"); w1=$(written "$PID")
report idle_cpu_10s "$(awk -v t=$((c1 - c0)) -v k="$TCK" 'BEGIN { printf "%.2f", t / k }')" s 0.1
report idle_bytes_written_10s "$((w1 - w0))" B 0

# 2. The long answer, every SSE event its own write and flush at its own time, as a real server
# sends tokens: CPU while it streams, lag after the last token, keystrokes meanwhile.
serve answer long "$TOKENS" "$RATE" --event-writes
mkdir -p "$WORK/ws_b"
launch "$WORK/ws_b"
KEYS=zqx stream "write the long answer" "END-OF-ANSWER-$TOKENS"
report keystroke_while_streaming "$KEY_MS" ms 16
report stream_arrival "$ARRIVAL_MS" ms $((TOKENS * 1000 / RATE + 500))
report last_line_lag_after_arrival "$LAG_MS" ms 33
report stream_cpu_avg "$STREAM_CPU" "%" 3
EMPTY_CPU=$STREAM_CPU
sleep 1
report rss_after_answer "$(rss_mb "$PID")" MB 20

# 3. TOKENS tokens of reasoning with the pro preset, the reasoning pane showing it as it grows,
# every event its own write.
serve reasoning think-long "$TOKENS" "$RATE" --event-writes
mkdir -p "$WORK/ws_c"
launch "$WORK/ws_c" --model deepseek-v4-pro
stream "think it through" "END-OF-REASONING-$TOKENS"
report reasoning_stream_arrival "$ARRIVAL_MS" ms $((TOKENS * 1000 / RATE + 500))
report reasoning_last_line_lag "$LAG_MS" ms 33
report reasoning_stream_cpu_avg "$STREAM_CPU" "%" 3

# 4. A session of STEPS steps (each a turn that reads a file of STEP_BYTES and answers):
# start-up, a page of scrolling back, memory, and the answer streamed with it open.
mkdir -p "$WORK/ws2"
"$EX/gen_history" "$WORK/ws2" "$STEPS" "$STEP_BYTES" >/dev/null
serve long_session long "$TOKENS" "$RATE" --event-writes
launch "$WORK/ws2"
report "startup_${STEPS}_steps_first_frame" "$((STARTUP_MS - TMUX_MS))" ms 50
sleep 1
best=1000000
for _ in 1 2 3 4 5; do
    before=$(screen)
    tmux send-keys -t "$SESSION" PageUp
    ms=$(wait_change "$before" 2000)
    [ "$ms" -ge 0 ] && [ "$ms" -lt "$best" ] && best=$ms
done
report "scroll_page_${STEPS}_steps" "$best" ms 16
report "rss_${STEPS}_steps" "$(rss_mb "$PID")" MB 40
tmux send-keys -t "$SESSION" End
stream "write the long answer" "END-OF-ANSWER-$TOKENS"
report "stream_cpu_${STEPS}_steps" "$STREAM_CPU" "%" 3
report "stream_cpu_ratio_${STEPS}_steps" "$(awk -v a="$STREAM_CPU" -v b="$EMPTY_CPU" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 99 }')" x 1.2
