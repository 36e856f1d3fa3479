"""The gate in a Ray Data pipeline: callable classes for `Dataset.map_batches` run as an actor pool,
each actor holding one `Mediagate` (the component is loaded once per actor, from the compiled
cache when `python -m mediagate_host warm-up` ran on that node).

    import ray
    from mediagate_host.ray import AdmitImages

    ds = ray.data.from_items([{"path": str(p)} for p in paths])
    ds = ds.map_batches(AdmitImages, fn_constructor_kwargs={"workspace": "/data/images"},
                        compute=ray.data.ActorPoolStrategy(size=4), batch_size=16)

Ray is not imported here: the classes are plain callables that Ray Data instantiates in its actors,
so this module imports, and its classes can be tried, without Ray installed. A batch is a dict of
NumPy arrays (`batch_format="numpy"`, Ray Data's default) or a pandas DataFrame.

One bad row never fails its batch: a row whose admission raises (a file that cannot be read, a
guest trap) gets a verdict `{"ok": false, "error": {"type", "code", "message"}}` in its slot, and
every other row its gate verdict.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any, Dict, List, Optional, Tuple

from .batch import MAX_REQUEST_BYTES, not_utf8_refusal, too_long_refusal
from .host import Mediagate, ToolError


def _error_verdict(error: BaseException) -> Dict[str, Any]:
    return {"ok": False, "error": {"type": type(error).__name__, "code": getattr(error, "code", None),
                                   "message": getattr(error, "message", None) or str(error)}}


def _missing(value: Any) -> bool:
    """A null cell: `None`, or the NaN that a column of nulls becomes in NumPy and pandas batches."""
    if value is None:
        return True
    try:
        return bool(value != value)  # NaN, a Python or a NumPy float
    except (TypeError, ValueError):
        return False


def _column(values: List[Any], batch: Any) -> Any:
    """A new column in the batch's own kind: a NumPy object array, or a list for a DataFrame."""
    if hasattr(batch, "iloc"):
        return values
    import numpy as np

    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def _row_count(batch: Any) -> int:
    if hasattr(batch, "iloc"):
        return len(batch)
    return len(next(iter(batch.values()))) if len(batch) else 0


class AdmitImages:
    """Admits a batch of image (or PDF) rows, one gate per actor.

    Each row holds its image as bytes (the column `bytes_column`, default `"bytes"`) or as a path
    (`path_column`, default `"path"`: a file inside `workspace`, the one directory the gate may
    read; every node must see it at that path). Adds `verdict_column` (default `"verdict"`): the
    JSON text `mediagate admit FILE --json` prints for that file. With `data_column` set, also
    that column: the admitted bytes (`None` for a refused row), as the gate wrote them: fitted,
    re-encoded, metadata dropped. The options are `Mediagate.admit_file`'s (`None`: the
    component's defaults); `wasm_path` and `cache_dir` as `Mediagate()` takes them."""

    def __init__(self, *, bytes_column: str = "bytes", path_column: str = "path", verdict_column: str = "verdict",
                 data_column: Optional[str] = None, workspace: Optional[str] = None,
                 wasm_path: Optional[str] = None, cache_dir: Any = None, downsample: Optional[bool] = None,
                 provider: Optional[str] = None, verify: Optional[str] = None,
                 keep_metadata: Optional[bool] = None, convert: bool = False):
        self.bytes_column = bytes_column
        self.path_column = path_column
        self.verdict_column = verdict_column
        self.data_column = data_column
        self.options = dict(downsample=downsample, provider=provider, verify=verify, keep_metadata=keep_metadata,
                            convert=convert, include_data=data_column is not None)
        # Paths are read through the workspace preopen only; bytes never need one, so a gate for
        # bytes gets an empty private directory rather than the actor's working directory.
        self._scratch = None
        if workspace is None:
            import tempfile

            self._scratch = tempfile.TemporaryDirectory(prefix="mediagate-ray-")
            workspace = self._scratch.name
        self.gate = Mediagate(wasm_path=wasm_path, workspace=workspace, vlm=False, cache_dir=cache_dir)

    def __call__(self, batch: Any) -> Any:
        columns = list(batch.columns) if hasattr(batch, "iloc") else list(batch)
        if self.bytes_column in columns:
            admit, values = self.gate.admit_bytes, batch[self.bytes_column]
        elif self.path_column in columns:
            admit, values = self.gate.admit_file, batch[self.path_column]
        else:
            raise KeyError(f"AdmitImages needs a {self.bytes_column!r} or a {self.path_column!r} column; the batch "
                           f"has {columns}")
        verdicts: List[str] = []
        data: List[Optional[bytes]] = []
        for value in list(values):
            verdict, admitted = self._admit_one(admit, value)
            verdicts.append(json.dumps(verdict, separators=(",", ":"), ensure_ascii=False))
            data.append(admitted)
        batch[self.verdict_column] = _column(verdicts, batch)
        if self.data_column is not None:
            batch[self.data_column] = _column(data, batch)
        return batch

    def _admit_one(self, admit: Any, value: Any) -> Tuple[Dict[str, Any], Optional[bytes]]:
        try:
            if _missing(value):
                raise ToolError("no-input", "error: the row has no image")
            if admit == self.gate.admit_file:
                value = os.fspath(value)
            else:
                value = bytes(value)
            verdict = admit(value, **self.options)
        except Exception as e:  # noqa: BLE001 - one row's fault is that row's verdict
            return _error_verdict(e), None
        encoded = verdict.pop("data", None)
        return verdict, (base64.b64decode(encoded) if encoded is not None and verdict.get("ok") else None)


class AdmitBatchLines:
    """Admits rows that are requests of a Batch API file (`api`: `"openai"` or `"anthropic"`), one
    gate per actor, as `admit_batch` does each line.

    `column` (default `"text"`, what `ray.data.read_text` gives) holds each request as text (or
    bytes); `number_column` (default `"number"`), when the dataset has it, its line number for the
    report (else 0). Adds `outcome` (`unchanged`, `changed`, `refused-blocks`, `refused`, or
    `error` when the call raised), `line` (the request as it goes out: the input itself when
    unchanged, the component's text when changed or with refused blocks, `None` when refused) and
    `report` (the component's report line, JSON text). The column names are the keyword
    arguments of the same names."""

    def __init__(self, *, api: str, column: str = "text", number_column: str = "number",
                 outcome_column: str = "outcome", line_column: str = "line", report_column: str = "report",
                 wasm_path: Optional[str] = None, cache_dir: Any = None, downsample: Optional[bool] = None,
                 provider: Optional[str] = None, verify: Optional[str] = None,
                 keep_metadata: Optional[bool] = None, convert: bool = False):
        import tempfile

        self.api = api
        self.column = column
        self.number_column = number_column
        self.out = (outcome_column, line_column, report_column)
        self.options = dict(downsample=downsample, provider=provider, verify=verify, keep_metadata=keep_metadata,
                            convert=convert)
        # A batch line names no file: the gate's preopen is an empty private directory.
        self._scratch = tempfile.TemporaryDirectory(prefix="mediagate-ray-")
        self.gate = Mediagate(wasm_path=wasm_path, workspace=self._scratch.name, vlm=False, cache_dir=cache_dir)
        self.gate._check("api", api)

    def __call__(self, batch: Any) -> Any:
        columns = list(batch.columns) if hasattr(batch, "iloc") else list(batch)
        requests = list(batch[self.column])
        numbers = list(batch[self.number_column]) if self.number_column in columns else [0] * len(requests)
        outcomes: List[str] = []
        lines: List[Optional[str]] = []
        reports: List[str] = []
        for request, number in zip(requests, numbers):
            outcome, line, report = self._admit_one(request, 0 if _missing(number) else int(number))
            outcomes.append(outcome)
            lines.append(line)
            reports.append(report)
        for name, values in zip(self.out, (outcomes, lines, reports)):
            batch[name] = _column(values, batch)
        return batch

    def _admit_one(self, request: Any, number: int) -> Tuple[str, Optional[str], str]:
        try:
            if _missing(request):
                raise ToolError("no-input", "error: the row has no request")
            raw = bytes(request) if isinstance(request, (bytes, bytearray, memoryview)) else None
            length = len(raw) if raw is not None else len(request.encode("utf-8"))
            if length > MAX_REQUEST_BYTES:
                return "refused", None, too_long_refusal(number, length)
            if raw is not None:
                try:
                    request = raw.decode("utf-8")
                except UnicodeDecodeError:
                    return "refused", None, not_utf8_refusal(number, length)
            admitted = self.gate.admit_batch_line(self.api, request, number, **self.options)
        except Exception as e:  # noqa: BLE001 - one row's fault is that row's outcome
            return "error", None, json.dumps({"number": number, **_error_verdict(e)}, separators=(",", ":"),
                                             ensure_ascii=False)
        line = request if admitted.outcome == "unchanged" else admitted.line
        return admitted.outcome, line, admitted.json
