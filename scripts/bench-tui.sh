#!/usr/bin/env bash
# Measures the release binary in tmux (160x45) against the local scripted model server:
# start-up, idle CPU, streaming CPU and lag, keystroke latency while streaming, resident memory.
# Prints one line per figure: `name value unit (budget X) PASS|FAIL`.
# Usage: scripts/bench-tui.sh [TOKENS] [TOKENS_PER_SECOND]   (defaults 20000 2000)
set -euo pipefail
cd "$(dirname "$0")/.."

TOKENS=${1:-20000}
RATE=${2:-2000}
TURNS=${TURNS:-1000}
cargo build --release --quiet --bin miniclaw-tui --example mock_model_server --example gen_history
BIN=$PWD/target/release/miniclaw-tui
EX=$PWD/target/release/examples
TCK=$(getconf CLK_TCK)
WORK=$(mktemp -d)
SESSION="mcbench$$"
SERVER_PID=""

cleanup() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
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
# launch WORKSPACE: starts the program in a fresh tmux session; sets PID and STARTUP_MS.
launch() {
    tmux kill-session -t "$SESSION" 2>/dev/null || true
    mkdir -p "$WORK/home"
    local t0
    t0=$(now_ms)
    tmux new-session -d -s "$SESSION" -x 160 -y 45 -c "$WORK" \
        "exec env HOME=$WORK/home XDG_DATA_HOME=$WORK/home/data XDG_CONFIG_HOME=$WORK/home/config \
         DEEPSEEK_API_KEY=x DEEPSEEK_BASE_URL=$URL $BIN --workspace $1"
    local waited
    waited=$(wait_for "F1 help" 10000)
    STARTUP_MS=$(( $(now_ms) - t0 ))
    [ "$waited" -ge 0 ] || { echo "the program did not draw its first frame"; screen; exit 1; }
    PID=$(tmux list-panes -t "$SESSION" -F '#{pane_pid}')
}

"$EX/mock_model_server" long "$TOKENS" "$RATE" >"$WORK/server.out" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/server.out" ] && break; sleep 0.05; done
URL=$(head -n1 "$WORK/server.out")

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

# 2. The long answer: CPU while it streams, lag after the last token, keystrokes meanwhile.
marker="END-OF-ANSWER-$TOKENS"
tmux send-keys -t "$SESSION" "write the long answer" Enter
t0=$(now_ms); c0=$(cpu_ticks "$PID")
for _ in $(seq 200); do grep -q stream-start "$WORK/server.out" && break; sleep 0.01; done
sleep 2
tmux send-keys -t "$SESSION" -l "zqx"
key_ms=$(wait_for "zqx" 5000)
seen=$(wait_for "$marker" 600000)
t1=$(now_ms); c1=$(cpu_ticks "$PID")
done_at=$(awk '/stream-done/ {print $2}' "$WORK/server.out" | tail -n1)
start_at=$(awk '/stream-start/ {print $2}' "$WORK/server.out" | tail -n1)
[ "$seen" -ge 0 ] || { echo "the end marker never appeared"; screen | tail -5; exit 1; }
report keystroke_while_streaming "$key_ms" ms 33
report stream_arrival "$((done_at - start_at))" ms $((TOKENS * 1000 / RATE + 500))
report last_line_lag_after_arrival "$((t1 - done_at))" ms 33
report stream_cpu_avg "$(awk -v t=$((c1 - c0)) -v k="$TCK" -v ms=$((t1 - t0)) 'BEGIN { printf "%.1f", 100 * t / k / (ms / 1000) }')" "%" 10
sleep 1
report rss_after_answer "$(rss_mb "$PID")" MB 30

# 3. A history of TURNS turns: start-up and memory.
mkdir -p "$WORK/ws2"
"$EX/gen_history" "$WORK/ws2" "$TURNS" >/dev/null
launch "$WORK/ws2"
report "startup_${TURNS}_turns_first_frame" "$((STARTUP_MS - TMUX_MS))" ms 60
sleep 1
report "rss_${TURNS}_turns" "$(rss_mb "$PID")" MB 60
