"""The host's own duties: per-call stores, limits, traps, the compiled cache, gate options."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS, PY_HOST, SMALL_PNG, STANDARD_ANSWER, native_cli
from mediagate_host import facts
from mediagate_host import GuestTrap, Mediagate, MediagateError, OpenAICompatibleVlm, ToolError, host

BENCH = CORPUS / "bench"
PHOTO = CORPUS / "photos" / "kodim02.png"


def test_admit_file_errors_are_tool_errors(workspace):
    gate = Mediagate(workspace=workspace, vlm=False)
    with pytest.raises(ToolError) as e:
        gate.admit_file("missing.png")
    assert e.value.code == "not-found"
    with pytest.raises(ToolError) as e:
        gate.admit_file("../outside.png")
    assert e.value.code == "outside-workspace"
    with pytest.raises(ToolError) as e:
        gate.admit_file("sub")
    assert e.value.code == "not-a-file"


def test_admit_file_without_a_claimed_type_uses_the_bytes(workspace):
    gate = Mediagate(workspace=workspace, vlm=False)
    (workspace / "lies.jpg").write_bytes(SMALL_PNG.read_bytes())
    assert gate.admit_file("lies.jpg")["mime"] == "image/png"
    refused = gate.admit_file("lies.jpg", "image/jpeg")
    assert refused["ok"] is False and refused["reason"] == "magic_mismatch"
    doc = gate.admit_file("paper.pdf")
    assert doc["ok"] is True and doc["kind"] == "document" and "width" not in doc


def test_admit_file_can_return_the_admitted_bytes(workspace):
    v = Mediagate(workspace=workspace, vlm=False).admit_file("small.png", "image/png", include_data=True)
    assert base64.b64decode(v.pop("data")) == SMALL_PNG.read_bytes()
    assert v["base64_len"] == len(base64.b64encode(SMALL_PNG.read_bytes()))


def test_bad_arguments(workspace, tmp_path):
    gate = Mediagate(workspace=workspace, vlm=False)
    with pytest.raises(ValueError):
        gate.admit_file("small.png", provider="nobody")
    with pytest.raises(ValueError):
        gate.admit_file("small.png", verify="sometimes")
    with pytest.raises(MediagateError):
        Mediagate(workspace=tmp_path / "no-such-dir", vlm=False)
    with pytest.raises(MediagateError):
        Mediagate(wasm_path=tmp_path / "none.wasm", workspace=workspace, vlm=False)


@pytest.mark.parametrize("path", [PHOTO, BENCH / "photo-exif-rotated.jpg", BENCH / "screenshot-3456x2234.png"],
                         ids=lambda p: p.name)
@pytest.mark.parametrize("flags,kwargs", [
    (["--verify", "full"], {"verify": "full"}),
    (["--no-downsample"], {"downsample": False}),
    (["--profile", "openai"], {"provider": "openai"}),
    (["--profile", "gemini", "--verify", "full"], {"provider": "gemini", "verify": "full"}),
], ids=["full", "no-downsample", "openai", "gemini-full"])
def test_admit_options_match_the_cli(path, flags, kwargs):
    if "--verify" not in flags:
        flags = [*flags, "--verify", "full"]  # the Python host's default depth, said out loud to the CLI
    run = subprocess.run([str(native_cli()), "admit", str(path), "--json", *flags],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr
    gate = Mediagate(workspace=path.parent, vlm=False)
    assert gate.admit_file(path.name, **kwargs) == json.loads(run.stdout)


def test_a_trap_ends_only_that_call(workspace):
    shutil.copy(BENCH / "photo-12mp.jpg", workspace / "big.jpg")
    # 8 MiB: above the memory the component starts with (its data and stack, and the 2 MiB heap a
    # small call runs in), far below what decoding the 12 MP photo takes.
    small = Mediagate(workspace=workspace, vlm=False, memory_limit=8 << 20)
    with pytest.raises(GuestTrap) as e:
        small.admit_file("big.jpg", "image/jpeg")
    # wasmtime-py's limit makes the allocation fail, and the guest aborts: a trap, whose message
    # names both causes an abort can have (the component has no output to say which).
    assert e.value.kind == facts.KIND_TRAP
    assert f"out of memory (limit {8 << 20} bytes)" in str(e.value)
    # The same object, the next call: a fresh store.
    assert small.admit_file("small.png", "image/png")["ok"] is True


def test_the_cpu_deadline_interrupts_the_guest(workspace):
    shutil.copy(BENCH / "photo-12mp.jpg", workspace / "big.jpg")
    gate = Mediagate(workspace=workspace, vlm=False, cpu_deadline=0.05)
    with pytest.raises(GuestTrap) as e:
        gate.admit_file("big.jpg", "image/jpeg")
    assert e.value.kind == facts.KIND_DEADLINE
    assert gate.admit_file("small.png")["ok"] is True


def test_time_waiting_for_the_vlm_is_not_guest_time(workspace, vlm_server):
    vlm_server.pause = 0.1  # ~0.9 s of streaming, three times the CPU deadline
    vlm = OpenAICompatibleVlm(base_url=vlm_server.base_url, model="m", retries=0)
    gate = Mediagate(workspace=workspace, vlm=vlm, cpu_deadline=0.3)
    assert gate.read_image("small.png", "q") == STANDARD_ANSWER


def fresh_process_origin(workspace, cache) -> str:
    """Where a new process gets the compiled component from: `cache` or `compiled`."""
    code = ("import sys; sys.path.insert(0, %r); from mediagate_host import Mediagate; "
            "g = Mediagate(workspace=%r, vlm=False, cache_dir=%r); assert g.admit_file('small.png')['ok']; "
            "print(g.origin)") % (str(PY_HOST), str(workspace), str(cache))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_the_compiled_component_is_cached_on_disk(workspace, tmp_path, component_path):
    cache = tmp_path / "cache"
    assert fresh_process_origin(workspace, cache) == "compiled"
    files = list(cache.glob("*.cwasm"))
    assert len(files) == 1
    # Private: the directory 0700, the file 0600, both this user's.
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert files[0].stat().st_uid == os.geteuid()
    # A fresh process loads the cached file instead of compiling.
    assert fresh_process_origin(workspace, cache) == "cache"


def cached_file(workspace, cache) -> Path:
    assert fresh_process_origin(workspace, cache) == "compiled"
    (path,) = cache.glob("*.cwasm")
    return path


def test_a_cache_file_others_could_write_is_not_deserialised(workspace, tmp_path):
    cache = tmp_path / "cache"
    path = cached_file(workspace, cache)
    path.chmod(0o666)
    assert fresh_process_origin(workspace, cache) == "compiled"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, "replaced by a private copy"
    assert fresh_process_origin(workspace, cache) == "cache"


def test_a_cache_file_with_a_bad_digest_is_recompiled(workspace, tmp_path):
    cache = tmp_path / "cache"
    path = cached_file(workspace, cache)
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert fresh_process_origin(workspace, cache) == "compiled"
    assert fresh_process_origin(workspace, cache) == "cache"


def test_a_symlinked_cache_file_is_not_followed(workspace, tmp_path):
    cache = tmp_path / "cache"
    path = cached_file(workspace, cache)
    elsewhere = tmp_path / "elsewhere.cwasm"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    assert fresh_process_origin(workspace, cache) == "compiled"
    assert not path.is_symlink()


def test_a_readable_cache_directory_is_made_private_and_a_shared_one_is_not_used(workspace, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o755)
    assert fresh_process_origin(workspace, cache) == "compiled"
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert fresh_process_origin(workspace, shared) == "compiled"
    assert list(shared.iterdir()) == [], "nothing written where others can write"


def test_a_cache_file_this_cache_did_not_write_is_not_deserialised(workspace, tmp_path):
    """A digest is not a MAC: the user's own file with a valid digest but mode 0644 (a checkout, an
    unpacked archive), a second link to a file, or a cache below a directory others could swap is
    not read."""
    cache = tmp_path / "cache"
    path = cached_file(workspace, cache)
    path.chmod(0o644)
    assert fresh_process_origin(workspace, cache) == "compiled"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, "replaced by a private copy"
    os.link(path, tmp_path / "second-name.cwasm")
    assert fresh_process_origin(workspace, cache) == "compiled"
    tmp_path.chmod(0o777)
    try:
        assert fresh_process_origin(workspace, cache) == "compiled"
    finally:
        tmp_path.chmod(0o700)
    assert fresh_process_origin(workspace, cache) == "cache"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_cache_files_and_directories_of_another_user_are_not_used(workspace, tmp_path):
    cache = tmp_path / "cache"
    path = cached_file(workspace, cache)
    os.chown(path, 65534, 65534)
    assert fresh_process_origin(workspace, cache) == "compiled"  # and replaced by this user's copy
    assert path.stat().st_uid == os.geteuid()

    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    assert fresh_process_origin(workspace, theirs) == "compiled"
    assert list(theirs.iterdir()) == [], "nothing written into another user's directory"
    assert fresh_process_origin(workspace, theirs) == "compiled"


def test_the_wasm_path_comes_from_the_environment(workspace, monkeypatch, component_path, tmp_path):
    copy = tmp_path / "copy.wasm"
    shutil.copy(component_path, copy)
    monkeypatch.setenv(facts.ENV_AGENT_TOOL_WASM, str(copy))
    gate = Mediagate(workspace=workspace, vlm=False)
    assert gate.wasm_path == copy
    assert gate.admit_file("small.png")["ok"] is True


def test_why_next_chunk_results_need_explicit_markers(workspace):
    """wasmtime-py alone cannot lower an error for `result<option<chunk>, vlm-error>`: the `ok`
    case (an option, which accepts any object as `none`/`some`) claims every value. If this
    test fails, wasmtime-py has fixed that and `_wit` may go."""
    import ctypes

    from wasmtime import _ffi as ffi
    from wasmtime.component import Variant

    from mediagate_host import _wit

    gate = Mediagate(workspace=workspace, vlm=False)
    vlm_iface = gate.component.type.imports(gate.engine)[host.VLM_IFACE].ty
    result_ty = vlm_iface.exports(gate.engine)["[method]reply.next-chunk"].ty.result
    error = Variant("timed-out", "no data")

    space = ffi.wasmtime_component_val_t()
    with pytest.raises(ValueError):
        _wit.original_convert_to_c(result_ty, None, error, ctypes.pointer(space))

    space = ffi.wasmtime_component_val_t()
    result_ty.convert_to_c(None, _wit.Err(error), ctypes.pointer(space))
    assert space.kind == ffi.WASMTIME_COMPONENT_RESULT.value and not space.of.result.is_ok
    ffi.wasmtime_component_val_delete(ctypes.byref(space))

    # Values without a marker still go through wasmtime-py's own lowering.
    space = ffi.wasmtime_component_val_t()
    result_ty.convert_to_c(None, None, ctypes.pointer(space))
    assert space.kind == ffi.WASMTIME_COMPONENT_RESULT.value and space.of.result.is_ok
    ffi.wasmtime_component_val_delete(ctypes.byref(space))


def test_calls_from_several_threads(workspace, vlm_server):
    """One `Mediagate`, calls on four threads at once: each call has its own store and state."""
    from concurrent.futures import ThreadPoolExecutor

    vlm = OpenAICompatibleVlm(base_url=vlm_server.base_url, model="m", retries=0)
    seen = {}

    def on_output(kind, text):
        import threading

        seen.setdefault(threading.get_ident(), []).append(text)

    gate = Mediagate(workspace=workspace, vlm=vlm, on_output=on_output)
    shutil.copy(PHOTO, workspace / "photo.png")

    def job(i):
        if i % 2:
            return gate.read_image("small.png", f"question {i}")
        return gate.admit_file("photo.png", "image/png")["base64_len"]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(job, range(8)))
    assert results[1::2] == [STANDARD_ANSWER] * 4
    assert len(set(results[0::2])) == 1
    assert sorted(r["body"]["messages"][0]["content"][0]["text"] for r in vlm_server.requests) == \
        [f"question {i}" for i in (1, 3, 5, 7)]
    for texts in seen.values():
        assert "".join(texts).count(STANDARD_ANSWER) >= 1


def test_the_read_only_preopen_refuses_writes(tmp_path):
    """The host preopens the workspace with `fs_mutable=False`. The component cannot try to write
    (it only opens files for reading), so the flag is checked with a WASI module asking to
    create a file through the same `WasiConfig` call: refused with EPERM, nothing created."""
    import wasmtime

    wat = """
    (module
      (import "wasi_snapshot_preview1" "path_open"
        (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 16) "new.txt")
      (func (export "create") (result i32)
        (call $path_open (i32.const 3) (i32.const 0) (i32.const 16) (i32.const 7)
                         (i32.const 1) (i64.const 0x1fffffff) (i64.const 0x1fffffff)
                         (i32.const 0) (i32.const 100))))
    """
    results = {}
    for mutable in (True, False):
        d = tmp_path / f"mutable-{mutable}"
        d.mkdir()
        engine = wasmtime.Engine()
        store = wasmtime.Store(engine)
        wasi = wasmtime.WasiConfig()
        wasi.preopen_dir(str(d), str(d), fs_mutable=mutable)
        store.set_wasi(wasi)
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        instance = linker.instantiate(store, wasmtime.Module(engine, wat))
        results[mutable] = (instance.exports(store)["create"](store), (d / "new.txt").exists())
    assert results[True] == (0, True)
    assert results[False] == (63, False)  # 63: EPERM


# ---- what a component may reach, and what one call may cost -------------------------------------


def test_a_component_importing_more_than_the_world_is_refused(tmp_path, workspace):
    """wasmtime-py links WASI p2 only whole; a component that imports what the agent-tool world
    does not (the environment, here) is refused at load, in words, before any call."""
    import wasmtime

    wasm = tmp_path / "greedy.wasm"
    wasm.write_bytes(wasmtime.wat2wasm('(component (import "wasi:cli/environment@0.2.12" (instance)))'))
    with pytest.raises(MediagateError) as e:
        Mediagate(wasm_path=wasm, workspace=workspace, vlm=False, cache_dir=False)
    assert "wasi:cli/environment@0.2.12" in str(e.value) and "does not" in str(e.value)


def test_the_shipped_component_imports_only_what_the_world_declares(workspace):
    from mediagate_host.host import WORLD_IMPORTS

    gate = Mediagate(workspace=workspace, vlm=False)
    assert set(gate.component.type.imports(gate.engine)) <= WORLD_IMPORTS


def test_every_trap_kind_is_one_the_readme_lists():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    faults = readme.split("### Faults and limits", 1)[1].strip().split("\n\n", 1)[0]
    for kind in GuestTrap.KINDS:
        assert f"`{kind}`" in faults, kind
    with pytest.raises(ValueError):
        GuestTrap("x", kind="memory")


def _in_a_call(vlm, on_output=None):
    """The host imports run inside a call's state; this makes one without the component."""
    import wasmtime

    from mediagate_host import host

    store = wasmtime.Store(host.shared_engine())
    call = host._Call(store=store, vlm=vlm, on_output=on_output, cpu_deadline=20.0, wall_deadline=60.0)
    host._current.call = call
    return call


def test_a_call_asks_the_vision_model_once(vlm_server):
    from types import SimpleNamespace

    from mediagate_host import host

    vlm = OpenAICompatibleVlm(base_url=vlm_server.base_url, model="m", retries=0)
    call = _in_a_call(vlm)
    try:
        image = SimpleNamespace(mime="image/png", data="AAAA")
        first = host._ask(None, "p", image)
        assert not isinstance(first, host.wc.Variant)
        second = host._ask(None, "p", image)
        assert second.tag == "unreachable" and "nothing was sent" in second.payload
        assert len(vlm_server.requests) == 1
    finally:
        call.close()
        host._current.call = None


def test_guest_output_is_capped_per_kind():
    from mediagate_host import host

    seen = {"content": 0, "reasoning": 0}

    def on_output(kind, text):
        seen[kind] += len(text)

    call = _in_a_call(None, on_output)
    try:
        for _ in range(3):
            host._write(None, "content", "é" * 100_000)
        host._write(None, "reasoning", "think")
    finally:
        call.close()
        host._current.call = None
    assert seen == {"content": host.OUTPUT_CAP_CHARS, "reasoning": 5}


def test_calls_past_the_memory_budget_wait_their_turn(tmp_path):
    shutil.copy(BENCH / "photo-12mp.jpg", tmp_path / "photo.jpg")
    with pytest.raises(ValueError, match="less than one call's memory_limit"):
        Mediagate(workspace=tmp_path, vlm=False, memory_budget=facts.MEMORY_LIMIT_BYTES - 1)
    assert Mediagate(workspace=tmp_path, vlm=False).calls_at_once == facts.MEMORY_BUDGET_BYTES // facts.MEMORY_LIMIT_BYTES
    gate = Mediagate(workspace=tmp_path, vlm=False, memory_budget=2 * facts.MEMORY_LIMIT_BYTES)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8) as pool:
        verdicts = list(pool.map(lambda _: gate.admit_file("photo.jpg", "image/jpeg"), range(8)))
    assert all(v["ok"] and v["resized"] for v in verdicts)
    assert gate.peak_calls == 2, "two ran at once, the rest waited"
