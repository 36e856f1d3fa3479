#!/usr/bin/env bash
# The http-gate component (the gate as a wasi:http/proxy service) under two engines, each started
# here on a free 127.0.0.1 port: `wasmtime serve` (the wasmtime CLI of the host's 48.x line, from
# scripts/wasmtime-cli.sh, which installs it once into a per-user cache) and `jco serve` (Node,
# jco from js/node_modules). Behaviour tests (node:test), slow uploads with and without
# deploy/nginx.conf in front (Debian's nginx, installed when missing), then the load test under each
# engine.
#   MEDIAGATE_BIN        the mediagate CLI (parity, and the component it carries); default target/release
#   MEDIAGATE_WASMTIME   a wasmtime CLI to use instead of scripts/wasmtime-cli.sh
#   MEDIAGATE_NGINX      an nginx to use instead of Debian's /usr/sbin/nginx
#   MEDIAGATE_HTTP_LOAD=0  skip the load test; MEDIAGATE_HTTP_LOAD_OUT=DIR keeps its figures (JSON)
#   MEDIAGATE_HTTP_LOAD_REQUESTS (10000), MEDIAGATE_HTTP_LOAD_REQUESTS_JCO (2000)  requests per engine
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
suite=tests/http
source scripts/suite.sh

need_node_cli_and_wasmtime
if [ -z "${MEDIAGATE_NGINX:-}" ]; then
  [ -x /usr/sbin/nginx ] || apt_install nginx
  MEDIAGATE_NGINX=/usr/sbin/nginx
fi
export MEDIAGATE_NGINX
say "$("$MEDIAGATE_WASMTIME" --version), $("$MEDIAGATE_NGINX" -v 2>&1 | sed 's/^nginx version: //'), jco $(node js/node_modules/@bytecodealliance/jco/dist/jco.js --version), node $(node --version)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The component as the CLI carries it (the same bytes as target/guest/mediagate-http-gate.wasm).
export MEDIAGATE_HTTP_GATE=$work/mediagate-http-gate.wasm
"$MEDIAGATE_BIN" component --world http-gate --out "$MEDIAGATE_HTTP_GATE"

say "behaviour under wasmtime serve and jco serve"
node --test --test-concurrency=1 tests/http/gate.test.mjs

say "a trapping request ends that request only, under both engines"
node --test --test-concurrency=1 tests/http/trap.test.mjs

say "slow uploads hold an engine; through deploy/nginx.conf they do not, under both engines"
node --test --test-concurrency=1 tests/http/proxy.test.mjs

if [ "${MEDIAGATE_HTTP_LOAD:-1}" != 0 ]; then
  out=${MEDIAGATE_HTTP_LOAD_OUT:-$work}
  mkdir -p "$out"
  for engine in wasmtime jco; do
    # jco's documented line starts a Worker per request (about 12 times the CPU of a request served
    # by an instance on the main thread), so it gets fewer requests within the same time bounds.
    requests=${MEDIAGATE_HTTP_LOAD_REQUESTS:-10000}
    [ "$engine" = jco ] && requests=${MEDIAGATE_HTTP_LOAD_REQUESTS_JCO:-2000}
    say "load: $requests requests, ${MEDIAGATE_HTTP_LOAD_CONCURRENCY:-32} in flight, under $engine"
    MEDIAGATE_HTTP_LOAD_REQUESTS=$requests timeout 1200 node tests/http/load.mjs "$engine" "$out/load-$engine.json"
  done
fi
