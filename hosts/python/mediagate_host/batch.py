"""A Batch API file through the gate, one request at a time, in bounded memory.

The contract is the one every host follows (`mediagate admit-batch` in Rust, this module, the
JavaScript host): the component reads each request and splices the admitted body back into its
text (`admission.admit-batch-line`); a host only streams, calls and writes. So nothing here parses
a request: a JSON-lines file is cut at its line breaks, and an Anthropic `{"requests": [...]}`
document at its items' outer brackets.

    summary = admit_batch(gate, "batch.jsonl", "admitted.jsonl", api="openai", report="report.jsonl")
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
from collections import deque
from typing import Any, BinaryIO, Callable, Deque, Dict, Iterator, List, Optional, Tuple, Union

from .host import BatchLineAdmission, GuestTrap, Mediagate, MediagateError

#: The longest request (a line without its break, or one `requests` item) read; longer ones are
#: refused by the host without ever being held whole.
MAX_REQUEST_BYTES = 64 << 20

ON_REFUSAL = ("placeholder", "drop", "fail")

#: What a read asks the source for at once.
_CHUNK = 1 << 16

#: What makes a line blank, and what stands around a `requests` item: the ASCII whitespace of
#: Rust's `u8::is_ascii_whitespace` (the CLI's test), so every host copies the same lines unjudged.
_BLANK = b" \t\n\x0c\r"

#: The head of the Anthropic document, up to its array's `[`, in JSON's own whitespace.
_JSON_FORM_HEAD = re.compile(rb'[ \t\r\n]*\{[ \t\r\n]*"requests"[ \t\r\n]*:[ \t\r\n]*\[')
_IN_STRING = re.compile(rb'["\\]')
_STRUCTURE = re.compile(rb'["{}\[\]]')
_SCALAR_END = re.compile(rb'[,\]' + re.escape(_BLANK) + rb']')
_NOT_BLANK = re.compile(rb'[^' + re.escape(_BLANK) + rb']')

Source = Union[str, "os.PathLike[str]", BinaryIO]


class BatchInputError(MediagateError):
    """The batch file could not be read: an I/O error, or an Anthropic `{"requests": [...]}`
    document whose array is not closed (the CLI's exit code 2)."""


class _Reader:
    """A binary stream read in chunks, with what was read but not yet consumed kept in `buf`.

    Scanners move what they consume out of `buf` before asking for more, so `buf` stays about one
    chunk long whatever the size of a request."""

    def __init__(self, stream: BinaryIO):
        self.stream = stream
        self.buf = b""
        self.pos = 0
        self.read_bytes = 0
        self.eof = False

    @property
    def consumed(self) -> int:
        return self.read_bytes - (len(self.buf) - self.pos)

    def more(self) -> bool:
        """Append the next chunk to what is unconsumed; `False` at the end of the stream."""
        if self.eof:
            return False
        try:
            data = self.stream.read(_CHUNK)
        except OSError as e:
            raise BatchInputError(f"cannot read the batch file: {e}") from e
        if not data:
            self.eof = True
            return False
        self.read_bytes += len(data)
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def at_end(self) -> bool:
        return self.pos >= len(self.buf) and not self.more()

    def take(self, end: int) -> bytes:
        piece = self.buf[self.pos:end]
        self.pos = end
        return piece


class _Request:
    """One request on its way, with the bytes that go (or are left out) with it: a line's own
    break; an item's whitespace before and after it (the comma between two items written is the
    writer's, so an item left out takes its separator with it)."""

    __slots__ = ("number", "text", "raw", "length", "before", "after", "item", "bytes_in", "refusal")

    def __init__(self, number: int, raw: Optional[bytes], length: int, *, after: bytes = b"",
                 before: bytes = b"", item: bool = False, comma: bool = False):
        self.number = number
        self.raw = raw  # the request's bytes, None when longer than MAX_REQUEST_BYTES
        self.length = length
        self.before = before
        self.after = after
        self.item = item
        # The comma that ends an item is counted with it (the CLI's count when a run stops).
        self.bytes_in = len(before) + length + len(after) + comma
        self.text: Optional[str] = None
        self.refusal: Optional[str] = None  # a report line the host writes itself
        what = "item" if item else "line"
        if raw is None:
            self.refusal = too_long_refusal(number, length, what)
        else:
            try:
                self.text = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.refusal = not_utf8_refusal(number, length, what)


def too_long_refusal(number: int, length: int, what: str = "line") -> str:
    """The report line of a request longer than MAX_REQUEST_BYTES, refused by the host."""
    return _host_refusal(number, length, MAX_REQUEST_BYTES,
                         f"{what} {number} is longer than the {MAX_REQUEST_BYTES} bytes mediagate reads of one request")


def not_utf8_refusal(number: int, length: int, what: str = "line") -> str:
    """The report line of a request that is not UTF-8, refused by the host."""
    return _host_refusal(number, length, None, f"{what} {number} is not UTF-8 text")


def _host_refusal(number: int, length: int, limit: Optional[int], message: str) -> str:
    report = {"number": number, "custom_id": None, "outcome": "refused", "changed": [], "refused": [],
              "refusal": {"unusable": True, "reason": "undecodable", "bytes": length, "limit": limit, "rule": None,
                          "message": message}}
    return _dumps(report)


def _dumps(value: Any) -> str:
    # As the component and the CLI write JSON: compact, UTF-8 as it is.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# The two input forms, as a stream of pieces: bytes copied as they are, and requests.

_Piece = Union[bytes, _Request]


def _json_form_head(r: _Reader) -> Optional[int]:
    """Where the Anthropic document's first item may start (just past its `[`), if the file is
    one: its first non-whitespace byte is `{` and its first key `"requests"`. Looked at, not
    consumed; a file whose head does not fit the first chunks is read as JSON lines."""
    while len(r.buf) - r.pos < _CHUNK and r.more():
        pass
    match = _JSON_FORM_HEAD.match(r.buf, r.pos)
    return match.end() if match else None


def _lines(r: _Reader) -> Iterator[_Piece]:
    number = 0
    while not r.at_end():
        number += 1  # the physical line: blank ones count too
        held: Optional[bytearray] = bytearray()
        length = 0
        last = b""
        ended = False
        while True:
            newline = r.buf.find(b"\n", r.pos)
            piece = r.take(newline if newline >= 0 else len(r.buf))
            length += len(piece)
            last = piece[-1:] or last
            if held is not None:
                held += piece
                # One byte over the limit may still be the "\r" of a "\r\n" break.
                if len(held) > MAX_REQUEST_BYTES + 1:
                    held = None
            if newline >= 0:
                r.pos += 1
                ended = True
                break
            if not r.more():
                break
        brk = b""
        if ended:
            brk = b"\n"
            if last == b"\r":
                brk, length = b"\r\n", length - 1
                if held is not None:
                    del held[-1:]
        if length > MAX_REQUEST_BYTES:
            held = None
        if held is not None and not _NOT_BLANK.search(held):
            yield bytes(held) + brk  # a blank line is no request: copied as it is
            continue
        yield _Request(number, None if held is None else bytes(held), length, after=brk)


def _skip_blank(r: _Reader) -> bytes:
    out = bytearray()
    while True:
        rest = r.buf[r.pos:]
        stripped = rest.lstrip(_BLANK)
        out += rest[:len(rest) - len(stripped)]
        r.pos += len(rest) - len(stripped)
        if stripped or not r.more():
            return bytes(out)


def _items(r: _Reader, head: int) -> Iterator[_Piece]:
    """The `requests` items of an Anthropic document: its head, each item with the whitespace
    around it, then everything from the array's `]` on, as it is."""
    yield r.take(head)
    number = 0
    before = _skip_blank(r)
    if r.buf[r.pos:r.pos + 1] == b"]":
        yield before
        yield from _rest(r)
        return
    while True:
        if r.at_end():
            raise BatchInputError(f"the batch document ends inside its \"requests\" array (after item {number})")
        number += 1
        raw, length = _scan_value(r, number)
        after = _skip_blank(r)
        token = r.buf[r.pos:r.pos + 1]
        if token not in (b",", b"]"):
            what = "the end of the file" if not token else repr(token.decode("latin-1"))
            raise BatchInputError(f"the batch document's \"requests\" array has {what} after item {number} where a "
                                  "comma or ] belongs")
        yield _Request(number, raw, length, before=before, after=after, item=True, comma=token == b",")
        if token == b"]":
            yield from _rest(r)
            return
        r.pos += 1
        before = _skip_blank(r)


def _scan_value(r: _Reader, number: int) -> Tuple[Optional[bytes], int]:
    """One JSON value's exact bytes, found by its outer brackets (strings skipped whole); `None`
    past MAX_REQUEST_BYTES, the length still counted."""
    held: Optional[bytearray] = bytearray()
    length = 0
    first = r.buf[r.pos:r.pos + 1]
    scalar = first not in (b"{", b"[", b'"')
    depth = 0
    in_string = False
    escaped = False
    start = r.pos
    pos = r.pos
    done = False
    while not done:
        buf = r.buf
        while pos < len(buf):
            if escaped:
                pos += 1
                escaped = False
            elif in_string:
                m = _IN_STRING.search(buf, pos)
                if m is None:
                    pos = len(buf)
                elif m.group() == b"\\":
                    pos, escaped = m.end(), True
                else:
                    pos, in_string = m.end(), False
                    if depth == 0:
                        done = True
                        break
            elif scalar:
                m = _SCALAR_END.search(buf, pos)
                pos = len(buf) if m is None else m.start()
                if m is not None:
                    done = True
                    break
            else:
                m = _STRUCTURE.search(buf, pos)
                if m is None:
                    pos = len(buf)
                    continue
                pos = m.end()
                c = m.group()
                if c == b'"':
                    in_string = True
                elif c in (b"{", b"["):
                    depth += 1
                else:
                    depth -= 1
                    if depth <= 0:
                        done = True
                        break
        piece = buf[start:pos]
        r.pos = pos
        length += len(piece)
        if held is not None:
            held += piece
            if len(held) > MAX_REQUEST_BYTES:
                held = None
        if done:
            break
        if not r.more():
            if scalar:
                break
            raise BatchInputError(f"the batch document ends inside its \"requests\" array (inside item {number})")
        start = pos = r.pos
    return (None if held is None else bytes(held)), length


def _rest(r: _Reader) -> Iterator[bytes]:
    while True:
        piece = r.take(len(r.buf))
        if piece:
            yield piece
        if not r.more():
            return


# --------------------------------------------------------------------------------------------


def admit_batch(gate: Mediagate, source: Source, output: Union[Source, None], *, api: str,
                report: Union[Source, None] = None, on_refusal: str = "placeholder", jobs: int = 1,
                downsample: Optional[bool] = None, provider: Optional[str] = None, verify: Optional[str] = None,
                keep_metadata: Optional[bool] = None, convert: bool = False,
                on_refused: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
    """Admit every request of a Batch API file, as `mediagate admit-batch` does, and answer the
    summary (the report's last line, without its `{"summary": …}` wrapper).

    `source`: a path or a binary file object: OpenAI or Anthropic JSON lines, or an Anthropic
    `{"requests": [...]}` document (told apart by its first key). `output`: a path or a binary
    file object for the admitted file (`None`: judged, not written). `report`: a path or a binary
    file object for the report: one JSON line per request that is not unchanged, then the summary.

    Each request goes out as the gate made it, in input order: unchanged byte for byte, changed
    with the component's text, its own line break kept. `on_refusal` decides what a refused block
    or request does: `"placeholder"` (the request with each refused block replaced by a text
    block; a request refused whole is left out), `"drop"` (any request with a refusal left out)
    or `"fail"` (the first one stops the run: its report line, then the summary with
    `stopped_at`; an output given as a path is removed). A request that is not UTF-8 or is longer
    than 64 MiB is refused here, never held whole; one the sandbox could not finish (a
    `GuestTrap`: its CPU deadline, its memory) is refused in words, and the run goes on. `jobs`: requests judged at once (threads on
    the one `gate`); at most that many are held. `on_refused(report_line)` is called for each
    request with a refusal, in order.

    Raises `BatchInputError` when the file cannot be read (the output given as a path is then
    removed too), `ValueError` for an option the component does not take."""
    if on_refusal not in ON_REFUSAL:
        raise ValueError(f"on_refusal must be one of {ON_REFUSAL} (got {on_refusal!r})")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a whole number from 1 (got {jobs!r})")
    gate._check("api", api)
    options = dict(downsample=downsample, provider=provider, verify=verify, keep_metadata=keep_metadata,
                   convert=convert)
    gate._options(downsample, provider, verify, keep_metadata)  # bad names fail before any output

    with _Opened(source, "rb") as src, _Opened(output, "wb") as out, _Opened(report, "wb") as rep:
        try:
            run = _Run(gate, api, options, on_refusal, out.stream, rep.stream, on_refused)
            run.go(_Reader(src.stream), jobs)
        except BaseException:
            out.remove()
            raise
        if run.summary["stopped_at"] is not None:
            out.remove()
        return run.summary


def exit_code(summary: Dict[str, Any]) -> int:
    """The CLI's exit code for a run: 0 when nothing was refused and no file rule is broken, else 1."""
    bad = summary["refused_blocks"] or summary["refused"] or summary["file_rules"] or summary["stopped_at"] is not None
    return 1 if bad else 0


class _Opened:
    """A path opened here (and closed, or removed, here) or a caller's file object used as it is."""

    def __init__(self, target: Union[Source, None], mode: str):
        self.path: Optional[str] = None
        self.stream: Optional[BinaryIO] = None
        if target is None:
            return
        if hasattr(target, "read" if "r" in mode else "write"):
            self.stream = target  # type: ignore[assignment]
            return
        self.path = os.fspath(target)  # type: ignore[arg-type]
        try:
            self.stream = open(self.path, mode)
        except OSError as e:
            if "r" in mode:
                raise BatchInputError(f"cannot read the batch file {self.path}: {e}") from e
            raise

    def remove(self) -> None:
        """An output that is not the whole run's is not left behind half-written."""
        if self.path is None or self.stream is None:
            return
        self.stream.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        self.path = None

    def __enter__(self) -> "_Opened":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.path is not None and self.stream is not None:
            self.stream.close()


class _Run:
    def __init__(self, gate: Mediagate, api: str, options: Dict[str, Any], on_refusal: str,
                 out: Optional[BinaryIO], report: Optional[BinaryIO],
                 on_refused: Optional[Callable[[Dict[str, Any]], None]]):
        self.gate = gate
        self.api = api
        self.options = options
        self.on_refusal = on_refusal
        self.out = out
        self.report = report
        self.on_refused = on_refused
        self.counts = {"requests": 0, "unchanged": 0, "changed": 0, "refused_blocks": 0, "refused": 0, "left_out": 0}
        self.bytes_out = 0
        self.items_written = 0
        self.bytes_in = 0
        self.stopped_at: Optional[int] = None
        self.summary: Dict[str, Any] = {}

    def go(self, r: _Reader, jobs: int) -> None:
        head = _json_form_head(r)
        pieces = _lines(r) if head is None else _items(r, head)
        if jobs == 1:
            for piece in pieces:
                if self.stopped_at is not None:
                    break
                self._emit(piece, self._judge(piece) if isinstance(piece, _Request) else None)
        else:
            self._go_parallel(pieces, jobs)
        requests = self.counts["requests"]
        if self.stopped_at is None:
            rules = self.gate.check_batch_file(self.api, requests - self.counts["left_out"], self.bytes_out)
        else:
            rules = []
        self.summary = {"api": self.api, **self.counts, "bytes_in": self.bytes_in, "bytes_out": self.bytes_out,
                        "file_rules": rules, "stopped_at": self.stopped_at}
        self._report(_dumps({"summary": self.summary}))
        if self.out is not None:
            self.out.flush()
        if self.report is not None:
            self.report.flush()

    def _go_parallel(self, pieces: Iterator[_Piece], jobs: int) -> None:
        # A window of `jobs` requests in flight, written in input order as they complete; the bytes
        # copied between requests wait in the window too, bounded with them.
        pending: Deque[Tuple[_Piece, Any]] = deque()
        in_flight = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="mediagate-batch") as pool:
            try:
                for piece in pieces:
                    if self.stopped_at is not None:
                        break
                    if isinstance(piece, _Request):
                        pending.append((piece, pool.submit(self._judge, piece)))
                        in_flight += 1
                    else:
                        pending.append((piece, None))
                    while pending and (in_flight >= jobs or len(pending) > 4 * jobs):
                        in_flight -= self._drain_one(pending)
                while pending and self.stopped_at is None:
                    self._drain_one(pending)
            finally:
                for _, future in pending:
                    if future is not None:
                        future.cancel()

    def _drain_one(self, pending: Deque[Any]) -> int:
        piece, future = pending.popleft()
        if self.stopped_at is None:
            self._emit(piece, None if future is None else future.result())
        return 0 if future is None else 1

    def _judge(self, request: _Request) -> Optional[BatchLineAdmission]:
        if request.text is None:
            return None
        try:
            return self.gate.admit_batch_line(self.api, request.text, request.number, **self.options)
        except GuestTrap as e:
            # One request the sandbox could not finish (its CPU deadline, its memory) does not stop
            # the file: it is refused in words, as the CLI refuses it.
            return BatchLineAdmission("refused", None, None, _host_refusal(
                request.number, request.length, None,
                f"the gate could not judge request {request.number}: {e}; it does not go"))

    def _write(self, data: bytes) -> None:
        if data:
            self.bytes_out += len(data)
            if self.out is not None:
                self.out.write(data)

    def _report(self, line: str) -> None:
        if self.report is not None:
            self.report.write(line.encode("utf-8") + b"\n")

    def _emit(self, piece: _Piece, admission: Optional[BatchLineAdmission]) -> None:
        if isinstance(piece, bytes):
            self.bytes_in += len(piece)
            self._write(piece)
            return
        request = piece
        self.bytes_in += request.bytes_in
        self.counts["requests"] += 1
        if admission is None:
            outcome, report, line = "refused", request.refusal, None
        else:
            outcome, report, line = admission.outcome, admission.json, admission.line
        self.counts[outcome.replace("-", "_")] += 1
        refused = outcome in ("refused", "refused-blocks")
        if outcome != "unchanged":
            self._report(report)  # type: ignore[arg-type]
            if refused and self.on_refused is not None:
                self.on_refused(json.loads(report))  # type: ignore[arg-type]
        if refused and self.on_refusal == "fail":
            self.counts["left_out"] += 1
            self.stopped_at = request.number
            return
        if outcome == "refused" or (refused and self.on_refusal == "drop"):
            self.counts["left_out"] += 1
            return
        body = request.raw if outcome == "unchanged" else line.encode("utf-8")  # type: ignore[union-attr]
        if request.item and self.items_written:
            self._write(b",")
        self.items_written += 1
        self._write(request.before + body + request.after)  # type: ignore[operator]


def words(report_line: Dict[str, Any]) -> str:
    """A refused request in words (the CLI's stderr without `--report`)."""
    who = f"request {report_line.get('number')}"
    if report_line.get("custom_id") is not None:
        who += f" ({report_line['custom_id']})"
    refusal = report_line.get("refusal")
    if refusal:
        return f"refused {who}: {refusal.get('reason')} — {refusal.get('message')}"
    blocks = report_line.get("refused") or []
    return f"{who}: {len(blocks)} block(s) refused and replaced by a text block saying why"


def summary_words(summary: Dict[str, Any], seconds: float) -> List[str]:
    """The summary in words, and each file rule broken."""
    rate = summary["requests"] / seconds if seconds > 0 else 0.0
    lines = [f"admit-batch ({summary['api']}): {summary['requests']} requests: {summary['unchanged']} unchanged, "
             f"{summary['changed']} changed, {summary['refused_blocks']} with refused blocks, "
             f"{summary['refused']} refused; {summary['left_out']} left out; {summary['bytes_in']} bytes in, "
             f"{summary['bytes_out']} bytes out; {seconds:.1f} s, {rate:.1f} requests/s"]
    if summary["stopped_at"] is not None:
        lines.append(f"stopped at request {summary['stopped_at']} (on-refusal fail); no output file was left")
    lines.extend(f"file rule {rule['rule']}: {rule['message']}" for rule in summary["file_rules"])
    return lines
