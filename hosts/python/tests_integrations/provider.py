"""A loopback provider: a real HTTP server on 127.0.0.1 that records every request it receives
(path, headers, the body byte for byte) and answers in the dialect of the endpoint, just enough
for the real SDKs and LiteLLM to parse: Chat Completions, Responses, Anthropic Messages, Gemini's
`generateContent` (and its SSE stream)."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List

ANSWER = "a loopback answer"


def chat_completion(model: str) -> Dict[str, Any]:
    return {"id": "chatcmpl-loopback", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": ANSWER}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def response(model: str) -> Dict[str, Any]:
    return {"id": "resp_loopback", "object": "response", "created_at": int(time.time()), "model": model,
            "status": "completed", "output": [{"type": "message", "id": "msg_loopback", "role": "assistant",
                                               "status": "completed",
                                               "content": [{"type": "output_text", "text": ANSWER,
                                                            "annotations": []}]}],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def message(model: str) -> Dict[str, Any]:
    return {"id": "msg_loopback", "type": "message", "role": "assistant", "model": model,
            "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1}}


def message_events(model: str) -> List[tuple]:
    """`message(model)` as the Messages API streams it (what clients that ask `stream` get)."""
    start = dict(message(model), content=[], stop_reason=None)
    return [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": ANSWER}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]


def generate_content() -> Dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": ANSWER}]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
            "modelVersion": "loopback"}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class Provider:
    """`records`: one dict per request: `path`, `headers`, `raw` (bytes), `body` (parsed JSON or
    None). `replies`: tool calls to answer with, consumed one per Chat Completions request.
    `files`: `{path: (content type, bytes)}` served to GET (what a framework downloads)."""

    def __init__(self) -> None:
        self.records: List[Dict[str, Any]] = []
        self.replies: List[Dict[str, Any]] = []
        self.files: Dict[str, tuple] = {}
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.path in provider.files:
                    content_type, data = provider.files[self.path]
                    self.send_response(200)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self._send(200, {"object": "list", "data": []})

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                provider.records.append({"path": self.path, "headers": dict(self.headers), "raw": raw, "body": body})
                model = body.get("model", "m") if isinstance(body, dict) else "m"
                path = self.path.split("?")[0].rstrip("/")
                if path.endswith("/chat/completions"):
                    answer = chat_completion(model)
                    if provider.replies:
                        answer["choices"][0]["message"] = provider.replies.pop(0)
                        answer["choices"][0]["finish_reason"] = "tool_calls"
                elif path.endswith("/messages/count_tokens"):
                    answer = {"input_tokens": 1}
                elif path.endswith("/responses"):
                    answer = response(model)
                elif path.endswith(":streamGenerateContent"):
                    # Gemini streams (with `alt=sse`) as data-only events of whole responses.
                    self._send_events([(None, generate_content())])
                    return
                elif path.endswith(":generateContent"):
                    answer = generate_content()
                elif path.endswith(":countTokens"):
                    answer = {"totalTokens": 1}
                elif path.endswith("/messages"):
                    if isinstance(body, dict) and body.get("stream"):
                        self._send_events(message_events(model))
                        return
                    answer = message(model)
                else:
                    answer = {"object": "list", "data": []}
                self._send(200, answer)

            def _send_events(self, events: List[tuple]) -> None:
                data = b"".join(((f"event: {name}\n" if name else "") + f"data: {json.dumps(payload)}\n\n").encode()
                                for name, payload in events)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _send(self, status: int, payload: Dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def root_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def base_url(self) -> str:
        return self.root_url + "/v1"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
