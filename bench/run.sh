#!/usr/bin/env bash
# bench/run.sh: compare beangate (memory backend) with a real beanstalkd, side by side.
#
# Builds beangate and beangate-bench, starts both servers on free loopback ports, runs the
# beangate-bench scenarios with rounds alternating between the servers, prints one table per
# scenario, and stops the servers it started. Ratios are to the first server (beanstalkd).
#
# Environment:
#   BENCH_ROUNDS=3        rounds per server and scenario
#   BENCH_DURATION=3s     measuring time per round (open-loop: BENCH_OPEN_LOOP_DURATION, 10s)
#   BENCH_JSON=1          JSON lines instead of tables
#   BENCH_OUT=DIR         keep binaries, server logs and results.txt here (default: a temp dir)
#   BEANSTALKD=path       the reference server (default: beanstalkd on PATH)
#   BEANGATE_REDIS_URL    also run beangate --backend $BEANGATE_REDIS_URL ("beangate-redis")
#   BEANGATE_PG_URL       also run beangate --backend $BEANGATE_PG_URL ("beangate-pg"), plus
#                         beanstalkd with a binlog (-b DIR -f0) as its durable reference
#   (for those two the tables add the store's CPU per job, Redis commands per job and
#   PostgreSQL WAL bytes per job next to every gateway's CPU per job; the store must be local)
#   BENCH_GATEWAYS=2      gateways per shared-store target (Redis, Postgres): with 2, producers
#                         use one and consumers the other; 1 measures a single gateway
#   BENCH_BINLOG="-f0"    run beanstalkd and beangate (memory) each with a binlog in a directory
#                         of its own (-b DIR) and these binlog flags ("-f0", "-f 50", "-F", …)
# If cmd/beangate does not build, a second beanstalkd stands in for it (a harness sanity check).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${BENCH_ROUNDS:-3}
duration=${BENCH_DURATION:-3s}
out=${BENCH_OUT:-$(mktemp -d -t beangate-bench.XXXXXX)}
beanstalkd=${BEANSTALKD:-$(command -v beanstalkd || true)}
idle_conns=10000
mkdir -p "$out"

[ -x "$beanstalkd" ] || { echo "run.sh: beanstalkd not found (set BEANSTALKD=path)" >&2; exit 1; }

# The conns scenario holds $idle_conns sockets in the harness and in each server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((idle_conns + 200)) ]; then
  idle_conns=$(( $(ulimit -n) - 200 ))
  echo "run.sh: open-file limit $(ulimit -n): conns scenario uses $idle_conns connections" >&2
fi

echo "run.sh: building into $out" >&2
go build -o "$out/beangate-bench" ./cmd/beangate-bench
have_beangate=1
go build -o "$out/beangate" ./cmd/beangate || have_beangate=0

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# free_port prints a loopback port nothing listens on.
free_port() {
  local port
  while :; do
    port=$(( 20000 + RANDOM % 30000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
}

servers=""
server_pids=""
stores=""
# launch NAME LOG CMD...: run a server on a free port (CMD gets -l 127.0.0.1 -p PORT appended),
# wait until it accepts connections, and set addr and pid.
launch() {
  local name=$1 log=$2 port
  shift 2
  port=$(free_port)
  "$@" -l 127.0.0.1 -p "$port" >"$log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { echo "run.sh: $name exited; see $log" >&2; exit 1; }
    sleep 0.05
  done
  addr=127.0.0.1:$port
  echo "run.sh: $name on $addr (pid $pid)" >&2
}

# start NAME CMD...: one server, one target.
start() {
  local name=$1
  shift
  launch "$name" "$out/$name.log" "$@"
  servers="${servers:+$servers,}$name=$addr"
  server_pids="${server_pids:+$server_pids,}$name=$pid"
}

# start_pair NAME CMD...: two gateways of one shared store as one target "A+B": producers
# connect to A, consumers to B, so every job crosses gateways (memory is A's).
start_pair() {
  local name=$1 first first_pid
  shift
  launch "$name-a" "$out/$name-a.log" "$@"
  first=$addr first_pid=$pid
  launch "$name-b" "$out/$name-b.log" "$@"
  servers="${servers:+$servers,}$name=$first+$addr"
  server_pids="${server_pids:+$server_pids,}$name=$first_pid"
}

# binlog_args NAME: -b with a fresh directory and $BENCH_BINLOG's flags, when it is set.
binlog_args=()
set_binlog_args() {
  binlog_args=()
  if [ -n "${BENCH_BINLOG+x}" ]; then
    rm -rf "$out/binlog-$1" && mkdir -p "$out/binlog-$1"
    # shellcheck disable=SC2206 # the flags are meant to split
    binlog_args=(-b "$out/binlog-$1" ${BENCH_BINLOG})
  fi
}
set_binlog_args beanstalkd
start beanstalkd "$beanstalkd" "${binlog_args[@]}"
if [ "$have_beangate" = 1 ]; then
  set_binlog_args beangate
  start beangate "$out/beangate" --backend memory:// "${binlog_args[@]}"
else
  echo "run.sh: cmd/beangate does not build: comparing beanstalkd with itself" >&2
  start beanstalkd-b "$beanstalkd"
fi
# A shared store is measured through two gateways (see start_pair) unless BENCH_GATEWAYS=1.
start_shared() {
  if [ "${BENCH_GATEWAYS:-2}" = 1 ]; then start "$@"; else start_pair "$@"; fi
}
if [ -n "${BEANGATE_REDIS_URL:-}" ] && [ "$have_beangate" = 1 ]; then
  start_shared beangate-redis "$out/beangate" --backend "$BEANGATE_REDIS_URL"
  stores="${stores:+$stores,}beangate-redis=$BEANGATE_REDIS_URL"
fi
if [ -n "${BEANGATE_PG_URL:-}" ] && [ "$have_beangate" = 1 ]; then
  mkdir -p "$out/binlog"
  start beanstalkd-durable "$beanstalkd" -b "$out/binlog" -f0
  start_shared beangate-pg "$out/beangate" --backend "$BEANGATE_PG_URL"
  stores="${stores:+$stores,}beangate-pg=$BEANGATE_PG_URL"
fi

bench() {
  local args=(-servers "$servers" -pid "$server_pids" -rounds "$rounds" -duration "$duration" "$@")
  [ -n "$stores" ] && args+=(-store "$stores")
  [ -n "${BENCH_JSON:-}" ] && args+=(-json)
  "$out/beangate-bench" "${args[@]}" | tee -a "$out/results.txt"
}

# conns first: its memory figure is RSS growth over the fresh server's.
bench -scenario conns -conns "$idle_conns"
for c in 1 4 16 64; do
  bench -scenario cycle -conns "$c"
done
bench -scenario put -conns 4 -pipeline 16 -body 100 -jobs 200000
bench -scenario put -conns 4 -pipeline 16 -body 16384 -jobs 15000
bench -scenario reserve-wait -conns 100 -tubes 4 -interval 2ms
bench -scenario delayed -conns 16 -tubes 2 -interval 5ms
# Waiting workers at a fixed offered rate; its tail percentiles need a longer window.
bench -scenario open-loop -rate 2000 -producers 4 -conns 16 -warmup 2s -duration "${BENCH_OPEN_LOOP_DURATION:-10s}"
echo "run.sh: results in $out/results.txt" >&2
