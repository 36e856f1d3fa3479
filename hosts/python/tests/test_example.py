"""The README's example runs as a program against the loopback VLM server."""

import os
import subprocess
import sys

from conftest import PY_HOST, STANDARD_ANSWER, STANDARD_REASONING
from mediagate_host import facts


def run_example(workspace, *args, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEDIAGATE_VLM_")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, str(PY_HOST / "example.py"), str(workspace), *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=PY_HOST)


def test_example_with_a_vlm(workspace, vlm_server):
    run = run_example(workspace, "small.png", "What colour is it?", env_extra={
        facts.ENV_VLM_URL: vlm_server.base_url, facts.ENV_VLM_MODEL: "example-model"})
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "tool: read_image params: page,path,question"
    assert lines[1] == "block: image image/png 220"
    assert lines[2].startswith('verdict: {"base64_len": 220, "height": 32, "kind": "image"')
    assert lines[3] == f"answer: {STANDARD_ANSWER}"
    # The answer streamed, and nothing of the reasoning the answer leaves out.
    assert STANDARD_ANSWER in run.stderr
    for reasoning in STANDARD_REASONING:
        assert reasoning.strip() not in run.stderr
    assert vlm_server.requests[0]["body"]["model"] == "example-model"


def test_example_without_a_vlm(workspace, vlm_server):
    run = run_example(workspace, "small.png")
    assert run.returncode == 1
    assert "tool error: no-vlm error: this deployment has no vision model" in run.stdout
    assert vlm_server.requests == []


def test_the_readme_shows_the_example_that_runs():
    readme = (PY_HOST / "README.md").read_text()
    section = readme.split("## Example", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert code.strip() in (PY_HOST / "example.py").read_text()
