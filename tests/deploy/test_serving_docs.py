"""The engine command lines docs/serving.md gives, run as written — only the listen port and the
component's path substituted — against the component `mediagate component --world http-gate`
writes: each engine starts, answers `GET /healthz`, and answers `POST /v1/admit` for a corpus image
with the CLI's verdict. (tests/http tests the component itself under both engines in depth; this
checks that the documented flags are ones the engines accept and that they serve the gate.)

Needs: a mediagate binary with the http-gate world ($MEDIAGATE_BIN), the wasmtime CLI ($WASMTIME,
which test.sh takes from scripts/wasmtime-cli.sh) and jco (js/node_modules); a missing part fails,
saying which.
"""

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from component import written_component
from manifests import COMPONENT_FILE, ROOT

SERVING = ROOT / "docs/serving.md"
DOC_COMPONENT = f"deploy/{COMPONENT_FILE}"
IMAGE = ROOT / "tests/corpus/photos/kodim23.png"
# Bounds, not expectations: an engine compiles the component before it listens.
START_BOUND_S = 180
REQUEST_BOUND_S = 120


def missing(what: str):
    pytest.fail(what)


def doc_command(program: str) -> list[str]:
    """The one command line of a ```sh block of docs/serving.md that starts with `program`."""
    blocks = re.findall(r"^```sh\n(.*?)^```", SERVING.read_text(), re.MULTILINE | re.DOTALL)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    found = [line for line in lines if line.startswith(program + " ")]
    assert len(found) == 1, f"docs/serving.md gives {len(found)} `{program}` command lines, not one"
    return shlex.split(found[0])


def doc_exports() -> dict[str, str]:
    """The `export NAME=VALUE` lines of docs/serving.md's ```sh blocks (the environment a command needs)."""
    blocks = re.findall(r"^```sh\n(.*?)^```", SERVING.read_text(), re.MULTILINE | re.DOTALL)
    found = [line for block in blocks for line in block.splitlines() if line.startswith("export ")]
    return dict(shlex.split(line)[1].split("=", 1) for line in found)


def substitute(args: list[str], old: str, new: str) -> list[str]:
    assert args.count(old) == 1, f"{old!r} is not in the documented command line {args} exactly once"
    return [new if a == old else a for a in args]


@pytest.fixture(scope="module")
def component(tmp_path_factory):
    return written_component(tmp_path_factory.mktemp("component"))


@pytest.fixture(scope="module")
def cli_verdict(component):
    binary = os.environ["MEDIAGATE_BIN"]
    done = subprocess.run(
        [binary, "admit", str(IMAGE), "--json"], check=False, capture_output=True, text=True, timeout=REQUEST_BOUND_S
    )
    return json.loads(done.stdout)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(method: str, url: str, body: bytes | None = None, content_type: str | None = None):
    req = urllib.request.Request(url, data=body, method=method)
    if content_type:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=REQUEST_BOUND_S) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def serve_and_check(args: list[str], port: int, cli_verdict: dict, log_path, cwd=None, env=None):
    """Starts the engine, waits until it answers, checks two routes, stops it (its process group)."""
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}"
    try:
        started = time.monotonic()
        while True:
            if proc.poll() is not None:
                pytest.fail(f"{args[0]} exited with {proc.returncode}: {log_path.read_text(errors='replace')}")
            try:
                status, body = request("GET", f"{base}/healthz")
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() - started < START_BOUND_S, f"{args} did not listen within {START_BOUND_S} s"
                time.sleep(0.2)
        assert (status, json.loads(body)) == (200, {"status": "ok"})

        status, body = request("POST", f"{base}/v1/admit", IMAGE.read_bytes(), "image/png")
        verdict = json.loads(body)
        assert status == 200, verdict
        assert verdict.pop("data")
        assert verdict == cli_verdict
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_the_documented_wasmtime_serve_command_serves_the_gate(component, cli_verdict, tmp_path):
    wasmtime = os.environ.get("WASMTIME", "")
    if not wasmtime or not os.access(wasmtime, os.X_OK):
        missing("no wasmtime CLI is given (WASMTIME; tests/deploy/test.sh takes it from scripts/wasmtime-cli.sh)")
    port = free_port()
    args = doc_command("wasmtime")
    args = substitute(args, "wasmtime", wasmtime)
    args = substitute(args, "127.0.0.1:8080", f"127.0.0.1:{port}")
    args = substitute(args, DOC_COMPONENT, str(component))
    serve_and_check(args, port, cli_verdict, tmp_path / "wasmtime.log")


def test_the_documented_jco_serve_command_serves_the_gate(component, cli_verdict, tmp_path):
    jco = ROOT / "js/node_modules/.bin/jco"
    if not os.access(jco, os.X_OK):
        missing("jco is not installed in js/node_modules (bash js/test.sh installs it)")
    port = free_port()
    args = doc_command("npx")
    assert args[:2] == ["npx", "jco"], args
    args = [str(jco)] + args[2:]
    args = substitute(args, "8080", str(port))
    args = substitute(args, DOC_COMPONENT, str(component))
    env = {**os.environ, **doc_exports()}
    assert env.get("JCO_RUN_ARGS", "").startswith("--wasm-max-mem-pages="), "the jco line caps instance memory"
    serve_and_check(args, port, cli_verdict, tmp_path / "jco.log", cwd=ROOT / "js", env=env)
