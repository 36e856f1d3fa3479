"""AdmitImages on the two-node cluster: about 200 images (PNG, JPEG, two to fit, SVGs named .png,
cut files, one missing) admitted by an actor pool of two, one per node; one actor's process is
killed mid-job with SIGKILL. The job finishes, every row has exactly one verdict, and each verdict
is the one `mediagate admit FILE --json` prints (the admitted bytes, what `--out` writes)."""

from __future__ import annotations

import concurrent.futures
import io
import json
import os
import signal
import subprocess
import time
from pathlib import Path

from PIL import Image

from conftest import native_cli
from images import SVG, png
from mediagate_host.ray import AdmitImages
from ray_helpers import AdmitImagesTellingItsProcess


def jpeg(width: int, height: int, seed: int) -> bytes:
    image = Image.linear_gradient("L").resize((width, height)).convert("RGB")
    image = Image.merge("RGB", (image.getchannel(0), image.getchannel(1).point(lambda v: (v + seed * 37) % 256),
                                image.getchannel(2).rotate(90).resize((width, height))))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=80)
    return out.getvalue()


def make_images(directory: Path) -> list:
    """(name, bytes) for 199 files, and one name that is never written."""
    files = []
    for i in range(110):
        files.append((f"png-{i:03}.png", png(8 + i % 50, 6 + (i * 7) % 40, (i * 5 % 256, 90, 255 - i % 256))))
    for i in range(72):
        files.append((f"jpeg-{i:03}.jpg", jpeg(16 + i % 40, 12 + (i * 3) % 30, i)))
    files.append(("wide.png", png(2600, 60, (10, 200, 90))))  # fitted into 2000 px
    files.append(("big.jpg", jpeg(2400, 1300, 7)))  # fitted into 2000 px
    for i in range(8):
        files.append((f"svg-as-{i}.png", SVG))  # refused: magic_mismatch
    for i in range(4):
        whole = png(40 + i, 30, (i * 60, 20, 20))
        files.append((f"cut-{i}.png", whole[:len(whole) // 2]))
    for i in range(3):
        whole = jpeg(64, 48, 100 + i)
        files.append((f"cut-{i}.jpg", whole[:len(whole) * 2 // 3]))
    directory.mkdir()
    for name, data in files:
        (directory / name).write_bytes(data)
    return [directory / name for name, _ in files] + [directory / "never-written.png"]


def without_cli_hint(verdict: dict) -> dict:
    """The CLI's `--json` verdict without the two keys it puts in front for a person, `convertible`
    and `hint` (what `--convert` would do): the host's verdict is the component's JSON alone."""
    return {k: v for k, v in verdict.items() if k not in ("convertible", "hint")}


def cli_verdict(cli: Path, path: Path, out: Path = None):
    args = [str(cli), "admit", str(path), "--json", "--verify", "full"]
    if out is not None:
        args += ["--out", str(out)]
    run = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), f"{path}: exit {run.returncode}: {run.stderr}"
    return without_cli_hint(json.loads(run.stdout))


def process_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_killed_actor_costs_no_row_and_every_verdict_is_the_clis(cluster, wasm_path, tmp_path):
    ray = cluster
    cli = native_cli()
    paths = make_images(tmp_path / "images")
    assert len(paths) == 200
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()

    dataset = ray.data.from_items([{"id": i, "path": str(p)} for i, p in enumerate(paths)], override_num_blocks=50)
    admitted = dataset.map_batches(
        AdmitImagesTellingItsProcess,
        fn_constructor_kwargs={"pid_dir": str(pid_dir), "workspace": str(tmp_path / "images"),
                               "data_column": "admitted", "wasm_path": wasm_path},
        compute=ray.data.ActorPoolStrategy(size=2),
        batch_size=4,
        # Ray Data's own defaults for an actor pool, said here: an actor that dies is made again and
        # the batches it held are run again.
        max_restarts=-1,
        max_task_retries=-1,
    )
    rows = []
    killed = None
    started = time.monotonic()
    for batch in admitted.iter_batches(batch_size=None, batch_format="numpy"):
        rows.extend(zip(batch["id"].tolist(), batch["path"].tolist(), batch["verdict"].tolist(),
                        list(batch["admitted"])))
        if killed is None and len(rows) >= 24:
            actors = [int(p.name) for p in pid_dir.iterdir() if process_alive(int(p.name))]
            assert actors, "no actor process is running"
            victim = actors[0]
            os.kill(victim, signal.SIGKILL)
            killed = (victim, len(rows))
    took = time.monotonic() - started

    assert killed is not None and killed[1] < 200, f"the job ended before an actor could be killed ({killed})"
    assert not process_alive(killed[0])
    ids = sorted(row[0] for row in rows)
    assert ids == list(range(200)), "every row exactly once"
    nodes = {p.read_text() for p in pid_dir.iterdir()}
    assert len(nodes) == 2, f"the actors ran on {len(nodes)} node(s): {nodes}"
    print(f"\n200 rows in {took:.1f} s; killed pid {killed[0]} after {killed[1]} rows; "
          f"{len(list(pid_dir.iterdir()))} actor processes in all")

    # A batch whose cells are all null comes back as NaN: none is bytes.
    by_path = {Path(path): (json.loads(verdict), data if isinstance(data, bytes) else None)
               for _, path, verdict, data in rows}
    missing = by_path.pop(tmp_path / "images" / "never-written.png")
    assert missing == ({"ok": False, "error": {"type": "ToolError", "code": "not-found",
                                               "message": missing[0]["error"]["message"]}}, None)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        expected = dict(zip(by_path, pool.map(lambda p: cli_verdict(cli, p), by_path)))
    mismatched = [str(p) for p in by_path if by_path[p][0] != expected[p]]
    assert not mismatched, f"{len(mismatched)} verdicts differ from the CLI's, e.g. {mismatched[:3]}"
    refused = [p.name for p in by_path if not expected[p]["ok"]]
    assert {f"svg-as-{i}.png" for i in range(8)} <= set(refused)
    assert all(by_path[p][1] is None for p in by_path if not expected[p]["ok"])
    for name in ("wide.png", "big.jpg"):
        assert expected[tmp_path / "images" / name]["resized"] is True

    # The admitted bytes are the ones `--out` writes: fitted, re-encoded, as the gate wrote them.
    for name in ("wide.png", "big.jpg", "png-007.png", "jpeg-011.jpg", "cut-0.png"):
        path = tmp_path / "images" / name
        out = tmp_path / f"cli-{name}"
        if cli_verdict(cli, path, out)["ok"]:
            assert by_path[path][1] == out.read_bytes(), name


def test_rows_of_bytes_are_judged_as_stdin_is(cluster, wasm_path, tmp_path):
    """Bytes have no name: the verdict of `mediagate admit -`; a row with no bytes gets an error."""
    ray = cluster
    cli = native_cli()
    samples = [png(30, 20, (1, 2, 3)), jpeg(40, 30, 3), SVG, png(2100, 10, (9, 9, 9))]
    dataset = ray.data.from_items([{"i": i, "bytes": data} for i, data in enumerate(samples + [None])])
    got = dataset.map_batches(AdmitImages, fn_constructor_kwargs={"wasm_path": wasm_path},
                              compute=ray.data.ActorPoolStrategy(size=2), batch_size=2).take_all()
    verdicts = {row["i"]: json.loads(row["verdict"]) for row in got}
    for i, data in enumerate(samples):
        run = subprocess.run([str(cli), "admit", "-", "--json", "--verify", "full"], input=data, capture_output=True,
                             timeout=120)
        assert run.returncode in (0, 1), run.stderr
        assert verdicts[i] == without_cli_hint(json.loads(run.stdout)), i
    assert verdicts[len(samples)] == {"ok": False, "error": {"type": "ToolError", "code": "no-input",
                                                             "message": "error: the row has no image"}}
