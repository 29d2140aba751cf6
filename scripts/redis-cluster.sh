#!/usr/bin/env bash
# A local Redis Cluster of three masters (no replicas) for checking that the
# broker's multi-key scripts keep their keys in one hash slot:
#
#   scripts/redis-cluster.sh start   # ports 7000-7002 (BASE_PORT=7000), data in $DIR
#   scripts/redis-cluster.sh single  # one node holding every slot, port BASE_PORT
#   scripts/redis-cluster.sh check   # CLUSTER INFO of the first node
#   scripts/redis-cluster.sh stop    # shuts the nodes down, deletes $DIR
#
# DIR defaults to /tmp/uttt-redis-cluster. Starting an already running
# cluster does nothing.
#
# `.ci/run` starts the three-node cluster and points the tests at it:
#   scripts/redis-cluster.sh start
#   TEST_REDIS_CLUSTER_URL=redis://127.0.0.1:7000,redis://127.0.0.1:7001,redis://127.0.0.1:7002 \
#     cargo test --locked --test broker_contract
# A server runs on it with REDIS_URL set to that list. The single-node
# cluster refuses every command and script whose declared keys span hash
# slots (CROSSSLOT) even through a plain client, so
#   BASE_PORT=7100 scripts/redis-cluster.sh single
#   TEST_REDIS_URL=redis://127.0.0.1:7100 cargo test --locked --test broker_contract
# checks the slot rule for the single-node code path too.
set -euo pipefail
base=${BASE_PORT:-7000}
dir=${DIR:-/tmp/uttt-redis-cluster}
ports=("$base" "$((base + 1))" "$((base + 2))")

up() { redis-cli -p "$1" ping >/dev/null 2>&1; }
cluster_ok() { redis-cli -p "$1" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; }
# Waits up to 10 s for `$1 $2` to succeed.
wait_for() { for _ in $(seq 1 100); do "$1" "$2" && return 0; sleep 0.1; done; return 1; }
# Shuts down whatever answers on the cluster's ports and deletes $dir.
fresh() {
    for port in "${ports[@]}"; do
        redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    done
    for port in "${ports[@]}"; do
        for _ in $(seq 1 50); do up "$port" || break; sleep 0.1; done
    done
    rm -rf "$dir"
}
# Starts one cluster-enabled node on port $1.
node() {
    mkdir -p "$dir/$1"
    redis-server --port "$1" --cluster-enabled yes \
        --cluster-config-file "$dir/$1/nodes.conf" --dir "$dir/$1" \
        --appendonly no --save '' --daemonize yes --logfile "$dir/$1/redis.log"
    if ! wait_for up "$1"; then
        tail -n 20 "$dir/$1/redis.log" >&2 || true
        echo "redis-server on port $1 did not answer in 10 s" >&2
        exit 1
    fi
}

case "${1:-start}" in
start)
    if up "${ports[0]}" && cluster_ok "${ports[0]}"; then
        echo "cluster already running on ${ports[*]}"
        exit 0
    fi
    # Nodes killed with the session that started them leave their
    # nodes.conf behind; restarted on it they are "not empty" and
    # `--cluster create` refuses them. Start from nothing instead.
    fresh
    for port in "${ports[@]}"; do node "$port"; done
    if ! out=$(redis-cli --cluster create $(printf '127.0.0.1:%s ' "${ports[@]}") \
        --cluster-replicas 0 --cluster-yes 2>&1); then
        echo "$out" >&2
        echo "redis-cli --cluster create failed" >&2
        exit 1
    fi
    if ! wait_for cluster_ok "${ports[0]}"; then
        redis-cli -p "${ports[0]}" cluster info >&2 || true
        echo "the cluster on ${ports[*]} did not reach cluster_state:ok in 10 s" >&2
        exit 1
    fi
    redis-cli -p "${ports[0]}" cluster info | grep cluster_state
    echo "cluster on ${ports[*]}: redis://127.0.0.1:${ports[0]}"
    ;;
single)
    port=${ports[0]}
    if up "$port" && cluster_ok "$port"; then
        echo "cluster already running on $port"
        exit 0
    fi
    fresh
    node "$port"
    redis-cli -p "$port" cluster addslotsrange 0 16383 >/dev/null
    wait_for cluster_ok "$port"
    redis-cli -p "$port" cluster info | grep cluster_state
    echo "one-node cluster: redis://127.0.0.1:$port"
    ;;
check)
    redis-cli -p "${ports[0]}" cluster info | grep -E 'cluster_state|cluster_known_nodes|cluster_slots_assigned'
    ;;
stop)
    fresh
    ;;
*)
    echo "usage: $0 start|single|check|stop" >&2
    exit 2
    ;;
esac
