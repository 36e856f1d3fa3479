"""`mediagate mcp` end to end, driven by the official MCP Python SDK as a real client.

The server is the real `mediagate` binary, spawned by the SDK's stdio client; the vision model is a
small OpenAI-compatible SSE server on 127.0.0.1 that records every request. Each test runs twice:
once with the initialize handshake (protocol 2025-11-25) and once with the SDK's default
negotiation (`server/discover`, protocol 2026-07-28).
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment
from mcp.shared.exceptions import MCPError

from conftest import FACTS, REPO, mediagate_bin, png

MODEL = "test-vlm"
API_KEY = "sk-test-secret"
DESCRIBE_START = "Describe this image"


# --- the loopback VLM -----------------------------------------------------------------------------


class VlmServer:
    """An OpenAI-compatible `/v1/chat/completions` that streams `chunks` as SSE content deltas,
    `pause` seconds before each, and records every request it gets."""

    def __init__(self, chunks: list[str], pause: float = 0.0):
        self.chunks = chunks
        self.pause = pause
        self.requests: list[dict] = []
        self.abandoned = 0  # replies the client hung up on mid-stream
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (the stdlib's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with server._lock:
                    server.requests.append(
                        {
                            "path": self.path,
                            "headers": {k.lower(): v for k, v in self.headers.items()},
                            "body": json.loads(body or b"null"),
                        }
                    )
                if self.path != "/v1/chat/completions":
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    self._write(b": keep-alive\n\n")
                    for text in server.chunks:
                        time.sleep(server.pause)
                        self._event({"choices": [{"index": 0, "delta": {"content": text}}]})
                    self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                    self._write(b"data: [DONE]\n\n")
                    self.wfile.write(b"0\r\n\r\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    with server._lock:
                        server.abandoned += 1
                    self.close_connection = True

            def _event(self, data: dict):
                self._write(f"data: {json.dumps(data)}\n\n".encode())

            def _write(self, data: bytes):
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self):
        self._httpd.shutdown()
        self._httpd.server_close()


# --- fixtures ---------------------------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "workspace"
    ws.mkdir()
    (ws / "icon.png").write_bytes(png())
    shutil.copy(REPO / "tests" / "fixtures" / "hello.pdf", ws / "report.png")
    (tmp_path / "x.png").write_bytes(png())  # beside the workspace, never readable
    return ws


@pytest.fixture
def vlm():
    servers: list[VlmServer] = []

    def start(chunks: list[str], pause: float = 0.0) -> VlmServer:
        servers.append(VlmServer(chunks, pause))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


class Session:
    """One `mediagate mcp` subprocess and an SDK client connected to it."""

    def __init__(
        self,
        workspace: Path | None,
        mode: str,
        vlm: VlmServer | None,
        *,
        url: str | None = None,
        model: str | None = MODEL,
        cwd: Path | None = None,
        home: Path | None = None,
        roots=None,
        flags: tuple[str, ...] = (),
    ):
        args = ["mcp", *flags] + (["--workspace", str(workspace)] if workspace is not None else [])
        if vlm is not None:
            args += ["--vlm-url", url or vlm.url]
            if model is not None:
                args += ["--vlm-model", model]
        # The SDK passes only a safe subset of the environment (no MEDIAGATE_VLM_*), plus this.
        env = {
            FACTS["ENV_VLM_API_KEY"]: API_KEY,
            FACTS["ENV_CACHE_DIR"]: str(REPO / "target" / "test-component-cache"),
        }
        if home is not None:
            env["HOME"] = str(home)
        self.incoming: list = []

        async def on_message(message):
            self.incoming.append(message)

        self.client = Client(
            StdioServerParameters(command=str(mediagate_bin()), args=args, env=env, cwd=cwd),
            mode=mode,
            message_handler=on_message,
            list_roots_callback=roots,
            read_timeout_seconds=60,
        )

    async def __aenter__(self) -> Client:
        await self.client.__aenter__()
        return self.client

    async def __aexit__(self, *exc):
        await self.client.__aexit__(*exc)
        # Stdout carried nothing but protocol messages: no transport-level parse failures.
        errors = [m for m in self.incoming if isinstance(m, Exception)]
        assert not errors, errors

    def progress_notifications(self) -> list[types.ProgressNotification]:
        return [m for m in self.incoming if isinstance(m, types.ProgressNotification)]


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


def image_url(request: dict) -> str:
    return request["body"]["messages"][0]["content"][1]["image_url"]["url"]


def prompt(request: dict) -> str:
    return request["body"]["messages"][0]["content"][0]["text"]


# --- the tests ----------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_lists_read_image_with_the_schema_the_component_publishes(workspace, mode, vlm):
    server = vlm(["unused"])
    async with Session(workspace, mode, server) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        assert client.server_info is not None and client.server_info.name == "mediagate"
        tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["read_image", "view_image"]
    tool = tools[0]
    schema = tool.input_schema
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {"path", "question", "page"}
    assert schema["properties"]["path"]["type"] == "string"
    assert schema["properties"]["question"]["type"] == "string"
    assert schema["required"] == ["path"]
    assert "vision model" in (tool.description or "")
    assert server.requests == []


@pytest.mark.anyio
async def test_a_question_gets_the_streamed_answer(workspace, mode, vlm):
    server = vlm(["The book ", "is blue ", "☃."])
    async with Session(workspace, mode, server) as client:
        result = await client.call_tool("read_image", {"path": "icon.png", "question": "What colour is the book?"})
    assert result.is_error is False
    assert text_of(result) == "The book is blue ☃."
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == f"Bearer {API_KEY}"
    assert request["body"]["model"] == MODEL
    assert request["body"]["stream"] is True
    assert prompt(request) == "What colour is the book?"
    expected = "data:image/png;base64," + base64.b64encode((workspace / "icon.png").read_bytes()).decode()
    assert image_url(request) == expected


@pytest.mark.anyio
async def test_without_a_question_the_model_is_asked_to_describe(workspace, mode, vlm):
    server = vlm(["An 8x8 ", "blue square."])
    async with Session(workspace, mode, server) as client:
        result = await client.call_tool("read_image", {"path": "icon.png"})
    assert result.is_error is False
    assert text_of(result) == "An 8x8 blue square."
    assert len(server.requests) == 1
    assert prompt(server.requests[0]).startswith(DESCRIBE_START)


@pytest.mark.anyio
async def test_progress_follows_the_reply_as_it_streams(workspace, mode, vlm):
    server = vlm(["One ", "two ", "three."], pause=0.3)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    session = Session(workspace, mode, server)
    async with session as client:
        result = await client.call_tool("read_image", {"path": "icon.png"}, progress_callback=on_progress)
        # Callbacks run in their own tasks; give the last one a moment.
        with anyio.fail_after(5):
            while not seen or seen[-1][2] != "One two three.":
                await anyio.sleep(0.02)
    assert text_of(result) == "One two three."
    seen.sort(key=lambda s: s[0])
    progresses = [p for p, _, _ in seen]
    assert len(progresses) >= 2 and len(set(progresses)) == len(progresses), seen
    messages = [m for _, _, m in seen]
    assert all(m is not None and "One two three.".startswith(m) for m in messages), seen
    assert messages[0] != "One two three.", f"the first progress came before the end of the reply: {seen}"
    assert messages[-1] == "One two three."


@pytest.mark.anyio
async def test_no_progress_without_a_progress_token(workspace, mode, vlm):
    server = vlm(["One ", "two."], pause=0.1)
    session = Session(workspace, mode, server)
    async with session as client:
        result = await client.call_tool("read_image", {"path": "icon.png"})
        await anyio.sleep(0.3)
    assert text_of(result) == "One two."
    assert session.progress_notifications() == []


@pytest.mark.anyio
async def test_a_cancelled_call_stops_the_vlm_stream_and_the_server_carries_on(workspace, mode, vlm):
    server = vlm(["slow ", "reply ", "here."], pause=1.0)
    async with Session(workspace, mode, server) as client:
        with anyio.move_on_after(1.5) as scope:
            await client.call_tool("read_image", {"path": "icon.png"})
        assert scope.cancelled_caught
        # The SDK sent notifications/cancelled; the server dropped the call and hung up on the VLM.
        with anyio.fail_after(5):
            while server.abandoned == 0:
                await anyio.sleep(0.05)
        server.chunks, server.pause = ["fast."], 0.0
        result = await client.call_tool("read_image", {"path": "icon.png"})
    assert text_of(result) == "fast."
    assert len(server.requests) == 2 and server.abandoned == 1


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("missing.png", "error: file not found: missing.png"),
        # A PDF is rendered (page 1 by default); this one's only page has no content.
        ("report.png", "page 1 of the PDF renders to nothing"),
        ("../x.png", "outside the workspace"),
        ("/etc/passwd", "outside the workspace"),
    ],
)
async def test_errors_are_tool_results_with_is_error(workspace, mode, vlm, path, expected):
    server = vlm(["never"])
    async with Session(workspace, mode, server) as client:
        result = await client.call_tool("read_image", {"path": path})
    assert result.is_error is True
    assert expected in text_of(result)
    assert server.requests == [], "the model is never asked about a file the tool refused"


@pytest.mark.anyio
async def test_bad_arguments_are_tool_errors_and_an_unknown_tool_a_protocol_error(workspace, mode, vlm):
    server = vlm(["never"])
    async with Session(workspace, mode, server) as client:
        result = await client.call_tool("read_image", {"question": "no path?"})
        assert result.is_error is True
        assert "missing field `path`" in text_of(result)
        result = await client.call_tool("read_image", {"path": 7})
        assert result.is_error is True
        assert "invalid arguments" in text_of(result)
        with pytest.raises(MCPError, match="unknown tool"):
            await client.call_tool("write_image", {"path": "icon.png"})
    assert server.requests == []


@pytest.mark.anyio
async def test_without_a_vision_model_the_tool_says_so_and_calls_nothing(workspace, mode, vlm):
    assert FACTS["ENV_VLM_URL"] not in get_default_environment()
    server = vlm(["never"])  # running, but the MCP server is not told about it
    async with Session(workspace, mode, None) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["read_image", "view_image"]
        started = time.monotonic()
        result = await client.call_tool("read_image", {"path": "icon.png"})
        assert time.monotonic() - started < 5
    assert result.is_error is True
    text = text_of(result)
    assert "no vision model" in text and "Do not retry" in text, text
    assert server.requests == []


@pytest.mark.anyio
async def test_a_vlm_url_without_a_model_starts_and_every_call_says_what_is_missing(workspace, mode, vlm):
    server = vlm(["never"])
    async with Session(workspace, mode, server, model=None) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["read_image", "view_image"]
        result = await client.call_tool("read_image", {"path": "icon.png"})
    assert result.is_error is True
    text = text_of(result)
    assert "no model" in text and "--vlm-model" in text and FACTS["ENV_VLM_MODEL"] in text, text
    assert "env" in text and "Do not retry" in text, text
    assert server.requests == []


@pytest.mark.anyio
async def test_a_base_url_without_its_v1_is_named_with_the_fix(workspace, mode, vlm):
    server = vlm(["never"])
    base = server.url.removesuffix("/v1")
    async with Session(workspace, mode, server, url=base) as client:
        result = await client.call_tool("read_image", {"path": "icon.png"})
    assert result.is_error is True
    text = text_of(result)
    assert "HTTP 404" in text, text
    assert f"POST {base}/chat/completions" in text, text
    assert "missing its /v1" in text and f"try --vlm-url {base}/v1" in text, text
    assert [r["path"] for r in server.requests] == ["/chat/completions"]


# --- view_image ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_view_image_returns_the_admitted_block_to_the_calling_model(workspace, mode, vlm):
    server = vlm(["never"])
    shutil.copy(REPO / "tests" / "fixtures" / "hello.pdf", workspace / "hello.pdf")
    (workspace / "page.png").write_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>")
    async with Session(workspace, mode, None) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["view_image"].input_schema["required"] == ["path"]
        image = await client.call_tool("view_image", {"path": "icon.png"})
        pdf = await client.call_tool("view_image", {"path": "hello.pdf"})
        fake = await client.call_tool("view_image", {"path": "page.png"})
        outside = await client.call_tool("view_image", {"path": "../x.png"})
        bad = await client.call_tool("view_image", {"path": "icon.png", "question": "?"})
    assert not image.is_error
    assert len(image.content) == 1 and isinstance(image.content[0], types.ImageContent)
    assert image.content[0].mime_type == "image/png"
    assert base64.b64decode(image.content[0].data) == (workspace / "icon.png").read_bytes()
    assert not pdf.is_error and isinstance(pdf.content[0], types.EmbeddedResource)
    assert pdf.content[0].resource.mime_type == "application/pdf"
    assert base64.b64decode(pdf.content[0].resource.blob) == (workspace / "hello.pdf").read_bytes()
    # The type is read from the bytes, not the name: an SVG named .png is an SVG, which no provider
    # takes; view_image converts by default, so the model sees it as a PNG and is told so.
    assert not fake.is_error and len(fake.content) == 2, fake.content
    assert isinstance(fake.content[0], types.ImageContent) and fake.content[0].mime_type == "image/png"
    assert "converted from image/svg+xml to image/png" in fake.content[1].text, fake.content[1].text
    # A refusal: isError, the reason in words, no image block.
    assert outside.is_error and "outside the workspace" in text_of(outside), text_of(outside)
    assert bad.is_error and "invalid arguments" in text_of(bad)
    assert server.requests == []  # no vision model involved


@pytest.mark.anyio
async def test_view_image_gives_the_clis_canonical_bytes_and_keep_metadata_the_input(tmp_path, workspace, mode):
    # The same canonical bytes as `mediagate admit`: GPS EXIF, camera and comment dropped; with
    # --keep-metadata the file as it is.
    names = ["gps-exif.jpg", "gps-exif.png"]
    for name in names:
        shutil.copy(REPO / "tests" / "corpus" / "metadata" / name, workspace / name)

    def cli(name: str, *flags: str) -> bytes:
        out = tmp_path / f"{name}.out"
        run = subprocess.run([str(mediagate_bin()), "admit", str(workspace / name), "--out", str(out), *flags],
                             capture_output=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return out.read_bytes()

    for flags in ((), ("--keep-metadata",)):
        async with Session(workspace, mode, None, flags=flags) as client:
            for name in names:
                got = await client.call_tool("view_image", {"path": name})
                assert not got.is_error and isinstance(got.content[0], types.ImageContent), got.content
                admitted = base64.b64decode(got.content[0].data)
                assert admitted == cli(name, *flags), (name, flags)
                original = (workspace / name).read_bytes()
                assert (admitted == original) == bool(flags), (name, flags)
                assert (b"SecretCam" in admitted) == bool(flags), (name, flags)


@pytest.mark.anyio
async def test_view_image_judges_a_file_as_admit_convert_does(tmp_path, workspace, mode):
    # view_image calls the entry `mediagate admit --convert FILE` calls: a JPEG named .png is the
    # JPEG it is, the same bytes; a page the PDF lacks is refused with the CLI's reason and words.
    shutil.copy(REPO / "tests" / "corpus" / "bench" / "photo-exif-rotated.jpg", workspace / "photo.png")
    shutil.copy(REPO / "tests" / "fixtures" / "hello.pdf", workspace / "hello.pdf")

    def cli(name: str, *flags: str) -> "tuple[dict, bytes]":
        out = tmp_path / f"{name}.out"
        run = subprocess.run([str(mediagate_bin()), "admit", str(workspace / name), "--convert", "--json",
                              "--out", str(out), *flags], capture_output=True, text=True, timeout=120)
        assert run.returncode in (0, 1), run.stderr
        return json.loads(run.stdout), out.read_bytes() if out.exists() else b""

    async with Session(workspace, mode, None) as client:
        photo = await client.call_tool("view_image", {"path": "photo.png"})
        missing = await client.call_tool("view_image", {"path": "hello.pdf", "page": 9})
    verdict, admitted = cli("photo.png")
    assert not photo.is_error and isinstance(photo.content[0], types.ImageContent), photo.content
    assert photo.content[0].mime_type == verdict["mime"] == "image/jpeg"
    assert base64.b64decode(photo.content[0].data) == admitted
    verdict, _ = cli("hello.pdf", "--page", "9")
    assert verdict["reason"] == "no_such_page", verdict
    assert missing.is_error and f"no_such_page — {verdict['message']}" in text_of(missing), text_of(missing)


# --- the workspace from the client's roots ------------------------------------------------------


def leaves(group: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups."""
    if isinstance(group, BaseExceptionGroup):
        return [leaf for e in group.exceptions for leaf in leaves(e)]
    return [group]


def roots_callback(dirs: list[Path]):
    """A client's `roots/list` answer: `dirs` as `file://` roots, read at each call (tests change it)."""

    async def list_roots(context) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=d.resolve().as_uri(), name=d.name) for d in dirs])

    return list_roots


@pytest.mark.anyio
async def test_without_workspace_the_clients_roots_are_the_workspace(tmp_path, mode):
    first, second, start = tmp_path / "first", tmp_path / "second", tmp_path / "start"
    for d in (first, second, start):
        d.mkdir()
    (first / "a.png").write_bytes(png(3, 3))
    (second / "b.png").write_bytes(png(5, 5))
    (start / "c.png").write_bytes(png(7, 7))  # the start directory is not served when the client has roots
    async with Session(None, mode, None, cwd=start, roots=roots_callback([first, second])) as client:
        relative = await client.call_tool("view_image", {"path": "a.png"})
        absolute = await client.call_tool("view_image", {"path": str((second / "b.png").resolve())})
        not_in_first = await client.call_tool("view_image", {"path": "b.png"})
        start_file = await client.call_tool("view_image", {"path": "c.png"})
        outside = await client.call_tool("view_image", {"path": str((start / "c.png").resolve())})
    assert not relative.is_error, text_of(relative)
    assert base64.b64decode(relative.content[0].data) == (first / "a.png").read_bytes()
    # An absolute path is served from the root that holds it; a relative one from the first root.
    assert not absolute.is_error, text_of(absolute)
    assert base64.b64decode(absolute.content[0].data) == (second / "b.png").read_bytes()
    assert not_in_first.is_error and "not found" in text_of(not_in_first).lower(), text_of(not_in_first)
    assert start_file.is_error, text_of(start_file)
    assert outside.is_error and "outside the workspace" in text_of(outside), text_of(outside)


@pytest.mark.anyio
async def test_a_change_of_roots_moves_the_workspace(tmp_path, mode):
    old, new = tmp_path / "old", tmp_path / "new"
    for d in (old, new):
        d.mkdir()
    (old / "shot.png").write_bytes(png(3, 3))
    (new / "shot.png").write_bytes(png(9, 9))
    dirs = [old]
    async with Session(None, mode, None, cwd=tmp_path, roots=roots_callback(dirs)) as client:
        before = await client.call_tool("view_image", {"path": "shot.png"})
        dirs[:] = [new]
        if mode == "legacy":
            # Up to 2025-11-25 the server lists the roots again when told they changed; the
            # notification and the next call race, so wait (bounded) for the new list to land.
            await client.send_roots_list_changed()
        after = None
        for _ in range(100):
            after = await client.call_tool("view_image", {"path": "shot.png"})
            if not after.is_error and base64.b64decode(after.content[0].data) == (new / "shot.png").read_bytes():
                break
            await anyio.sleep(0.05)
    assert base64.b64decode(before.content[0].data) == (old / "shot.png").read_bytes()
    assert not after.is_error and base64.b64decode(after.content[0].data) == (new / "shot.png").read_bytes()


@pytest.mark.anyio
@pytest.mark.parametrize("where", ["home", "root"])
async def test_no_roots_and_started_in_home_or_root_serves_nothing(tmp_path, mode, where):
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret.png").write_bytes(png())
    cwd = home if where == "home" else Path("/")
    if mode == "legacy":
        # The handshake is refused with the reason: the server does not start.
        try:
            async with Session(None, mode, None, cwd=cwd, home=home) as client:
                await client.call_tool("view_image", {"path": "secret.png"})
        except* MCPError as refused:  # the SDK raises it inside an exception group
            message = " ".join(str(e) for e in leaves(refused))
        else:
            pytest.fail("the session started")
    else:
        # From 2026-07-28 there is no handshake to refuse: every call is refused instead.
        async with Session(None, mode, None, cwd=cwd, home=home) as client:
            result = await client.call_tool("view_image", {"path": "secret.png"})
        assert result.is_error
        message = text_of(result)
    assert "--workspace" in message, message
    assert ("home directory" if where == "home" else "filesystem root") in message, message


@pytest.mark.anyio
async def test_no_roots_serves_the_start_directory_and_an_explicit_workspace_may_be_home(tmp_path, mode):
    home = tmp_path / "home"
    project = home / "project"
    project.mkdir(parents=True)
    (project / "p.png").write_bytes(png(4, 4))
    (home / "h.png").write_bytes(png(6, 6))
    async with Session(None, mode, None, cwd=project, home=home) as client:
        from_start = await client.call_tool("view_image", {"path": "p.png"})
    async with Session(home, mode, None, cwd=project, home=home) as client:
        explicit = await client.call_tool("view_image", {"path": "h.png"})
    assert not from_start.is_error, text_of(from_start)
    assert base64.b64decode(from_start.content[0].data) == (project / "p.png").read_bytes()
    assert not explicit.is_error, text_of(explicit)
