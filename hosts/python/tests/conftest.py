"""Fixtures: a loopback SSE server (OpenAI and Anthropic dialects), the component, the native CLI,
the corpus."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

from mediagate_host import facts

HERE = Path(__file__).resolve().parent
PY_HOST = HERE.parent
REPO = PY_HOST.parent.parent
sys.path.insert(0, str(PY_HOST))

CORPUS = REPO / "tests" / "corpus"
SMALL_PNG = CORPUS / "pngsuite" / "basn0g01.png"  # 32x32, 164 bytes: admitted unchanged


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client went away (a timeout test): nothing to report
        super().handle_error(request, client_address)


class VlmServer:
    """A threaded HTTP server on 127.0.0.1 speaking the OpenAI `/chat/completions` SSE stream (and
    Anthropic's `/v1/messages` one: it answers any path).

    `events` is the list of SSE payloads sent with `pause` seconds between them: a dict or str is
    one `data:` event (dicts become JSON), an `(event, payload)` tuple is a named event (Anthropic),
    `bytes` are written as they are. `writer(wfile)`, when set, writes the whole body instead (an
    endless stream, a line that never ends). `status`/`error_body` make it refuse instead. Before sending event number
    `hold_before`, it waits (up to 10 s) for `release` to be set: a test sets it from the output
    callback to prove that chunks reach the host before the reply is complete.
    """

    def __init__(self) -> None:
        self.requests: List[Dict[str, Any]] = []
        self.events: List[Any] = []
        self.pause = 0.03
        self.status = 200
        self.status_sequence: List[int] = []  # consumed one per request before `status` applies
        self.content_type = "text/event-stream"
        self.raw_body: Optional[bytes] = None  # sent as is (with `content_type`) instead of events
        self.error_body: Optional[bytes] = None
        self.hold_before: Optional[int] = None
        self.release = threading.Event()
        self.released_in_time: Optional[bool] = None
        self.sent_log: List[tuple] = []
        self.writer: Optional[Callable[[Any], None]] = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = server.status_sequence.pop(0) if server.status_sequence else server.status
                if status != 200:
                    payload = server.error_body if server.error_body is not None else b"{}"
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if server.raw_body is not None:
                    self.send_response(200)
                    self.send_header("Content-Type", server.content_type)
                    self.send_header("Content-Length", str(len(server.raw_body)))
                    self.end_headers()
                    self.wfile.write(server.raw_body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", server.content_type)
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                if server.writer is not None:
                    server.writer(self.wfile)
                    return
                for i, event in enumerate(server.events):
                    if server.hold_before is not None and i == server.hold_before:
                        server.released_in_time = server.release.wait(10)
                    if isinstance(event, bytes):
                        self.wfile.write(event)
                    elif isinstance(event, tuple):
                        name, payload = event
                        data = payload if isinstance(payload, str) else json.dumps(payload)
                        self.wfile.write(f"event: {name}\ndata: {data}\n\n".encode())
                    else:
                        data = event if isinstance(event, str) else json.dumps(event)
                        self.wfile.write(f"data: {data}\n\n".encode())
                    self.wfile.flush()
                    server.sent_log.append((time.monotonic(), i))
                    time.sleep(server.pause)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    @property
    def root_url(self) -> str:
        """The server's root: Anthropic's base URL (the client adds `/v1/messages`)."""
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def delta(**fields: Any) -> Dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "test-vlm-model",
            "choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def finish() -> Dict[str, Any]:
    return {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": "test-vlm-model",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}


#: A reply with a reasoning delta (both field spellings) and an inline <think> block split over
#: chunks; only "The image is a tiny grey square." is the answer.
STANDARD_EVENTS = [
    delta(role="assistant"),
    delta(reasoning_content="Looking at the pixels. "),
    delta(reasoning="Small PNG, mostly grey."),
    delta(content="<think>inline musing"),
    delta(content=" continues</thi"),
    delta(content="nk>The image "),
    delta(content="is a tiny grey square."),
    finish(),
    "[DONE]",
]
STANDARD_ANSWER = "The image is a tiny grey square."
STANDARD_REASONING = ["Looking at the pixels. ", "Small PNG, mostly grey.", "inline musing continues"]


def text_delta(text: str) -> tuple:
    return ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                    "delta": {"type": "text_delta", "text": text}})


#: The same reply in the Anthropic Messages dialect: thinking, then text, then `message_stop`.
ANTHROPIC_EVENTS = [
    ("message_start", {"type": "message_start", "message": {"id": "msg_1", "role": "assistant", "content": []}}),
    ("content_block_start", {"type": "content_block_start", "index": 0,
                             "content_block": {"type": "thinking", "thinking": ""}}),
    ("ping", {"type": "ping"}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "thinking_delta", "thinking": "Looking at the pixels. "}}),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    text_delta("The image "),
    text_delta("is a tiny grey square."),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
    ("message_stop", {"type": "message_stop"}),
]


@pytest.fixture
def vlm_server():
    server = VlmServer()
    server.events = list(STANDARD_EVENTS)
    yield server
    server.release.set()
    server.close()


@pytest.fixture(autouse=True)
def _no_vlm_env(monkeypatch):
    """Tests configure the VLM explicitly; the caller's environment must not leak in."""
    for name in (facts.ENV_VLM_URL, facts.ENV_VLM_MODEL, facts.ENV_VLM_API_KEY, facts.ENV_VLM_API,
                 "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A workspace with a small PNG, a PDF, a directory, and a PNG just outside it."""
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copy(SMALL_PNG, ws / "small.png")
    (ws / "paper.pdf").write_bytes((REPO / "tests" / "fixtures" / "hello.pdf").read_bytes())
    (ws / "sub").mkdir()
    shutil.copy(SMALL_PNG, ws / "sub" / "nested.png")
    shutil.copy(SMALL_PNG, tmp_path / "outside.png")
    return ws


def wasm_path() -> Path:
    from mediagate_host import default_wasm_path

    return default_wasm_path()


@pytest.fixture(scope="session")
def component_path() -> Path:
    path = wasm_path()
    if not path.is_file():
        pytest.fail(f"the component {path} is missing; build it first (MEDIAGATE_AGENT_TOOL_WASM overrides)")
    return path


def native_cli() -> Path:
    """`$MEDIAGATE_BIN`, else target/release/mediagate, else target/debug/mediagate (waiting
    briefly: the binary may be missing for a moment while it is rebuilt)."""
    env = os.environ.get("MEDIAGATE_BIN")
    candidates = [Path(env)] if env else [REPO / "target" / "release" / "mediagate",
                                          REPO / "target" / "debug" / "mediagate"]
    for _ in range(60):
        for c in candidates:
            if c.is_file() and os.access(c, os.X_OK):
                return c
        time.sleep(1)
    pytest.fail(f"the native CLI is missing (looked at {', '.join(map(str, candidates))}; MEDIAGATE_BIN overrides)")
    raise AssertionError  # unreachable


Recorder = Callable[[str, str], None]
