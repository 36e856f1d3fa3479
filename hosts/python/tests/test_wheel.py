"""The wheel: `scripts/package.sh DIST python-host` builds it with the component inside, and it
installs and works in a fresh virtual environment outside the repository (its dependencies from the
registry)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from conftest import PY_HOST, REPO
from mediagate_host import facts
from images import SVG, png


@pytest.fixture(scope="module")
def wheel(tmp_path_factory, component_path) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    run = subprocess.run(["bash", str(REPO / "scripts" / "package.sh"), str(dist), "python-host"], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "PYTHON": sys.executable})
    assert run.returncode == 0, run.stderr
    version = re.search(r'^version = "(.+)"$', (PY_HOST / "pyproject.toml").read_text(), re.M).group(1)
    path = dist / f"mediagate_host-{version}-py3-none-any.whl"
    assert run.stdout.strip().splitlines()[-1] == str(path)
    return path


def test_the_python_package_has_the_crates_version():
    cargo = re.search(r'^version = "(.+)"$', (REPO / "Cargo.toml").read_text(), re.M).group(1)
    assert f'version = "{cargo}"' in (PY_HOST / "pyproject.toml").read_text()


def test_the_wheel_carries_the_component(wheel, component_path):
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert z.read("mediagate_host/mediagate-agent-tool.wasm") == component_path.read_bytes()
    assert {"mediagate_host/__init__.py", "mediagate_host/host.py", "mediagate_host/vlm.py",
            "mediagate_host/_wit.py"} <= names
    assert not any("tests/" in n or n.endswith(".pyc") for n in names)
    # The source tree is not changed by packaging.
    assert not (PY_HOST / "mediagate_host" / "mediagate-agent-tool.wasm").exists()


def test_the_wheel_says_what_it_is_to_a_registry(wheel):
    """What a registry page shows: summary, the README as description, license and its text, keywords."""
    with zipfile.ZipFile(wheel) as z:
        info = next(n.rsplit("/", 1)[0] for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = z.read(f"{info}/METADATA").decode()
        license_text = z.read(f"{info}/licenses/LICENSE").decode()
    headers, _, description = metadata.partition("\n\n")
    assert "\nSummary: mediagate for Python agents" in headers
    assert "\nLicense-Expression: Apache-2.0" in headers
    assert "\nLicense-File: LICENSE" in headers
    assert re.search(r"^Keywords: .*wasmtime", headers, re.M)
    assert description.strip().startswith((PY_HOST / "README.md").read_text().strip()[:200])
    assert license_text == (REPO / "LICENSE").read_text()


def test_package_sh_refuses_without_a_component(tmp_path):
    run = subprocess.run(["bash", str(REPO / "scripts" / "package.sh"), str(tmp_path / "dist"), "python-host"], capture_output=True, text=True,
                         timeout=60, env={**os.environ, facts.ENV_AGENT_TOOL_WASM: str(tmp_path / "none.wasm")})
    assert run.returncode != 0
    assert "none.wasm is missing" in run.stderr


USE_IT = r"""
import json, sys
from pathlib import Path
import mediagate_host
from mediagate_host import facts
from mediagate_host import Mediagate, default_wasm_path

workspace = Path(sys.argv[1])
gate = Mediagate(workspace=workspace, vlm=False)
print(json.dumps({
    "module": mediagate_host.__file__,
    "wasm": str(default_wasm_path()),
    "tool": gate.tool_definition()["name"],
    "good_file": gate.admit_file("good.png", "image/png"),
    "lying_file": gate.admit_file("lying.png", "image/png"),
    "good_bytes": gate.admit_bytes((workspace / "good.png").read_bytes(), "image/png"),
    "lying_bytes": gate.admit_bytes((workspace / "lying.png").read_bytes(), "image/png"),
}))
"""


def test_the_wheel_installs_and_works_outside_the_repository(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    clean_env = {k: v for k, v in os.environ.items()
                 if not k.startswith(("MEDIAGATE_", "PYTHON", "VIRTUAL_ENV", "PIP_"))}
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                              str(wheel)], capture_output=True, text=True, timeout=600, env=clean_env, cwd=tmp_path)
    assert install.returncode == 0, install.stderr

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "good.png").write_bytes(png(20, 10))
    (workspace / "lying.png").write_bytes(SVG)
    (tmp_path / "use_it.py").write_text(USE_IT)
    run_env = {**clean_env, facts.ENV_CACHE_DIR: str(tmp_path / "cache")}
    # -I: isolated mode (no PYTHONPATH, no user site, not even the script's directory on sys.path).
    run = subprocess.run([str(python), "-I", str(tmp_path / "use_it.py"), str(workspace)], capture_output=True,
                         text=True, timeout=300, env=run_env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)

    site = str(env_dir)
    assert out["module"].startswith(site) and out["wasm"].startswith(site), out
    assert str(REPO) not in out["module"] and str(REPO) not in out["wasm"]
    assert out["tool"] == "read_image"
    for key in ("good_file", "good_bytes"):
        assert out[key]["ok"] is True and (out[key]["width"], out[key]["height"]) == (20, 10), out[key]
    for key in ("lying_file", "lying_bytes"):
        assert out[key]["ok"] is False and out[key]["reason"] == "magic_mismatch", out[key]


USE_THE_OPENAI_INTEGRATION = r"""
import base64, json, sys
from openai import DefaultHttpxClient, OpenAI
from mediagate_host.transport import GateTransport

client = OpenAI(base_url=sys.argv[1], api_key="test-key", max_retries=0,
                http_client=DefaultHttpxClient(transport=GateTransport()))
svg = base64.b64encode(open(sys.argv[2], "rb").read()).decode()
reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": [
    {"type": "text", "text": "What is this?"},
    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{svg}"}},
]}])
print(json.dumps({"answer": reply.choices[0].message.content}))
"""


def test_the_wheel_with_its_openai_extra_gates_a_real_openai_client(wheel, tmp_path):
    """Installed as a user would (`pip install 'mediagate-host[openai]'`, the SDK from the registry),
    the transport stops an SVG claimed as PNG before it reaches a provider on loopback, which records
    what it receives."""
    import http.server
    import threading

    received: list[bytes] = []

    class Provider(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (the http.server name)
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            body = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "a text block"}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Provider)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env_dir = tmp_path / "venv"
        venv.EnvBuilder(with_pip=True).create(env_dir)
        python = env_dir / "bin" / "python"
        clean_env = {k: v for k, v in os.environ.items()
                     if not k.startswith(("MEDIAGATE_", "PYTHON", "VIRTUAL_ENV", "PIP_", "OPENAI_"))}
        install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                                  f"{wheel}[openai]"], capture_output=True, text=True, timeout=600, env=clean_env,
                                 cwd=tmp_path)
        assert install.returncode == 0, install.stderr
        (tmp_path / "lying.png").write_bytes(SVG)
        (tmp_path / "use_it.py").write_text(USE_THE_OPENAI_INTEGRATION)
        run = subprocess.run([str(python), "-I", str(tmp_path / "use_it.py"),
                              f"http://127.0.0.1:{server.server_address[1]}/v1", str(tmp_path / "lying.png")],
                             capture_output=True, text=True, timeout=300,
                             env={**clean_env, facts.ENV_CACHE_DIR: str(tmp_path / "cache")}, cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout) == {"answer": "a text block"}
    finally:
        server.shutdown()
    assert len(received) == 1
    sent = json.loads(received[0])
    parts = sent["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["text", "text"], parts
    assert "[mediagate]" in parts[1]["text"] and "magic_mismatch" in parts[1]["text"], parts[1]
    assert b"data:image" not in received[0]
