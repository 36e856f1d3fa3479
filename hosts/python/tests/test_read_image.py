"""`read_image` through the real component, against a loopback SSE server (both dialects)."""

from __future__ import annotations

import base64
import json
import threading
import time

import pytest

from conftest import ANTHROPIC_EVENTS, SMALL_PNG, STANDARD_ANSWER, STANDARD_REASONING, delta, finish
from mediagate_host import facts
from mediagate_host import AnthropicVlm, GuestTrap, Mediagate, MediagateError, OpenAICompatibleVlm, ToolError


def make_gate(workspace, server=None, on_output=None, **vlm_kwargs):
    if server is None:
        vlm = OpenAICompatibleVlm(base_url=None, model="test-vlm-model")
    else:
        vlm = OpenAICompatibleVlm(base_url=server.base_url, model="test-vlm-model", api_key="sk-test",
                                  retries=0, **vlm_kwargs)
    return Mediagate(workspace=workspace, vlm=vlm, on_output=on_output)


def image_part(request):
    content = request["body"]["messages"][0]["content"]
    texts = [p["text"] for p in content if p["type"] == "text"]
    urls = [p["image_url"]["url"] for p in content if p["type"] == "image_url"]
    assert len(texts) == 1 and len(urls) == 1, content
    return texts[0], urls[0]


def test_question_gets_the_answer_without_reasoning(workspace, vlm_server):
    gate = make_gate(workspace, vlm_server)
    answer = gate.read_image("small.png", "What colour is the square?")

    assert answer == STANDARD_ANSWER
    for reasoning in STANDARD_REASONING:
        assert reasoning.strip() not in answer
    assert "think" not in answer

    assert len(vlm_server.requests) == 1
    request = vlm_server.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["body"]
    assert body["model"] == "test-vlm-model"
    assert body["stream"] is True
    prompt, url = image_part(request)
    assert prompt == "What colour is the square?"
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    # The small PNG passes the gate unchanged: the bytes sent are the file's bytes.
    assert base64.b64decode(url[len(prefix):], validate=True) == SMALL_PNG.read_bytes()


def test_no_question_sends_the_describe_prompt(workspace, vlm_server):
    gate = make_gate(workspace, vlm_server)
    assert gate.read_image("sub/nested.png") == STANDARD_ANSWER
    prompt, _ = image_part(vlm_server.requests[0])
    assert prompt.startswith("Describe this image")
    assert "verbatim" in prompt


def test_blank_question_counts_as_none(workspace, vlm_server):
    gate = make_gate(workspace, vlm_server)
    gate.read_image("small.png", "   ")
    prompt, _ = image_part(vlm_server.requests[0])
    assert prompt.startswith("Describe this image")


def test_absolute_path_inside_the_workspace(workspace, vlm_server):
    gate = make_gate(workspace, vlm_server)
    assert gate.read_image(str(workspace / "small.png"), "q") == STANDARD_ANSWER


def test_no_vlm_configured_fails_at_once_without_a_request(workspace, vlm_server):
    gate = make_gate(workspace, server=None)
    started = time.monotonic()
    with pytest.raises(ToolError) as e:
        gate.read_image("small.png", "anything?")
    assert time.monotonic() - started < 2.0
    assert e.value.code == "no-vlm"
    assert e.value.message.startswith("error:")
    assert "Do not retry" in e.value.message
    assert vlm_server.requests == []

    # `vlm=False` is the same.
    with pytest.raises(ToolError) as e:
        Mediagate(workspace=workspace, vlm=False).read_image("small.png")
    assert e.value.code == "no-vlm"
    assert vlm_server.requests == []


def test_vlm_from_environment(workspace, vlm_server, monkeypatch):
    monkeypatch.setenv(facts.ENV_VLM_URL, vlm_server.base_url)
    monkeypatch.setenv(facts.ENV_VLM_MODEL, "env-model")
    monkeypatch.setenv(facts.ENV_VLM_API_KEY, "sk-env")
    gate = Mediagate(workspace=workspace)
    assert gate.read_image("small.png", "q") == STANDARD_ANSWER
    request = vlm_server.requests[0]
    assert request["body"]["model"] == "env-model"
    assert request["headers"]["Authorization"] == "Bearer sk-env"


def test_a_pdf_that_does_not_render_never_reaches_the_model(workspace, vlm_server):
    """A PDF is rendered (page 1 by default); this one's only page is blank, so it is refused in words."""
    gate = make_gate(workspace, vlm_server)
    with pytest.raises(ToolError) as e:
        gate.read_image("paper.pdf", "what is this?")
    assert e.value.code == "refused"
    assert e.value.message.startswith("error: the PDF paper.pdf cannot be shown to the model: "), e.value.message
    assert vlm_server.requests == []


def test_missing_file(workspace, vlm_server):
    gate = make_gate(workspace, vlm_server)
    with pytest.raises(ToolError) as e:
        gate.read_image("nope.png")
    assert e.value.code == "not-found"
    assert e.value.message.startswith("error: file not found")
    assert vlm_server.requests == []


def test_a_directory_is_not_a_file(workspace, vlm_server):
    gate = make_gate(workspace, vlm_server)
    with pytest.raises(ToolError) as e:
        gate.read_image("sub")
    assert e.value.code == "not-a-file"


@pytest.mark.parametrize("path", ["../outside.png", "sub/../../outside.png", "/etc/passwd"])
def test_paths_outside_the_workspace_are_refused(workspace, vlm_server, path):
    assert (workspace.parent / "outside.png").is_file()
    gate = make_gate(workspace, vlm_server)
    with pytest.raises(ToolError) as e:
        gate.read_image(path)
    assert e.value.code == "outside-workspace"
    assert vlm_server.requests == []


def test_a_symlink_out_of_the_workspace_is_refused(workspace, vlm_server):
    (workspace / "link.png").symlink_to(workspace.parent / "outside.png")
    gate = make_gate(workspace, vlm_server)
    with pytest.raises(ToolError) as e:
        gate.read_image("link.png")
    assert e.value.code == "outside-workspace"
    assert vlm_server.requests == []


def test_output_streams_before_the_call_returns(workspace, vlm_server):
    """The server holds back the last content chunk until the output callback has seen the
    first one, so the test passes only if chunks reach the callback while the reply streams."""
    received = []
    returned = threading.Event()

    def on_output(kind, text):
        received.append((kind, text, returned.is_set()))
        if kind == "content":
            vlm_server.release.set()

    vlm_server.hold_before = vlm_server.events.index(delta(content="is a tiny grey square."))
    gate = make_gate(workspace, vlm_server, on_output=on_output)
    answer = gate.read_image("small.png", "q")
    returned.set()

    assert vlm_server.released_in_time is True
    assert answer == STANDARD_ANSWER
    assert received and not any(after for _, _, after in received)

    # The order of arrival is kept, and each kind adds up to what was streamed.
    kinds = [k for k, _, _ in received]
    first_content = kinds.index("content")
    assert kinds[:first_content] == ["reasoning"] * first_content
    assert "".join(t for k, t, _ in received if k == "content") == STANDARD_ANSWER
    assert "".join(t for k, t, _ in received if k == "reasoning") == "".join(STANDARD_REASONING)
    reasoning_texts = [t for k, t, _ in received if k == "reasoning"]
    assert reasoning_texts[:2] == STANDARD_REASONING[:2]


def test_a_per_call_output_callback(workspace, vlm_server):
    seen = []
    gate = make_gate(workspace, vlm_server, on_output=lambda k, t: pytest.fail("default callback used"))
    gate.read_image("small.png", "q", on_output=lambda k, t: seen.append(k))
    assert "content" in seen and "reasoning" in seen


def test_a_raising_output_callback_does_not_fail_the_call(workspace, vlm_server):
    def boom(kind, text):
        raise RuntimeError("display broke")

    assert make_gate(workspace, vlm_server, on_output=boom).read_image("small.png", "q") == STANDARD_ANSWER


def test_http_401_is_a_tool_error_with_the_status_and_message(workspace, vlm_server):
    vlm_server.status = 401
    vlm_server.error_body = (b'{"error": {"message": "Incorrect API key provided: sk-test.", '
                             b'"type": "invalid_request_error", "code": "invalid_api_key"}}')
    gate = make_gate(workspace, vlm_server)
    with pytest.raises(ToolError) as e:
        gate.read_image("small.png", "q")
    assert e.value.code == "vlm-failed"
    assert "401" in e.value.message
    assert "Incorrect API key provided" in e.value.message
    assert len(vlm_server.requests) == 1


def test_unreachable_vlm(workspace):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    vlm = OpenAICompatibleVlm(base_url=f"http://127.0.0.1:{port}/v1", model="m", retries=0)
    with pytest.raises(ToolError) as e:
        Mediagate(workspace=workspace, vlm=vlm).read_image("small.png", "q")
    assert e.value.code == "vlm-failed"
    assert "could not be reached" in e.value.message


def test_a_stream_that_breaks_mid_reply_keeps_what_arrived(workspace, vlm_server):
    """An error from `reply.next-chunk` (a WIT `result` error out of Python) reaches the guest."""
    vlm_server.events = [delta(content="Partial answer"), "{not json"]
    answer = make_gate(workspace, vlm_server).read_image("small.png", "q")
    assert answer.startswith("Partial answer")
    assert "incomplete" in answer and "malformed" in answer


def test_a_malformed_stream_before_any_content_is_a_tool_error(workspace, vlm_server):
    vlm_server.events = ["{not json"]
    with pytest.raises(ToolError) as e:
        make_gate(workspace, vlm_server).read_image("small.png", "q")
    assert e.value.code == "vlm-failed"
    assert "malformed" in e.value.message


def test_an_idle_stream_times_out(workspace, vlm_server):
    vlm_server.events = [delta(content="slow"), finish(), "[DONE]"]
    vlm_server.hold_before = 1  # never released: the server stalls after the first chunk
    gate = make_gate(workspace, vlm_server, idle_timeout=0.5)
    answer = gate.read_image("small.png", "q")
    assert answer.startswith("slow") and "timed out" in answer


def test_empty_answer_is_a_tool_error(workspace, vlm_server):
    vlm_server.events = [delta(reasoning="only thinking"), finish(), "[DONE]"]
    with pytest.raises(ToolError) as e:
        make_gate(workspace, vlm_server).read_image("small.png", "q")
    assert e.value.code == "vlm-failed"
    assert "empty" in e.value.message


def test_calls_are_independent(workspace, vlm_server):
    gate = make_gate(workspace, vlm_server)
    for _ in range(3):
        assert gate.read_image("small.png", "q") == STANDARD_ANSWER
    with pytest.raises(ToolError):
        gate.read_image("nope.png")
    assert gate.read_image("small.png", "q") == STANDARD_ANSWER
    assert len(vlm_server.requests) == 4


def test_tool_definition(workspace):
    d = Mediagate(workspace=workspace, vlm=False).tool_definition()
    assert d["name"] == "read_image"
    assert "image" in d["description"]
    schema = d["parameters"]
    assert schema["type"] == "object"
    assert schema["required"] == ["path"]
    assert set(schema["properties"]) == {"path", "question", "page"}
    assert schema["properties"]["page"]["type"] == "integer"


# ---- parity with the Rust host: the Anthropic dialect, the environment, deadlines --------------


def test_the_anthropic_dialect_through_the_component(workspace, vlm_server):
    vlm_server.events = list(ANTHROPIC_EVENTS)
    seen = []
    vlm = AnthropicVlm(base_url=vlm_server.root_url, model="claude-test", api_key="sk-ant-test", retries=0)
    answer = Mediagate(workspace=workspace, vlm=vlm).read_image("small.png", "q", on_output=lambda k, t: seen.append(k))
    assert answer == STANDARD_ANSWER
    assert seen[0] == "reasoning" and "content" in seen
    request = vlm_server.requests[0]
    assert request["path"] == "/v1/messages"
    image, text = request["body"]["messages"][0]["content"]
    assert text == {"type": "text", "text": "q"}
    assert base64.b64decode(image["source"]["data"]) == SMALL_PNG.read_bytes()


def test_the_environment_chooses_the_api_and_the_key(workspace, vlm_server, monkeypatch):
    vlm_server.events = list(ANTHROPIC_EVENTS)
    monkeypatch.setenv(facts.ENV_VLM_URL, vlm_server.root_url)
    monkeypatch.setenv(facts.ENV_VLM_MODEL, "claude-env")
    monkeypatch.setenv(facts.ENV_VLM_API, "anthropic")
    monkeypatch.setenv(facts.ENV_VLM_API_KEY, "sk-mediagate-env")
    # The vendors' own variables go only to the vendors' APIs, not to this loopback server.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-env")
    assert Mediagate(workspace=workspace).read_image("small.png", "q") == STANDARD_ANSWER
    request = vlm_server.requests[0]
    assert request["body"]["model"] == "claude-env"
    assert {k.lower(): v for k, v in request["headers"].items()}["x-api-key"] == "sk-mediagate-env"


def test_a_url_without_a_model_is_refused_at_once(workspace, monkeypatch):
    monkeypatch.setenv(facts.ENV_VLM_URL, "http://127.0.0.1:9/v1")
    with pytest.raises(MediagateError) as e:
        Mediagate(workspace=workspace)
    assert "no model" in str(e.value) and facts.ENV_VLM_MODEL in str(e.value)


def test_a_base_url_missing_its_v1_is_named_in_the_tool_error(workspace, vlm_server):
    vlm_server.status, vlm_server.error_body = 404, b""
    vlm = OpenAICompatibleVlm(base_url=vlm_server.root_url, model="m", retries=0)
    with pytest.raises(ToolError) as e:
        Mediagate(workspace=workspace, vlm=vlm).read_image("small.png", "q")
    assert e.value.code == "vlm-failed"
    assert (f"(HTTP 404): Not Found at {vlm_server.root_url}/chat/completions — does the base URL need a /v1 "
            "path segment?") in e.value.message


def test_the_wall_clock_deadline_ends_a_call_waiting_on_the_vlm(workspace, vlm_server):
    """The model sends one chunk and stalls (idle timeout 60 s): the call's wall-clock deadline
    (1 s) ends it with an error, not a partial answer, and the next call is unaffected."""
    vlm_server.events = [delta(content="slow"), finish(), "[DONE]"]
    vlm_server.hold_before = 1
    vlm = OpenAICompatibleVlm(base_url=vlm_server.base_url, model="m", retries=0, idle_timeout=60)
    gate = Mediagate(workspace=workspace, vlm=vlm, wall_deadline=1.0)
    with pytest.raises(GuestTrap) as e:
        gate.read_image("small.png", "q")
    assert e.value.kind == facts.KIND_WALL_DEADLINE
    assert str(e.value) == "the call to read-image took longer than its wall-clock deadline of 1 s and was stopped"
    vlm_server.release.set()
    assert gate.admit_file("small.png")["ok"] is True


def test_the_wall_clock_deadline_with_a_vlm_that_takes_no_deadline(workspace):
    """A custom VLM client whose `ask` knows no `deadline=`: the deadline is checked when it returns."""
    from mediagate_host import Chunk, Reply

    class SlowReply(Reply):
        def next_chunk(self):
            time.sleep(0.2)
            return Chunk("content", "more ")

    class SlowVlm:
        configured = True

        def ask(self, prompt, mime, data_base64):
            return SlowReply()

    with pytest.raises(GuestTrap) as e:
        Mediagate(workspace=workspace, vlm=SlowVlm(), wall_deadline=1.0).read_image("small.png", "q")
    assert e.value.kind == facts.KIND_WALL_DEADLINE


def test_a_reply_stopped_at_the_output_limit_is_marked_incomplete(workspace, vlm_server):
    """The `stopped-early` error from Python reaches the guest, which marks the answer."""
    length = finish()
    length["choices"][0]["finish_reason"] = "length"
    vlm_server.events = [delta(content="Half an answer"), length]
    answer = make_gate(workspace, vlm_server).read_image("small.png", "q")
    assert answer.startswith("Half an answer\n\n[mediagate: the reply was cut off (")
    assert "output limit" in answer and answer.endswith("the answer above is incomplete]")


def test_the_image_is_admitted_under_the_profile_of_the_vlms_api(workspace, vlm_server):
    """The `vlm.api` import: an OpenAI-compatible model gets no animated GIF (the openai profile):
    its first frame instead."""
    gif = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
           + b"!\xf9\x04\x00\x0a\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00"
           + b"!\xf9\x04\x00\x0a\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02L\x01\x00;")
    (workspace / "anim.gif").write_bytes(gif)
    # The tool converts by default: the model is sent the first frame, as a PNG.
    make_gate(workspace, vlm_server).read_image("anim.gif", "q")
    assert len(vlm_server.requests) == 1
    assert "data:image/png;base64," in json.dumps(vlm_server.requests[0]["body"])


# ---- long replies: the middle cut, the read bound ---------------------------------------------


def reply_of(n):
    """A reply of exactly `n` characters (some two and three bytes long) whose last line names `n`."""
    last = f"\nthe last line of the {n}-character reply"
    line = "line {:06}: café ✓ naïve — 0123456789\n"
    body, i = [], 0
    size = 0
    while size < n - len(last):
        body.append(line.format(i))
        size += len(body[-1])
        i += 1
    return "".join(body)[:n - len(last)] + last


def expected_cut(text, note=""):
    """The tool's plan, written out: within 200,000 characters (the note included) whole, else the
    first 100,000 characters, a marker stating the count cut, and the last characters to 200,000."""
    budget = 200_000 - len(note)
    if len(text) <= budget:
        return text + note

    def marker(cut):
        return f"\n\n[… {cut} characters cut from the middle by mediagate …]\n\n"

    cut = next(c for c in range(len(text) - budget, len(text)) if c == len(text) - budget + len(marker(c)))
    return text[:100_000] + marker(cut) + text[100_000 + cut:] + note


RUNAWAY_NOTE = ("\n\n[mediagate: the reply was cut off (it did not end within 1000000 characters, and mediagate "
                "stopped reading it); the answer above is incomplete]")


def without_notices(live, kind="answer"):
    """The live stream with its notices (paused, will be cut) taken out: what is left is the answer."""
    return (live
            .replace(f"\n\n[… mediagate: the live {kind} pauses here at 100000 characters; the rest follows "
                     "when the reply ends …]\n\n", "", 1)
            .replace(f"[… mediagate: the {kind} is longer than 200000 characters, so it will be cut in the "
                     "middle: its last characters follow when the reply ends …]\n\n", "", 1))


@pytest.mark.parametrize("n", [199_999, 200_000, 200_001, 300_000, 999_999])
def test_replies_up_to_the_cap_are_whole_and_longer_ones_cut_in_the_middle(workspace, vlm_server, n):
    text = reply_of(n)
    assert len(text) == n
    vlm_server.pause = 0
    vlm_server.events = [delta(content=text[i:i + 8191]) for i in range(0, n, 8191)] + [finish(), "[DONE]"]
    live = []
    answer = make_gate(workspace, vlm_server).read_image(
        "small.png", "q", on_output=lambda k, t: live.append(t) if k == "content" else None)
    assert answer.endswith(f"\nthe last line of the {n}-character reply")
    assert len(answer) == min(n, 200_000)
    if n > 200_000:
        head, rest = answer[:100_000], answer[100_000:]
        assert head == text[:100_000]
        marker, tail = rest.split(" characters cut from the middle by mediagate …]\n\n")
        cut = int(marker.removeprefix("\n\n[… "))
        assert text.endswith(tail) and 100_000 + cut + len(tail) == n
    assert answer == expected_cut(text)
    assert without_notices("".join(live)) == answer


def test_an_endless_reply_is_cut_at_the_read_bound_in_bounded_memory(workspace, vlm_server):
    """A model that never stops: the guest reads 1,000,000 characters, keeps the head and the last
    characters read, and hangs up. It does so within a memory limit a short reply needs too."""
    event = b"data: " + json.dumps(delta(content="all work and no play ")).encode() + b"\n\n"
    hung_up = threading.Event()

    def write(wfile):
        try:
            while True:
                wfile.write(event * 64)
                wfile.flush()
        except OSError:
            hung_up.set()

    vlm_server.writer = write
    live = []
    gate = Mediagate(workspace=workspace, memory_limit=24 << 20,
                     vlm=OpenAICompatibleVlm(base_url=vlm_server.base_url, model="m", api_key="sk-test", retries=0))
    started = time.monotonic()
    answer = gate.read_image("small.png", on_output=lambda k, t: live.append(t))
    took = time.monotonic() - started
    read = ("all work and no play " * 50_000)[:1_000_000]
    assert answer == expected_cut(read, RUNAWAY_NOTE)
    assert without_notices("".join(live)) == answer
    assert hung_up.wait(30), "the client never hung up on the endless reply"
    print(f"endless reply through the Python host: {took:.2f} s wall time, memory limit 24 MiB")


def test_long_reasoning_is_cut_the_same_way_and_kept_out_of_the_answer(workspace, vlm_server):
    thought = reply_of(300_000)
    vlm_server.pause = 0
    vlm_server.events = ([delta(reasoning_content=thought[i:i + 8191]) for i in range(0, 300_000, 8191)]
                         + [delta(content="A small icon."), finish(), "[DONE]"])
    live = {"content": [], "reasoning": []}
    answer = make_gate(workspace, vlm_server).read_image("small.png", "q",
                                                         on_output=lambda k, t: live[k].append(t))
    assert answer == "A small icon."
    assert without_notices("".join(live["reasoning"]), "reasoning") == expected_cut(thought)
    assert "".join(live["content"]) == "A small icon."
