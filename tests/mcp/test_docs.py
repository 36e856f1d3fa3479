"""docs/mcp.md, tested as a user would use it: every configuration snippet is parsed (JSON, YAML,
TOML, shell lines), checked to carry no key, and its command line started the way the host would
start it — the real `mediagate` binary, with only the snippet's `env` block (plus the variables the
host forwards by name) on top of the SDK's minimal environment — through an MCP handshake, the tool
list and a `read_image` call that shows the vision model's settings were accepted.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment

from conftest import FACTS, REPO, mediagate_bin, png
from test_mcp import text_of

DOC = REPO / "docs" / "mcp.md"
# What the user's environment holds; a snippet reaches it only through the host's own syntax.
FAKE_KEY = "sk-from-the-environment-0123456789"
USER_ENV = {"OPENAI_API_KEY": FAKE_KEY, "ANTHROPIC_API_KEY": FAKE_KEY}
FENCE = re.compile(r"^(?P<fence>`{3,})(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
# A key's value must be a reference the host resolves, never the key.
KEY_REFERENCE = re.compile(r"^\$\{(?:env:|input:)?[A-Za-z_][\w-]*\}$|^\$\(.+\)$")


@dataclass
class Snippet:
    """One way of starting the server that docs/mcp.md shows."""

    client: str
    line: int
    command: str
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    forwarded: list[str] = field(default_factory=list)  # names the host copies from its environment
    inputs: dict[str, dict] = field(default_factory=dict)  # VS Code's prompted inputs
    proxy: bool = False  # `mediagate proxy -- …` in front of the filesystem server (entry `files`)

    def __str__(self) -> str:
        return f"{self.client}@{self.line}"


def blocks() -> list[tuple[str, str, int]]:
    text = DOC.read_text()
    return [
        (m["info"].strip(), m["body"], text[: m.start()].count("\n") + 1)
        for m in FENCE.finditer(text)
    ]


def from_json(body: str, line: int) -> Snippet:
    data = json.loads(body)
    keys = [k for k in ("mcpServers", "servers", "context_servers") if k in data]
    assert len(keys) == 1, f"line {line}: one of mcpServers / servers / context_servers, got {list(data)}"
    proxy = "files" in data[keys[0]]
    entry = data[keys[0]]["files" if proxy else "mediagate"]
    client = {"mcpServers": "mcpServers", "servers": "vscode", "context_servers": "zed"}[keys[0]]
    if client == "vscode":
        assert entry["type"] == "stdio", "VS Code needs the type"
    inputs = {i["id"]: i for i in data.get("inputs", [])}
    args, env = entry.get("args", []), entry.get("env", {})
    return Snippet(client, line, entry["command"], args, env, inputs=inputs, proxy=proxy)


def from_yaml(body: str, line: int) -> Snippet:
    extensions = yaml.safe_load(body)["extensions"]
    name = "files" if "files" in extensions else "mediagate"
    entry = extensions[name]
    assert entry["type"] == "stdio" and entry["enabled"] is True and entry["name"] == name
    forwarded = entry.get("env_keys", [])
    return Snippet("goose", line, entry["cmd"], entry.get("args", []), entry.get("envs", {}), forwarded, proxy=name == "files")


def from_toml(body: str, line: int) -> Snippet:
    servers = tomllib.loads(body)["mcp_servers"]
    proxy = "files" in servers
    entry = servers["files" if proxy else "mediagate"]
    forwarded = entry.get("env_vars", [])
    return Snippet("codex", line, entry["command"], entry.get("args", []), entry.get("env", {}), forwarded, proxy=proxy)


def from_sh(body: str, line: int) -> list[Snippet]:
    found = []
    for command in body.replace("\\\n", " ").splitlines():
        words = shlex.split(command)
        if words[:3] == ["claude", "mcp", "add"]:
            env, rest = {}, words[3:]
            while rest[0].startswith("-"):
                option, value, rest = rest[0], rest[1], rest[2:]
                if option in ("--env", "-e"):
                    name, _, v = value.partition("=")
                    env[name] = v
                else:
                    assert option in ("--transport", "--scope"), option
            assert rest[0] in ("mediagate", "files") and rest[1] == "--", rest
            found.append(Snippet("claude-mcp-add", line, rest[2], rest[3:], env, proxy=rest[0] == "files"))
        elif words[:3] == ["npx", "@modelcontextprotocol/inspector", "--cli"]:
            env, rest = {}, words[3:]
            while rest[0] == "-e":
                name, _, v = rest[1].partition("=")
                env[name], rest = v, rest[2:]
            method = rest.index("--method")
            assert rest[method:] == ["--method", "tools/list"], rest
            # The Inspector's --cli consumes every dashed word itself: none can reach the server.
            assert not [w for w in rest[:method] if w.startswith("-")], rest
            found.append(Snippet("inspector", line, rest[0], rest[1:method], env))
        else:
            pytest.fail(f"line {line}: a shell line the test does not know: {command}")
    return found


def snippets() -> list[Snippet]:
    found: list[Snippet] = []
    for info, body, line in blocks():
        if info == "json":
            found.append(from_json(body, line))
        elif info == "yaml":
            found.append(from_yaml(body, line))
        elif info == "toml":
            found.append(from_toml(body, line))
        elif info == "sh":
            found += from_sh(body, line)
        else:
            assert info == "text", f"line {line}: a ```{info} block the test does not parse"
    return found


SNIPPETS = [s for s in snippets() if not s.proxy]
PROXY_SNIPPETS = [s for s in snippets() if s.proxy]


def test_every_client_the_page_promises_has_a_parsed_snippet():
    clients = sorted({s.client for s in SNIPPETS})
    assert clients == sorted(["claude-mcp-add", "mcpServers", "vscode", "zed", "goose", "codex", "inspector"])
    text = DOC.read_text()
    for heading in ["## Claude Code", "## Claude Desktop", "## Cursor", "## VS Code", "## Zed", "## goose", "## Codex"]:
        assert heading in text
    assert "only its `env` block, not your shell's environment" in text
    proxied = sorted({s.client for s in PROXY_SNIPPETS})
    assert proxied == sorted(["claude-mcp-add", "mcpServers", "vscode", "zed", "goose", "codex"])


def test_no_key_is_written_into_a_snippet():
    assert not re.search(r"sk-[A-Za-z0-9]", DOC.read_text()), "a key-shaped string in docs/mcp.md"
    for s in SNIPPETS:
        script = s.args[1] if Path(s.command).name == "sh" else ""
        assignments = dict(re.findall(r"(?:^|\s)([A-Za-z_]\w*)=(\$\([^)]*\)|\S+)", script))
        for name, value in {**s.env, **assignments}.items():
            if "KEY" in name:
                assert KEY_REFERENCE.match(value), f"{s}: {name} must reference the environment, not hold {value!r}"
        for value in s.env.values():
            for ref in re.findall(r"\$\{input:([\w-]+)\}", value):
                assert s.inputs[ref]["password"] is True, f"{s}: input {ref} must be a password"


def _is_assignment(word: str) -> bool:
    return re.match(r"^[A-Za-z_]\w*=", word) is not None


def _script_words(s: Snippet) -> list[str]:
    """The words of a `/bin/sh -c SCRIPT` command, command substitutions replaced by the key."""
    if Path(s.command).name != "sh":
        return []
    assert s.args[0] == "-c" and len(s.args) == 2, s.args
    return shlex.split(re.sub(r"\$\([^)]*\)", FAKE_KEY, s.args[1]))


def expand(value: str, s: Snippet, workspace: Path) -> str:
    """What the host does to a value before starting the server."""

    def one(m: re.Match) -> str:
        ref = m[1]
        if ref == "workspaceFolder":
            return str(workspace)
        if ref.startswith("input:"):
            return FAKE_KEY
        name = ref.removeprefix("env:")
        assert name in USER_ENV, f"{s}: ${{{ref}}} is not a variable of the user's environment"
        return USER_ENV[name]

    return re.sub(r"\$\{([^}]+)\}", one, value)


def command_line(s: Snippet, workspace: Path) -> tuple[list[str], dict[str, str]]:
    """The argv and the environment the host gives the server; placeholders made real."""
    env = {k: expand(v, s, workspace) for k, v in s.env.items()}
    env.update({name: USER_ENV[name] for name in s.forwarded})
    argv = [s.command] + [expand(a, s, workspace) for a in s.args]
    words = _script_words(s)
    if words:
        while _is_assignment(words[0]):
            name, _, value = words.pop(0).partition("=")
            env[name] = value
        assert words[0] == "exec", words
        argv = words[1:]
    assert Path(argv[0]).name == "mediagate", argv
    assert argv[1] == "mcp", argv
    argv[0] = str(mediagate_bin())
    if "--workspace" not in argv:
        return argv, env  # the directory the server is started in, as `.`
    ws = argv.index("--workspace") + 1
    # `/home/me/project` and the like are the user's; `.` is the directory the host starts it in.
    if argv[ws] != ".":
        assert argv[ws] == str(workspace) or re.match(r"^/(home|Users)/me/project$", argv[ws]), argv[ws]
        argv[ws] = str(workspace)
    return argv, env


@pytest.mark.anyio
@pytest.mark.parametrize("snippet", SNIPPETS, ids=str)
async def test_the_snippet_starts_a_server_that_accepts_its_configuration(snippet: Snippet, tmp_path: Path):
    # The host's own environment is not the user's shell: no key, no MEDIAGATE_VLM_* reach the server.
    assert not {"OPENAI_API_KEY", FACTS["ENV_VLM_URL"]} & set(get_default_environment())
    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "shot.png").write_bytes(png())
    argv, env = command_line(snippet, workspace)
    env[FACTS["ENV_CACHE_DIR"]] = str(REPO / "target" / "test-component-cache")
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(workspace))
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        tools = (await client.list_tools()).tools
        assert [t.name for t in tools] == ["read_image", "view_image"]
        # A missing file is answered after the vision model's settings were taken: a URL without a
        # model, a bad dialect or no model at all would answer first (and nothing is sent anywhere).
        result = await client.call_tool("read_image", {"path": "missing.png"})
    assert result.is_error is True
    assert text_of(result) == "error: file not found: missing.png", f"{snippet}: {text_of(result)}"


@pytest.mark.anyio
@pytest.mark.parametrize("snippet", PROXY_SNIPPETS, ids=str)
async def test_the_proxy_snippet_gates_the_filesystem_server(snippet: Snippet, tmp_path: Path):
    """`mediagate proxy -- npx -y @modelcontextprotocol/server-filesystem DIR`, with the pinned
    server from tests/proxy/node_modules in place of `npx -y` (no network in tests)."""
    from test_proxy import NODE, server_main

    workspace = tmp_path / "project"
    workspace.mkdir()
    (workspace / "shot.png").write_bytes(png())
    (workspace / "fake.png").write_bytes(b"<html>not a PNG</html>")
    argv = [snippet.command, *snippet.args]
    assert Path(argv[0]).name == "mediagate" and argv[1:3] == ["proxy", "--"], argv
    downstream = argv[3:]
    assert downstream[:3] == ["npx", "-y", "@modelcontextprotocol/server-filesystem"], downstream
    directory = downstream[3]
    assert directory in (".", "${workspaceFolder}") or re.match(r"^/(home|Users)/me/project$", directory), directory
    argv = [str(mediagate_bin()), "proxy", "--", NODE, server_main("server-filesystem"), str(workspace)]
    env = {FACTS["ENV_CACHE_DIR"]: str(REPO / "target" / "test-component-cache")}
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(workspace))
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
        assert "read_media_file" in [t.name for t in (await client.list_tools()).tools]
        shot = await client.call_tool("read_media_file", {"path": str(workspace / "shot.png")})
        fake = await client.call_tool("read_media_file", {"path": str(workspace / "fake.png")})
    assert not shot.is_error and shot.content[0].type == "image", shot
    assert fake.is_error and "magic_mismatch" in fake.content[0].text, fake
