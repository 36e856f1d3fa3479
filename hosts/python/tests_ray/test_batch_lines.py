"""AdmitBatchLines on the two-node cluster: the requests of a batch file as rows, each given the
outcome, the line that goes out and the report line that `admit_batch` (the CLI's contract, held to
the CLI byte for byte in tests/test_batch.py) gives the same request; a row with no request gets an
error outcome, and its batch goes on."""

from __future__ import annotations

import io
import json

from batch_files import openai_jsonl
from mediagate_host import Mediagate, admit_batch
from mediagate_host.ray import AdmitBatchLines


def test_request_rows_get_what_admit_batch_gives_each_line(cluster, wasm_path, tmp_path):
    ray = cluster
    data = openai_jsonl()
    lines = data.split(b"\n")
    rows = []
    for number, raw in enumerate(lines, 1):
        if number < len(lines) and raw.endswith(b"\r"):
            raw = raw[:-1]  # the "\r" of a "\r\n" break is the break's
        if raw.strip():
            rows.append({"number": number, "text": raw})
    rows.append({"number": 99, "text": None})

    judged = ray.data.from_items(rows).map_batches(
        AdmitBatchLines, fn_constructor_kwargs={"api": "openai", "wasm_path": wasm_path},
        compute=ray.data.ActorPoolStrategy(size=2), batch_size=3).take_all()
    by_number = {row["number"]: row for row in judged}
    assert sorted(by_number) == [row["number"] for row in rows]
    assert by_number[99]["outcome"] == "error" and by_number[99]["line"] is None
    assert json.loads(by_number[99]["report"])["number"] == 99

    gate = Mediagate(wasm_path=wasm_path, workspace=tmp_path, vlm=False)
    out, report = io.BytesIO(), io.BytesIO()
    admit_batch(gate, io.BytesIO(data), out, api="openai", report=report)
    reported = [json.loads(line) for line in report.getvalue().splitlines()[:-1]]
    assert {n: json.loads(by_number[n]["report"]) for n in by_number if by_number[n]["outcome"] not in
            ("unchanged", "error")} == {line["number"]: line for line in reported}
    written = [line.rstrip(b"\r") for line in out.getvalue().split(b"\n") if line.strip()]
    going = [by_number[n]["line"].encode() for n in sorted(by_number) if by_number[n]["line"] is not None]
    assert going == written
    outcomes = [by_number[n]["outcome"] for n in sorted(by_number)]
    assert outcomes.count("refused") == 1 and outcomes.count("refused-blocks") == 1
