#!/usr/bin/env bash
# Memory per stored job after a replay: beangate fills a binlog directory with N live
# jobs of 100-byte bodies, then beanstalkd and beangate each start on a copy of it; once each
# answers, its VmRSS / N is the figure, and the time to answer is the replay's.
#   bench/replay-rss.sh              # N=1000000; BEANSTALKD=/usr/bin/beanstalkd
#   KEEP=/tmp/dir1m bench/replay-rss.sh   # fill KEEP once and keep it; later runs reuse it
#   BEFORE=/path/to/older/beangate bench/replay-rss.sh   # measure that build too
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
BEANSTALKD=${BEANSTALKD:-/usr/bin/beanstalkd}
tmp=$(mktemp -d /tmp/replay-rss.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/beangate" ./cmd/beangate

# ask PORT: one stats round trip, true once the server answers
ask() { python3 - "$1" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=0.2)
s.sendall(b"stats\r\n"); assert s.recv(16).startswith(b"OK")
EOF
}
wait_up() { until ask "$1" 2>/dev/null; do sleep 0.02; done; }

src=${KEEP:-$tmp/src}
if [ ! -d "$src" ]; then
mkdir "$src"
"$tmp/beangate" -p 21400 -b "$src" -F 2>"$tmp/fill.log" & fill=$!
wait_up 21400
python3 - 21400 "$N" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
n, batch, body = int(sys.argv[2]), 10000, b"x" * 100
f = s.makefile("rb")
for done in range(0, n, batch):
    k = min(batch, n - done)
    s.sendall((b"put 0 0 60 100\r\n" + body + b"\r\n") * k)
    for _ in range(k):
        assert f.readline().startswith(b"INSERTED")
EOF
kill -TERM $fill; wait $fill || true
fi
echo "directory: $N jobs, $(du -sh "$src" | cut -f1)"

# measure NAME DIR CMD...: start CMD on a fresh copy of DIR, time until it answers, print its RSS
measure() {
  local name=$1 from=$2; shift 2
  rm -rf "$tmp/dir"; cp -r "$from" "$tmp/dir"; rm -f "$tmp/dir/lock"
  local t0; t0=$(date +%s.%N)
  "$@" -p 21401 -b "$tmp/dir" -F 2>/dev/null & local pid=$!
  wait_up 21401
  local t1; t1=$(date +%s.%N)
  sleep 1 # let a background collection finish
  local rss; rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
  printf '%-24s start %5.2f s  RSS %4d MB  %4d bytes/job\n' "$name" \
    "$(echo "$t1 - $t0" | bc)" $((rss / 1000)) $((rss * 1024 / N))
  kill -TERM $pid; wait $pid || true
}
mkdir "$tmp/empty"
measure "beanstalkd (no jobs)" "$tmp/empty" "$BEANSTALKD"
measure "beangate (no jobs)" "$tmp/empty" "$tmp/beangate"
measure beanstalkd "$src" "$BEANSTALKD"
measure beangate "$src" "$tmp/beangate"
if [ -n "${BEFORE:-}" ]; then measure "beangate $(basename "$BEFORE")" "$src" "$BEFORE"; fi
