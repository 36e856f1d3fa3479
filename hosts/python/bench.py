"""Medians of what a Python agent pays for mediagate: compiling/loading, a fresh instance per
call, and `admit_file` on the corpus photos.

    python bench.py [--runs N] [--list-u8]
    python bench.py --concurrent N [--budget-mib M]

`--concurrent N` admits the 12 MP JPEG from N threads at once under the memory budget (default
the host's, `--budget-mib` another) and prints the calls that ran at once and the process's peak
RSS, then exits.

`--list-u8` also times `admission.admit` with the bytes passed as `list<u8>` (one run):
the reason the host uses the path-based `workspace-admission.admit-file`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

import wasmtime
from wasmtime import component as wc

import httpx

from mediagate_host import Mediagate, host

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpus"
PHOTO = CORPUS / "photos" / "kodim02.png"          # 617,995 bytes, 768x512: admitted unchanged
BIG = CORPUS / "bench" / "photo-12mp.jpg"          # 4000x3000 JPEG: downsampled to 2000x1500


def median_ms(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--list-u8", action="store_true")
    ap.add_argument("--concurrent", type=int, default=0)
    ap.add_argument("--budget-mib", type=int, default=None)
    args = ap.parse_args()
    runs = args.runs
    if args.concurrent:
        return concurrent(args.concurrent, args.budget_mib)

    print(f"wasmtime-py {host._wasmtime_version()}, httpx {httpx.__version__}, Python {sys.version.split()[0]}")
    wasm = host.default_wasm_path()
    print(f"component {wasm} ({wasm.stat().st_size} bytes)")

    with tempfile.TemporaryDirectory() as cache:
        t = time.perf_counter()
        Mediagate(workspace=PHOTO.parent, vlm=False, cache_dir=cache)
        compile_ms = (time.perf_counter() - t) * 1000
        host._components.clear()
        t = time.perf_counter()
        gate = Mediagate(workspace=PHOTO.parent, vlm=False, cache_dir=cache)
        cached_ms = (time.perf_counter() - t) * 1000
    print(f"Mediagate(): compile {compile_ms:.0f} ms (once); from the disk cache {cached_ms:.1f} ms")

    def instantiate() -> None:
        store = wasmtime.Store(gate.engine)
        store.set_limits(memory_size=gate.memory_limit)
        store.set_epoch_deadline(1000)
        wasi = wasmtime.WasiConfig()
        wasi.preopen_dir(gate.workspace, gate.workspace, fs_mutable=False)
        store.set_wasi(wasi)
        gate.linker.instantiate(store, gate.component)
        store.close()

    instantiate()
    print(f"new Store + WASI preopen + instantiate: median {median_ms(instantiate, runs):.2f} ms")
    print(f"tool_definition() (fresh instance + trivial call): median "
          f"{median_ms(gate.tool_definition, runs):.2f} ms")

    size = PHOTO.stat().st_size
    for verify in ("header", "full"):
        ms = median_ms(lambda: gate.admit_file(PHOTO.name, "image/png", verify=verify), runs)
        print(f"admit_file {PHOTO.name} ({size} bytes, passed through), verify={verify}: median {ms:.2f} ms")
    data = PHOTO.read_bytes()
    ms = median_ms(lambda: gate.admit_bytes(data, "image/png"), runs)
    print(f"admit_bytes, the same {size} bytes (private temporary file), verify=full: median {ms:.2f} ms")

    if BIG.is_file():
        big = Mediagate(workspace=BIG.parent, vlm=False)
        ms = median_ms(lambda: big.admit_file(BIG.name, "image/jpeg"), max(3, runs // 6))
        print(f"admit_file {BIG.name} ({BIG.stat().st_size} bytes, 4000x3000 -> 2000x1500): median {ms:.0f} ms")

    if args.list_u8:
        data = PHOTO.read_bytes()
        store = wasmtime.Store(gate.engine)
        store.set_epoch_deadline(1 << 40)
        store.set_wasi(wasmtime.WasiConfig())
        host._current.call = host._Call(store=store, vlm=gate.vlm, on_output=None, cpu_deadline=1e9,
                                        wall_deadline=1e9)
        instance = gate.linker.instantiate(store, gate.component)
        func = instance.get_func(store, gate.component.get_export_index(
            "admit", gate.component.get_export_index(host.ADMISSION_IFACE)))
        media = wc.Record()
        media.bytes, media.name, media.convert, media.page = data, None, False, None
        setattr(media, "claimed-mime", "image/png")
        options = wc.Record()
        options.downsample, options.provider, options.verify = True, "anthropic", "header"
        setattr(options, "keep-metadata", None)
        t = time.perf_counter()
        func(store, media, options)
        print(f"admission.admit with {size} bytes as list<u8>: {(time.perf_counter() - t) * 1000:.0f} ms (1 run)")
        host._current.call = None
    return 0


def peak_rss_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def concurrent(n: int, budget_mib: Optional[int]) -> int:
    from concurrent.futures import ThreadPoolExecutor

    options = {} if budget_mib is None else {"memory_budget": budget_mib << 20}
    gate = Mediagate(workspace=BIG.parent, vlm=False, **options)
    gate.admit_file(BIG.name, "image/jpeg")
    before = peak_rss_mib()
    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n) as pool:
        verdicts = list(pool.map(lambda _: gate.admit_file(BIG.name, "image/jpeg"), range(n)))
    seconds = time.perf_counter() - t
    assert all(v["ok"] and v["resized"] for v in verdicts), verdicts
    budget = gate.calls_at_once * gate.memory_limit >> 20
    print(f"{n} concurrent admit_file {BIG.name}: budget {budget} MiB ({gate.calls_at_once} calls at once), "
          f"peak calls at once {gate.peak_calls}, peak RSS {before:.0f} MiB after one call -> "
          f"{peak_rss_mib():.0f} MiB, {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
