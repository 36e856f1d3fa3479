#!/usr/bin/env bash
# The Ray Data integration's tests (mediagate_host.ray) on a real Ray cluster of two nodes on this
# machine: a head and a second node, one CPU each, started with `ray start`, then pytest on
# tests_ray/, then both stopped (`ray stop --force`) whatever happened, and nothing of them left
# running. .venv-ray is made if missing and given requirements-ray.txt (as test.sh does).
# Needs the component (target/guest/mediagate-agent-tool.wasm, else the carried lib/components/
# copy, or $MEDIAGATE_AGENT_TOOL_WASM) and the CLI ($MEDIAGATE_BIN or target/release/mediagate) for
# the verdicts the tests compare. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
suite=hosts/python/ray
source ../../scripts/suite.sh
python_venv .venv-ray 11 requirements-ray.txt
ray=$PWD/.venv-ray/bin/ray

if [ -z "${MEDIAGATE_AGENT_TOOL_WASM:-}" ] && [ ! -f ../../target/guest/mediagate-agent-tool.wasm ]; then
    export MEDIAGATE_AGENT_TOOL_WASM=$PWD/../../lib/components/mediagate-agent-tool.wasm
fi
export MEDIAGATE_CACHE_DIR=${MEDIAGATE_CACHE_DIR:-$PWD/.cache}
# The Ray workers start from the nodes' environment: they import mediagate_host (and the tests'
# helper classes) from here.
export PYTHONPATH=$PWD:$PWD/tests_ray:$PWD/tests${PYTHONPATH:+:$PYTHONPATH}
export RAY_USAGE_STATS_ENABLED=0

# Ray's running processes (not zombies): its daemons, and its workers by the title they take.
ray_pids() { ps -eo pid=,stat=,comm=,args= | awk '$2 !~ /^Z/ && ($3 == "raylet" || $3 == "gcs_server" || $4 ~ /^ray::/) { print $1 }'; }
# `ray stop` ends every Ray process on the machine: refuse to start next to a Ray we did not start.
if [ -n "$(ray_pids)" ]; then
    die "a Ray cluster is already running on this machine; stop it first (this script's cleanup would end it too)"
fi

# Each actor loads the compiled component from the cache: compile it once, here, not in the actors.
.venv-ray/bin/python -m mediagate_host warm-up

free_port() { .venv-ray/bin/python -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Ray replaces 127.0.0.1 by the machine's routable address (resolve_ip_for_localhost), so the nodes
# take another loopback address: everything they announce and connect to stays on lo.
ip=127.0.0.2
port=$(free_port)
temp=$(mktemp -d "${TMPDIR:-/tmp}/mg-ray.XXXXXX")

stop_cluster() {
    local status=$?
    trap - EXIT INT TERM
    "$ray" stop --force >/dev/null 2>&1 || true
    # The workers may outlive their raylet by a moment.
    local left=""
    for _ in $(seq 1 50); do
        left=$(ray_pids)
        [ -z "$left" ] && break
        sleep 0.2
    done
    if [ -n "$left" ]; then
        printf '[%s] error: Ray processes left after ray stop: %s\n' "$suite" "$(echo $left)" >&2
        status=1
    fi
    rm -rf "$temp"
    exit "$status"
}
trap stop_cluster EXIT INT TERM

# The ports are all chosen here (two nodes on one machine would otherwise both take Ray's defaults),
# the workers' from a range of 100 of each node's own.
node_ports() {
    echo --node-manager-port="$(free_port)" --object-manager-port="$(free_port)" \
        --dashboard-agent-listen-port="$(free_port)" --dashboard-agent-grpc-port="$(free_port)" \
        --runtime-env-agent-port="$(free_port)" --metrics-export-port="$(free_port)" \
        --min-worker-port="$1" --max-worker-port="$(($1 + 99))"
}
common=(--node-ip-address="$ip" --num-cpus=1 --object-store-memory=200000000 --disable-usage-stats
        --temp-dir="$temp")
say "head node on $ip:$port"
# shellcheck disable=SC2046
"$ray" start --head --port="$port" --include-dashboard=false "${common[@]}" $(node_ports $((20000 + RANDOM % 10000))) \
    >"$temp/head.log" 2>&1 || { cat "$temp/head.log" >&2; die "ray start --head failed"; }
say "second node"
# shellcheck disable=SC2046
"$ray" start --address="$ip:$port" "${common[@]}" $(node_ports $((30000 + RANDOM % 10000))) \
    >"$temp/node.log" 2>&1 || { cat "$temp/node.log" >&2; die "ray start (second node) failed"; }

export MEDIAGATE_RAY_ADDRESS=$ip:$port
set +e
# -p no:logging: a failure would otherwise print every DEBUG line of Ray Data it captured.
timeout 300 .venv-ray/bin/python -m pytest -q -p no:cacheprovider -p no:logging tests_ray "$@"
status=$?
set -e
exit "$status"
