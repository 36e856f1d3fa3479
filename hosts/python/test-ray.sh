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

# Every port the cluster is given, distinct: all bound at once, then let go (a port bound and let go
# one at a time may come straight back on the next bind, and Ray refuses one port for two parts).
# The head's GCS port, then six for each node (node_ports).
read -r -a cluster_ports <<<"$(.venv-ray/bin/python -c 'import socket
sockets = [socket.socket() for _ in range(13)]
for s in sockets:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in sockets))')"
port=${cluster_ports[0]}
node_port_list=("${cluster_ports[@]:1}")
# Ray replaces 127.0.0.1 by the machine's routable address (resolve_ip_for_localhost), so the nodes
# take another loopback address: everything they announce and connect to stays on lo.
ip=127.0.0.2
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
# the workers' from a range of 100 of each node's own. Those ranges lie below the kernel's ephemeral
# range, where the ports bound above come from: a worker range drawn from inside it once took in the
# dashboard agent's port, and Ray refused to start ("worker_ports is trying to use a port number
# ... that is used by other components").
read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range
[ "$ephemeral_low" -ge 13024 ] || die "the ephemeral port range starts at $ephemeral_low: no room below it for the workers"
head_workers=$((ephemeral_low - 12000 + RANDOM % 5900))
node_workers=$((ephemeral_low - 6000 + RANDOM % 5900))
node_ports() { # NODE (0 the head, 1 the second) WORKERS_FROM
    local p=("${node_port_list[@]:$(($1 * 6)):6}")
    echo --node-manager-port="${p[0]}" --object-manager-port="${p[1]}" \
        --dashboard-agent-listen-port="${p[2]}" --dashboard-agent-grpc-port="${p[3]}" \
        --runtime-env-agent-port="${p[4]}" --metrics-export-port="${p[5]}" \
        --min-worker-port="$2" --max-worker-port="$(($2 + 99))"
}
common=(--node-ip-address="$ip" --num-cpus=1 --object-store-memory=200000000 --disable-usage-stats
        --temp-dir="$temp")
say "head node on $ip:$port"
# shellcheck disable=SC2046
"$ray" start --head --port="$port" --include-dashboard=false "${common[@]}" $(node_ports 0 "$head_workers") \
    >"$temp/head.log" 2>&1 || { cat "$temp/head.log" >&2; die "ray start --head failed"; }
say "second node"
# shellcheck disable=SC2046
"$ray" start --address="$ip:$port" "${common[@]}" $(node_ports 1 "$node_workers") \
    >"$temp/node.log" 2>&1 || { cat "$temp/node.log" >&2; die "ray start (second node) failed"; }

export MEDIAGATE_RAY_ADDRESS=$ip:$port
set +e
# -p no:logging: a failure would otherwise print every DEBUG line of Ray Data it captured.
timeout 300 .venv-ray/bin/python -m pytest -q -p no:cacheprovider -p no:logging tests_ray "$@"
status=$?
set -e
exit "$status"
