"""Batch admission (`admit_batch`, `Mediagate.admit_batch_line`, `python -m mediagate_host
admit-batch`) on files made here, checked for what the contract says and byte for byte against
the native CLI's `mediagate admit-batch`."""

from __future__ import annotations

import base64
import io
import json
import os
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from batch_files import (anthropic_json_form, anthropic_jsonl, anthropic_requests, long_line_jsonl,
                         openai_jsonl)
from conftest import PY_HOST, native_cli
from mediagate_host import Mediagate, admit_batch
from mediagate_host.batch import MAX_REQUEST_BYTES, BatchInputError, _items, _json_form_head, _lines, _Reader, exit_code

SUMMARY_KEYS = ["api", "requests", "unchanged", "changed", "refused_blocks", "refused", "left_out", "bytes_in",
                "bytes_out", "file_rules", "stopped_at"]


@pytest.fixture(scope="module")
def gate(tmp_path_factory) -> Mediagate:
    gate = Mediagate(workspace=tmp_path_factory.mktemp("ws"), vlm=False)
    if not gate.batch_supported:
        pytest.fail(f"{gate.wasm_path} has no admit-batch-line / check-batch-file: build the component of this "
                    "release (MEDIAGATE_AGENT_TOOL_WASM overrides)")
    return gate


def run(gate, tmp_path: Path, data: bytes, api: str, name: str = "batch.jsonl", **options):
    src = tmp_path / name
    src.write_bytes(data)
    out, rep = tmp_path / f"{name}.out", tmp_path / f"{name}.report"
    summary = admit_batch(gate, src, out, api=api, report=rep, **options)
    report = [json.loads(line) for line in rep.read_bytes().splitlines()]
    assert report[-1] == {"summary": summary}
    return summary, (out.read_bytes() if out.exists() else None), report[:-1], rep


def custom_id(line: bytes):
    return json.loads(line).get("custom_id")


def png_width(data: bytes) -> int:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">I", data[16:20])[0]


# ---- cutting a file into requests (no component needed) ------------------------------------


def pieces(data: bytes) -> list:
    r = _Reader(io.BytesIO(data))
    head = _json_form_head(r)
    return list(_lines(r) if head is None else _items(r, head))


def rejoined(data: bytes) -> bytes:
    """The file put back from its pieces, as the writer writes them when every request goes as it came."""
    out, items = b"", 0
    for piece in pieces(data):
        if isinstance(piece, bytes):
            out += piece
            continue
        if piece.item and items:
            out += b","
        items += piece.item
        out += piece.before + piece.raw + piece.after
    return out


@pytest.mark.parametrize("data", [
    openai_jsonl(), anthropic_jsonl(), anthropic_json_form(),
    b'{"a":1}\r\n\n  \n{"b":"x\\ny"}\n{"c":2}',
    b' {"requests" : [\n {"custom_id":"a]\\"}","params":{"x":[1,{}]}} ,\n\t{"custom_id":"b"}\n], "k": 1}\n',
    b'{"requests":[ ]}', b'{"requests":[1, "s" ,null]}', b"", b"\n\n",
], ids=["openai", "anthropic-lines", "anthropic-document", "crlf-blank", "strings-with-brackets", "empty-array",
        "scalars", "empty", "blank"])
def test_a_file_is_cut_into_requests_that_put_back_give_it_byte_for_byte(data):
    assert rejoined(data) == data
    assert sum(p.bytes_in if not isinstance(p, bytes) else len(p) for p in pieces(data)) == len(data)


def test_lines_are_numbered_as_the_file_counts_them_and_items_as_the_array_does():
    numbers = [p.number for p in pieces(b'{"a":1}\r\n\n  \n{"b":2}\n{"c":2}') if not isinstance(p, bytes)]
    assert numbers == [1, 4, 5]  # blank lines are copied, not judged, but they are lines
    doc = pieces(anthropic_json_form())
    assert [p.number for p in doc if not isinstance(p, bytes)] == [1, 2, 3, 4, 5, 6]
    # A JSON-lines file never starts with the key "requests"; one that does is the document.
    assert all(not p.item for p in pieces(anthropic_jsonl()) if not isinstance(p, bytes))


# ---- the exports ---------------------------------------------------------------------------


def test_admit_batch_line_answers_the_components_outcome(gate):
    text = json.dumps({"custom_id": "t", "method": "POST", "url": "/v1/chat/completions",
                       "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}})
    unchanged = gate.admit_batch_line("openai", text, 7)
    assert (unchanged.outcome, unchanged.custom_id, unchanged.line) == ("unchanged", "t", None)
    assert unchanged.report()["number"] == 7

    svg = gate.admit_batch_line("anthropic", json.dumps(anthropic_requests()[2]), 3)
    assert svg.outcome == "refused-blocks" and svg.custom_id == "svg-as-png"
    assert "magic_mismatch" in svg.line and svg.report()["custom_id"] == "svg-as-png"

    whole = gate.admit_batch_line("anthropic", '{"custom_id": "x"}', 1)
    assert whole.outcome == "refused" and whole.line is None and whole.report()["refusal"]
    with pytest.raises(ValueError):
        gate.admit_batch_line("gemini", text, 1)


def test_check_batch_file_names_the_rules_a_file_breaks(gate):
    assert gate.check_batch_file("openai", 10, 10_000) == []
    rules = gate.check_batch_file("openai", 10**7, 10**11)
    assert rules and all(list(rule) == ["rule", "limit", "actual", "message"] for rule in rules)
    assert {rule["actual"] for rule in rules} <= {10**7, 10**11}
    assert all(rule["actual"] > rule["limit"] for rule in rules)


# ---- JSON lines ---------------------------------------------------------------------------


def test_openai_lines_keep_their_order_and_untouched_lines_their_bytes(gate, tmp_path):
    data = openai_jsonl()
    summary, out, report, _ = run(gate, tmp_path, data, "openai")
    assert list(summary) == SUMMARY_KEYS
    assert summary["requests"] == 8 and summary["refused"] == 1 and summary["refused_blocks"] == 1
    assert summary["left_out"] == 1 and summary["stopped_at"] is None and summary["file_rules"] == []
    assert summary["unchanged"] + summary["changed"] + summary["refused_blocks"] + summary["refused"] == 8
    assert (summary["bytes_in"], summary["bytes_out"]) == (len(data), len(out))

    lines_in, lines_out = data.split(b"\n"), out.split(b"\n")
    # Only the line that is not UTF-8 is left out; the blank lines are copied where they were.
    assert [custom_id(line) if line.strip() else line for line in lines_out] == \
        ["small", "wide", "svg-as-png", "text-only", b"   ", "crlf", "embed", b"", "last"]
    by_id = {custom_id(line): line for line in lines_out if line.strip()}
    for untouched in ("text-only", "crlf", "embed"):
        [original] = [line for line in lines_in if f'"custom_id": "{untouched}"'.encode() in line]
        assert by_id[untouched] == original  # byte for byte, the CRLF line's "\r" included
    assert by_id["crlf"].endswith(b"\r") and not out.endswith(b"\n")  # the last line had no break

    wide = json.loads(by_id["wide"])["body"]["messages"][0]["content"][0]["image_url"]["url"]
    assert png_width(base64.b64decode(wide.split(",", 1)[1])) == 2000
    svg = json.loads(by_id["svg-as-png"])["body"]["messages"][0]["content"]
    assert svg[0] == {"type": "text", "text": "And this?"} and svg[1]["type"] == "text"
    assert "magic_mismatch" in svg[1]["text"]

    # A report line for each request that is not unchanged, in input order, as the component wrote it.
    numbers = [line["number"] for line in report]
    assert numbers == sorted(numbers) and 3 in numbers and 8 in numbers
    assert all(line["outcome"] != "unchanged" for line in report)
    [latin1] = [line for line in report if line["number"] == 8]
    assert latin1 == {"number": 8, "custom_id": None, "outcome": "refused", "changed": [], "refused": [],
                      "refusal": {"unusable": True, "reason": "undecodable", "bytes": len(lines_in[7]), "limit": None,
                                  "rule": None, "message": "line 8 is not UTF-8 text"}}
    assert exit_code(summary) == 1


def test_the_report_lines_are_the_components_text(gate, tmp_path):
    data = openai_jsonl()
    _, _, _, rep = run(gate, tmp_path, data, "openai")
    written = rep.read_bytes().splitlines()
    svg_line = data.split(b"\n")[2].decode()
    assert written[1].decode() == gate.admit_batch_line("openai", svg_line, 3).json


def test_anthropic_lines_and_the_requests_document_give_the_same_requests(gate, tmp_path):
    lines_summary, lines_out, lines_report, _ = run(gate, tmp_path, anthropic_jsonl(), "anthropic")
    doc = anthropic_json_form()
    doc_summary, doc_out, doc_report, _ = run(gate, tmp_path, doc, "anthropic", name="batch.json")

    assert lines_summary["requests"] == doc_summary["requests"] == 6
    for key in ("unchanged", "changed", "refused_blocks", "refused", "left_out"):
        assert lines_summary[key] == doc_summary[key], key
    assert lines_summary["refused"] == 1 and lines_summary["refused_blocks"] == 1
    # Items are numbered as lines are: the same report, but for the size of a refused request's
    # text (the document's items are indented).
    def sizeless(report):
        return [{**line, "refusal": line["refusal"] and {**line["refusal"], "bytes": None}} for line in report]
    assert sizeless(doc_report) == sizeless(lines_report)

    requests = json.loads(doc_out)["requests"]
    assert [r["custom_id"] for r in requests] == ["small", "wide", "svg-as-png", "text-only", "last"]
    assert requests == [json.loads(line) for line in lines_out.splitlines()]
    # The bytes around the items are the document's own: its indentation, its closing lines.
    assert doc_out.startswith(b'{\n  "requests": [\n    {') and doc_out.endswith(b"\n  ]\n}\n")
    text_only = json.dumps({"requests": [anthropic_requests()[3]]}, indent=2).encode()
    item = text_only[text_only.index(b"    {"):text_only.rindex(b"}\n  ]") + 1].strip()
    assert item in doc and item in doc_out


def test_drop_leaves_out_every_request_with_a_refusal_and_keeps_the_document_valid(gate, tmp_path):
    summary, out, _, _ = run(gate, tmp_path, anthropic_json_form(), "anthropic", name="batch.json",
                             on_refusal="drop")
    assert [r["custom_id"] for r in json.loads(out)["requests"]] == ["small", "wide", "text-only", "last"]
    assert summary["left_out"] == 2

    summary, out, _, _ = run(gate, tmp_path, openai_jsonl(), "openai", on_refusal="drop")
    ids = [custom_id(line) for line in out.split(b"\n") if line.strip()]
    assert ids == ["small", "wide", "text-only", "crlf", "embed", "last"]
    assert summary["left_out"] == 2 and exit_code(summary) == 1


def test_a_document_whose_first_items_are_dropped_is_still_json(gate, tmp_path):
    requests = anthropic_requests()
    doc = json.dumps({"requests": [requests[4], requests[2], requests[3]]}).encode()
    summary, out, _, _ = run(gate, tmp_path, doc, "anthropic", name="batch.json", on_refusal="drop")
    assert json.loads(out) == {"requests": [requests[3]]}
    assert summary["left_out"] == 2
    summary, out, _, _ = run(gate, tmp_path, b'{"requests": []}', "anthropic", name="empty.json")
    assert out == b'{"requests": []}' and summary["requests"] == 0


def test_fail_stops_at_the_first_refusal_and_removes_the_output(gate, tmp_path):
    summary, out, report, _ = run(gate, tmp_path, openai_jsonl(), "openai", on_refusal="fail")
    assert out is None  # nothing half-written is left
    assert summary["stopped_at"] == 3 and summary["requests"] == 3 and summary["refused_blocks"] == 1
    assert [line["number"] for line in report][-1] == 3
    assert exit_code(summary) == 1

    # A file object is the caller's: it is not removed, and holds what was written before the stop.
    out_stream = io.BytesIO()
    summary = admit_batch(gate, io.BytesIO(openai_jsonl()), out_stream, api="openai", on_refusal="fail")
    assert summary["stopped_at"] == 3
    assert [custom_id(line) for line in out_stream.getvalue().splitlines()] == ["small", "wide"]


def test_jobs_change_nothing_in_what_is_written(gate, tmp_path):
    for data, api in ((openai_jsonl(), "openai"), (anthropic_json_form(), "anthropic")):
        one = run(gate, tmp_path, data, api, name=f"{api}-1")
        three = run(gate, tmp_path, data, api, name=f"{api}-3", jobs=3)
        assert one[1] == three[1] and one[2] == three[2]
    with pytest.raises(ValueError):
        admit_batch(gate, io.BytesIO(b""), None, api="openai", jobs=0)


def test_file_objects_stream_in_and_out(gate):
    source, output, report = io.BytesIO(anthropic_jsonl()), io.BytesIO(), io.BytesIO()
    summary = admit_batch(gate, source, output, api="anthropic", report=report)
    assert summary["requests"] == 6 and summary["bytes_out"] == len(output.getvalue())
    assert json.loads(report.getvalue().splitlines()[-1]) == {"summary": summary}


def test_a_line_over_64_mib_is_refused_without_being_held_whole(gate, tmp_path):
    length = MAX_REQUEST_BYTES * 2 + 12345
    src = tmp_path / "long.jsonl"
    src.write_bytes(long_line_jsonl(length))
    tracemalloc.start()
    try:
        summary = admit_batch(gate, src, tmp_path / "long.out", api="openai", report=tmp_path / "long.report")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # At most the 64 MiB read of one request (and a chunk) is held, not the 128 MiB line.
    assert peak < MAX_REQUEST_BYTES * 1.4, peak
    first = (tmp_path / "long.report").read_text().splitlines()[0]
    assert first == ('{"number":1,"custom_id":null,"outcome":"refused","changed":[],"refused":[],"refusal":'
                     f'{{"unusable":true,"reason":"undecodable","bytes":{length},"limit":67108864,"rule":null,'
                     '"message":"line 1 is longer than the 67108864 bytes mediagate reads of one request"}}')
    assert summary["requests"] == 2 and summary["unchanged"] == 1 and summary["left_out"] == 1
    assert custom_id((tmp_path / "long.out").read_bytes()) == "after-long"


def test_an_unreadable_source_raises_and_leaves_no_output(gate, tmp_path):
    with pytest.raises(BatchInputError):
        admit_batch(gate, tmp_path / "missing.jsonl", tmp_path / "out.jsonl", api="openai")
    assert not (tmp_path / "out.jsonl").exists()
    (tmp_path / "cut.json").write_bytes(b'{"requests": [{"custom_id": "a", "params": {')
    with pytest.raises(BatchInputError):
        admit_batch(gate, tmp_path / "cut.json", tmp_path / "out.jsonl", api="anthropic")
    assert not (tmp_path / "out.jsonl").exists()


# ---- the command line ----------------------------------------------------------------------


def py_cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(PY_HOST))
    return subprocess.run([sys.executable, "-m", "mediagate_host", *args], capture_output=True, env=env,
                          timeout=300, **kwargs)


def test_the_python_command_line_writes_what_admit_batch_writes(gate, tmp_path):
    src = tmp_path / "batch.jsonl"
    src.write_bytes(openai_jsonl())
    summary, out, _, rep = run(gate, tmp_path, openai_jsonl(), "openai", name="api.jsonl")
    done = py_cli("admit-batch", str(src), "--api", "openai", "-o", str(tmp_path / "cli.out"),
                  "--report", str(tmp_path / "cli.report"))
    assert done.returncode == 1, done.stderr
    assert (tmp_path / "cli.out").read_bytes() == out
    assert (tmp_path / "cli.report").read_bytes() == rep.read_bytes()
    assert b"8 requests" in done.stderr and b"requests/s" in done.stderr

    # Without --report, each refused request in words on stderr; the output on stdout.
    words = py_cli("admit-batch", "-", "--api", "openai", input=openai_jsonl())
    assert words.returncode == 1 and words.stdout == out
    assert b"refused request 8" in words.stderr and b"request 3 (svg-as-png)" in words.stderr

    missing = py_cli("admit-batch", str(tmp_path / "nope.jsonl"), "--api", "openai")
    assert missing.returncode == 2 and b"cannot read" in missing.stderr
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(b"\n".join(line for line in openai_jsonl().split(b"\n") if b"caf" not in line
                                 and b"svg-as-png" not in line))
    assert py_cli("admit-batch", str(clean), "--api", "openai", "-o", os.devnull).returncode == 0


# ---- parity with `mediagate admit-batch` ---------------------------------------------------


@pytest.fixture(scope="module")
def batch_cli() -> Path:
    cli = native_cli()
    help = subprocess.run([str(cli), "admit-batch", "--help"], capture_output=True, timeout=60)
    if help.returncode != 0:
        pytest.skip(f"{cli} has no admit-batch command (exit {help.returncode}): parity needs a CLI of this release")
    return cli


FILES = {
    "openai.jsonl": ("openai", openai_jsonl),
    "anthropic.jsonl": ("anthropic", anthropic_jsonl),
    "anthropic.json": ("anthropic", anthropic_json_form),
}


@pytest.mark.parametrize("on_refusal", ["placeholder", "drop", "fail"])
@pytest.mark.parametrize("name", sorted(FILES))
def test_output_and_report_are_the_clis_byte_for_byte(gate, batch_cli, tmp_path, name, on_refusal):
    api, make = FILES[name]
    src = tmp_path / name
    src.write_bytes(make())
    cli = subprocess.run([str(batch_cli), "admit-batch", str(src), "--api", api, "-o", str(tmp_path / "cli.out"),
                          "--report", str(tmp_path / "cli.report"), "--on-refusal", on_refusal],
                         capture_output=True, timeout=300)
    assert cli.returncode in (0, 1), cli.stderr.decode()
    summary = admit_batch(gate, src, tmp_path / "py.out", api=api, report=tmp_path / "py.report",
                          on_refusal=on_refusal)
    assert exit_code(summary) == cli.returncode
    assert (tmp_path / "py.report").read_bytes() == (tmp_path / "cli.report").read_bytes()
    assert (tmp_path / "py.out").exists() == (tmp_path / "cli.out").exists()
    if (tmp_path / "cli.out").exists():
        assert (tmp_path / "py.out").read_bytes() == (tmp_path / "cli.out").read_bytes()


def test_the_long_line_refusal_is_the_clis(gate, batch_cli, tmp_path):
    src = tmp_path / "long.jsonl"
    src.write_bytes(long_line_jsonl(MAX_REQUEST_BYTES + 1))
    cli = subprocess.run([str(batch_cli), "admit-batch", str(src), "--api", "openai", "-o", str(tmp_path / "cli.out"),
                          "--report", str(tmp_path / "cli.report")], capture_output=True, timeout=300)
    assert cli.returncode == 1, cli.stderr.decode()
    admit_batch(gate, src, tmp_path / "py.out", api="openai", report=tmp_path / "py.report")
    assert (tmp_path / "py.report").read_bytes() == (tmp_path / "cli.report").read_bytes()
    assert (tmp_path / "py.out").read_bytes() == (tmp_path / "cli.out").read_bytes()
