"""Loading the mediagate `agent-tool` component with wasmtime-py and calling it.

One `Engine` per process (epoch interruption on, a ticker thread), the component compiled once per
`Mediagate` (and cached on disk), one `Linker` per `Mediagate` carrying WASI p2 and the
`mediagate:gate/vlm` and `mediagate:gate/output` imports defined in Python. Each call gets a fresh
`Store` and instance: a memory limit, a CPU deadline, and a WASI context with nothing but the
workspace as one read-only preopen. The component imports only that preopen (with the filesystem
types it uses), the VLM and the output sink: no stdio, no environment, no random source.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import stat
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple, Union

import wasmtime
from wasmtime import component as wc

from . import _wit, facts
from .vlm import NoVlm, Reply, Vlm, VlmConfigError, VlmError, vlm_from_env

_wit.install()

#: The package's logger: the compiled cache's faults, a compile's start and end (`compile_message`).
log = logging.getLogger("mediagate_host")

ENV_WASM = facts.ENV_AGENT_TOOL_WASM
ENV_CACHE_DIR = facts.ENV_CACHE_DIR

#: The contract this host speaks (wit/): its entries answer the verdict's JSON, written once in the
#: guest, which this host parses and returns as it is.
CONTRACT = "0.3.0"
VLM_IFACE = f"mediagate:gate/vlm@{CONTRACT}"
OUTPUT_IFACE = f"mediagate:gate/output@{CONTRACT}"
TOOL_IFACE = f"mediagate:gate/tool@{CONTRACT}"
WORKSPACE_IFACE = f"mediagate:gate/workspace-admission@{CONTRACT}"
ADMISSION_IFACE = f"mediagate:gate/admission@{CONTRACT}"

#: The component's file name, inside this package (wheel) and in `target/guest/` (a clone).
COMPONENT_FILE = "mediagate-agent-tool.wasm"

#: What the `agent-tool` world imports (wit/worlds.wit): the preopen and the WASI interfaces its
#: types use, the VLM and the output sink. wasmtime-py 50 links WASI p2 only whole
#: (`Linker.add_wasip2`), so a component that imports anything else (sockets, environment, stdio,
#: random…) is refused when it is loaded: the host never lets a component reach the rest.
WORLD_IMPORTS = frozenset({
    "wasi:filesystem/preopens@0.2.12",
    "wasi:filesystem/types@0.2.12",
    "wasi:clocks/wall-clock@0.2.12",
    "wasi:io/error@0.2.12",
    "wasi:io/poll@0.2.12",
    "wasi:io/streams@0.2.12",
    VLM_IFACE,
    OUTPUT_IFACE,
})

#: Characters of each kind (`content`, `reasoning`) one call passes to `on_output` (the Rust
#: host's `SINK_CAP_CHARS`): the guest stops at 199,900 characters and a marker; this bounds a
#: guest that does not, whose writes past it are dropped.
OUTPUT_CAP_CHARS = 200_000 + 4_096

#: `vlm.ask` calls one tool call may make (the Rust host's `ASKS_PER_CALL`): a guest that asks
#: again gets an `unreachable` error in words and nothing is sent.
ASKS_PER_CALL = 1

#: The host-defined resource type id of `vlm.reply`.
_REPLY_TYPE = 0x4D47_0001

#: About how many characters of text already received go to the guest with one chunk.
READY_TEXT_CHARS = 64 * 1024

#: How often the shared engine's epoch advances (the granularity of the CPU deadline).
EPOCH_TICK_S = 0.01

OutputCallback = Callable[[str, str], None]

#: The batch entries of `admission` (spec: a Batch API file, one request at a time).
BATCH_EXPORTS = ("admit-batch-line", "check-batch-file")


class BatchLineAdmission(NamedTuple):
    """What became of one request of a batch file (`admission.admit-batch-line`).

    `outcome`: `"unchanged"`, `"changed"`, `"refused-blocks"` or `"refused"`; `custom_id`: the
    request's, when it has one; `line`: the request as it goes out (spliced as text), `None` when
    unchanged (the input goes out) or refused (nothing does); `json`: the report line, exactly as the
    component wrote it (a batch writer copies it byte for byte)."""

    outcome: str
    custom_id: Optional[str]
    line: Optional[str]
    json: str

    def report(self) -> Dict[str, Any]:
        """The report line, parsed."""
        return _parsed(self.json, "admit-batch-line")


class MediagateError(Exception):
    """A host-side fault: the component could not be loaded or a call could not be made."""


class GuestTrap(MediagateError):
    """The guest trapped (a panic, out of memory, the CPU deadline) or the call was stopped at its
    wall-clock deadline. Only that call ended.

    `kind` is one of `KINDS`, the Rust host's words: `deadline` (CPU), `wall_deadline` or `trap`
    (a fault in the guest: also a guest that aborted, a panic or an allocation past the memory
    limit — the component has no output to say which, and wasmtime-py's limit fails the allocation
    rather than trapping, so `out_of_memory` is never told apart here); `detail` is wasmtime's full
    report (with the wasm backtrace)."""

    #: Every kind a call error has in any host (facts.py); this host answers all but
    #: `out_of_memory` and `host`.
    KINDS = facts.CALL_ERROR_KINDS

    def __init__(self, message: str, kind: str = facts.KIND_TRAP, detail: str = ""):
        if kind not in self.KINDS:
            raise ValueError(f"unknown trap kind {kind!r}")
        self.kind = kind
        self.detail = detail
        super().__init__(message)

    @classmethod
    def from_error(cls, func: str, error: Exception, gate: Any, wall_expired: bool = False) -> "GuestTrap":
        detail = str(error)
        if wall_expired:
            return cls(f"the call to {func} took longer than its wall-clock deadline of {gate.wall_deadline:g} s "
                       "and was stopped", kind=facts.KIND_WALL_DEADLINE, detail=detail)
        cause = detail.rsplit("Caused by:", 1)[-1].strip().splitlines()[0] if "Caused by:" in detail \
            else detail.strip().splitlines()[0] if detail.strip() else type(error).__name__
        if "interrupt" in cause:
            kind, what = facts.KIND_DEADLINE, f"the CPU deadline ({gate.cpu_deadline:g} s of guest time) was exceeded"
        elif "unreachable" in cause:
            # Rust's abort: a panic, or an allocation the memory limit refused (wasmtime-py's limit
            # makes `memory.grow` fail rather than trap). The component imports nothing to print with.
            kind, what = facts.KIND_TRAP, (f"it aborted ({cause}): a panic, or out of memory "
                                   f"(limit {gate.memory_limit} bytes)")
        else:
            kind, what = facts.KIND_TRAP, cause
        return cls(f"the mediagate component trapped in {func}: {what}", kind=kind, detail=detail)


class ToolError(Exception):
    """A `tool-error` from the component: `code` (e.g. `not-found`, `no-vlm`) and `message`
    (starts with `error:`, words a model can act on)."""

    def __init__(self, code: str, message: str):
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


# --------------------------------------------------------------------------------------------
# Engine, epoch ticker, compiled-component cache


_engine_lock = threading.Lock()
_engine: Optional[wasmtime.Engine] = None


def shared_engine() -> wasmtime.Engine:
    """The process's one `Engine`: epoch interruption on, advanced by a daemon thread."""
    global _engine
    with _engine_lock:
        if _engine is None:
            config = wasmtime.Config()
            config.epoch_interruption = True
            config.max_wasm_stack = 1 << 20
            _engine = wasmtime.Engine(config)
            _start_ticker(_engine)
        return _engine


def _start_ticker(engine: wasmtime.Engine) -> None:
    ref = weakref.ref(engine)

    def tick() -> None:
        while True:
            time.sleep(EPOCH_TICK_S)
            e = ref()
            if e is None:
                return
            e.increment_epoch()
            del e

    threading.Thread(target=tick, name="mediagate-epoch", daemon=True).start()


def packaged_wasm_path() -> Optional[Path]:
    """The component shipped inside this package (an installed wheel), if there is one."""
    try:
        from importlib.resources import files

        resource = files(__package__) / COMPONENT_FILE
        if resource.is_file():
            return Path(str(resource))
    except (ImportError, OSError, TypeError):  # pragma: no cover - unusual importers
        pass
    return None


def default_wasm_path() -> Path:
    """`$ENV_WASM`, else the component inside the installed package, else
    `target/guest/mediagate-agent-tool.wasm` of the repository this package sits in (a clone)."""
    env = os.environ.get(ENV_WASM)
    if env:
        return Path(env)
    packaged = packaged_wasm_path()
    if packaged is not None:
        return packaged
    repo = Path(__file__).resolve().parents[3]
    return repo / "target" / "guest" / COMPONENT_FILE


def default_cache_dir() -> Optional[Path]:
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mediagate" / "wasmtime-py"


_components_lock = threading.Lock()
_components: "weakref.WeakValueDictionary[str, wc.Component]" = weakref.WeakValueDictionary()

#: A cache file: this magic, the SHA-256 of the body, the body (`Component.serialize()`).
_CACHE_MAGIC = b"MGPYCWASM1"


def _wasmtime_version() -> str:
    try:
        from importlib.metadata import version

        return version("wasmtime")
    except Exception:  # pragma: no cover
        return "unknown"


#: Said before a compile, so that a first call that stalls for seconds says why. The figure is the
#: agent-tool component's compile on a 2-core machine (wasmtime-py 50).
COMPILE_MESSAGE = "compiling the mediagate component (first use; about 20 s on 2 cores) …"


def cache_key(wasm: bytes) -> str:
    """The compiled cache's key for `wasm`: its content, the wasmtime version and the engine settings."""
    return hashlib.sha256(wasm + f"|wasmtime-py {_wasmtime_version()}|epoch|stack1M".encode()).hexdigest()


def cache_file(wasm: bytes, cache_dir: Path) -> Path:
    """Where the compiled form of `wasm` is kept in `cache_dir`."""
    return Path(cache_dir) / f"{cache_key(wasm)}.cwasm"


def load_component(engine: wasmtime.Engine, wasm: bytes, cache_dir: Optional[Path]) -> wc.Component:
    """Compile `wasm`, or reuse it (see `load_component_with_origin`)."""
    return load_component_with_origin(engine, wasm, cache_dir)[0]


def load_component_with_origin(engine: wasmtime.Engine, wasm: bytes,
                               cache_dir: Optional[Path]) -> "tuple[wc.Component, str]":
    """Compile `wasm`, or reuse it: in this process by content (origin `"memory"`), across
    processes from `cache_dir` (`"cache"`; keyed by the content, the wasmtime version and the engine
    settings), else compile it (`"compiled"`).

    A compiled file is native code that `deserialize` trusts, so only a file this user wrote is
    read: the directory must be a real directory owned by the user (it is made, or set, mode 0700;
    one owned by anyone else is not used at all), and the file a regular file (no symlink) owned
    by the user with no access for group or others, whose SHA-256 matches. Files are created
    exclusively (`O_EXCL`, mode 0600) and renamed into place. Anything else is recompiled."""
    key = cache_key(wasm)
    name = f"{key}.cwasm"
    with _components_lock:
        component = _components.get(key)
        if component is not None:
            return component, "memory"
        dir_fd = _open_cache_dir(cache_dir) if cache_dir is not None else None
        try:
            origin = "compiled"
            if dir_fd is not None:
                component = _read_cache(engine, dir_fd, name, cache_dir)
                origin = "cache" if component is not None else origin
            if component is None:
                # WARNING, not INFO: with no logging set up, Python's last-resort handler prints
                # WARNING and above, and a silent stall of many seconds looks like a hang.
                log.warning(COMPILE_MESSAGE)
                started = time.monotonic()
                component = wc.Component(engine, wasm)
                took = time.monotonic() - started
                if dir_fd is not None:
                    _write_cache(dir_fd, name, component, cache_dir)
                log.warning("compiled the mediagate component in %.1f s", took)
        finally:
            if dir_fd is not None:
                os.close(dir_fd)
        _components[key] = component
        return component, origin


def _open_cache_dir(path: Path) -> Optional[int]:
    """A descriptor of the cache directory, if it is safe to use; `None` (and a warning) if not."""
    if os.name != "posix" or os.open not in os.supports_dir_fd:
        # Ownership and mode cannot be checked the same way: compile in memory instead.
        log.info("no compiled cache on this platform (%s)", os.name)
        return None
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        log.warning("not using the compiled cache %s: %s", path, e)
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid():
            log.warning("not using the compiled cache %s: it is owned by uid %d, not by this user (uid %d)",
                        path, st.st_uid, os.geteuid())
            os.close(fd)
            return None
        if st.st_mode & 0o022:
            log.warning("not using the compiled cache %s: writable by group or others (mode %o)", path,
                        stat.S_IMODE(st.st_mode))
            os.close(fd)
            return None
        if stat.S_IMODE(st.st_mode) != 0o700:
            os.fchmod(fd, 0o700)  # ours: nobody else may even list it
        # Nobody else may rename the cache directory away and put another in its place: every
        # directory above it is the user's or root's, writable by no one else unless sticky (/tmp).
        real = Path(os.path.realpath(path))
        for above in real.parents:
            a = os.stat(above)
            if a.st_uid not in (0, os.geteuid()) or (a.st_mode & 0o022 and not a.st_mode & stat.S_ISVTX):
                log.warning("not using the compiled cache %s: the directory above it, %s, is owned by uid %d with "
                            "mode %o", path, above, a.st_uid, stat.S_IMODE(a.st_mode))
                os.close(fd)
                return None
        return fd
    except OSError as e:
        log.warning("not using the compiled cache %s: %s", path, e)
        os.close(fd)
        return None


def _read_cache(engine: wasmtime.Engine, dir_fd: int, name: str, where: Path) -> Optional[wc.Component]:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    except OSError as e:  # a symlink (ELOOP), a permission problem
        log.warning("not reading the compiled cache %s: %s", where / name, e)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            why = "not a regular file"
        elif st.st_uid != os.geteuid():
            why = f"owned by uid {st.st_uid}, not by this user"
        elif st.st_mode & 0o077:
            why = f"mode {stat.S_IMODE(st.st_mode):o} lets others read or write it"
        elif st.st_nlink != 1:
            why = f"it has {st.st_nlink} links; this cache's files have one"
        else:
            why = ""
        if why:
            log.warning("not reading the compiled cache %s: %s", where / name, why)
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read()
    finally:
        os.close(fd)
    body = _verified_body(data)
    if body is None:
        log.warning("replacing the corrupt compiled cache %s", where / name)
        return None
    try:
        return wc.Component.deserialize(engine, body)
    except wasmtime.WasmtimeError as e:
        log.warning("replacing the unusable compiled cache %s: %s", where / name, e)
        return None


def _verified_body(data: bytes) -> Optional[bytes]:
    if not data.startswith(_CACHE_MAGIC):
        return None
    digest, body = data[len(_CACHE_MAGIC):len(_CACHE_MAGIC) + 32], data[len(_CACHE_MAGIC) + 32:]
    if len(digest) != 32 or hashlib.sha256(body).digest() != digest:
        return None
    return body


def _write_cache(dir_fd: int, name: str, component: wc.Component, where: Path) -> None:
    tmp = f".tmp-{os.getpid()}-{os.urandom(8).hex()}.cwasm"
    try:
        body = bytes(component.serialize())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600,
                     dir_fd=dir_fd)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_CACHE_MAGIC + hashlib.sha256(body).digest() + body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
            raise
    except (OSError, wasmtime.WasmtimeError) as e:
        log.warning("cannot write the compiled cache %s: %s", where / name, e)


# --------------------------------------------------------------------------------------------
# Per-call state, reached from the host functions through a thread-local


class _WallDeadline(Exception):
    """Raised from a host import once the call's wall-clock deadline has passed: wasmtime-py turns
    it into a trap, which ends the call."""


@dataclass
class _Call:
    store: wasmtime.Store
    vlm: Any
    on_output: Optional[OutputCallback]
    cpu_deadline: float
    wall_deadline: float
    vlm_takes_deadline: bool = False
    started: float = field(default_factory=time.monotonic)
    host_time: float = 0.0
    replies: Dict[int, Reply] = field(default_factory=dict)
    wall_expired: bool = False
    asked: int = 0
    written: Dict[str, int] = field(default_factory=dict)

    @property
    def wall_deadline_at(self) -> float:
        return self.started + self.wall_deadline

    def epoch_ticks(self) -> int:
        """The epoch deadline: the guest's remaining CPU time, or the wall-clock time left if less."""
        now = time.monotonic()
        guest_time = (now - self.started) - self.host_time
        remaining = min(self.cpu_deadline - guest_time, self.wall_deadline_at - now)
        return max(1, int(max(remaining, EPOCH_TICK_S) / EPOCH_TICK_S))

    def check_wall(self) -> None:
        if time.monotonic() >= self.wall_deadline_at:
            self.wall_expired = True
            raise _WallDeadline()

    def enter_host(self) -> float:
        self.check_wall()
        return time.monotonic()

    def leave_host(self, entered: float) -> None:
        """Time spent in host imports (the VLM) does not count against the CPU deadline; it does
        count against the wall-clock deadline."""
        self.host_time += time.monotonic() - entered
        self.store.set_epoch_deadline(self.epoch_ticks())

    def close(self) -> None:
        for reply in self.replies.values():
            try:
                reply.close()
            except Exception:  # pragma: no cover - best effort
                pass
        self.replies.clear()


_current = threading.local()
_next_rep = iter(range(1, 1 << 62))
_rep_lock = threading.Lock()


def _call_state() -> _Call:
    call = getattr(_current, "call", None)
    if call is None:  # pragma: no cover - only if wasmtime calls us outside a call
        raise MediagateError("a mediagate import was called outside a mediagate call")
    return call


def _vlm_error_value(e: VlmError) -> Any:
    if e.kind == "not-configured":
        return wc.Variant("not-configured")
    if e.kind == "refused":
        record = wc.Record()
        record.status = int(e.status or 0)
        record.message = e.message
        return wc.Variant("refused", record)
    return wc.Variant(e.kind, e.message)


# --------------------------------------------------------------------------------------------


class Mediagate:
    """The mediagate `agent-tool` component, loaded into this Python process.

    `workspace` is the one directory the component may read (a read-only WASI preopen).
    `vlm` is an `HttpVlm` (`OpenAICompatibleVlm`, `AnthropicVlm`) or any object with `configured`
    and `ask(prompt, mime, data_base64) -> Reply`; `None` builds one from the VLM variables of the
    environment (`vlm_from_env`), `False` means no VLM. `on_output(kind, text)` receives the reply
    as it streams (`kind` is `"content"` or `"reasoning"`).
    """

    def __init__(
        self,
        wasm_path: Optional[Union[str, os.PathLike]] = None,
        workspace: Union[str, os.PathLike] = ".",
        vlm: Union[Vlm, Any, None, bool] = None,
        on_output: Optional[OutputCallback] = None,
        *,
        memory_limit: int = facts.MEMORY_LIMIT_BYTES,
        memory_budget: int = facts.MEMORY_BUDGET_BYTES,
        cpu_deadline: float = facts.CPU_DEADLINE_S,
        wall_deadline: float = facts.WALL_DEADLINE_S,
        cache_dir: Union[str, os.PathLike, None, bool] = None,
    ):
        self.wasm_path = Path(wasm_path) if wasm_path is not None else default_wasm_path()
        ws = Path(workspace)
        if not ws.is_dir():
            raise MediagateError(f"the workspace {ws} is not a directory")
        self.workspace = os.path.realpath(ws)
        if vlm is None:
            try:
                vlm = vlm_from_env()
            except VlmConfigError as e:
                raise MediagateError(str(e)) from e
        elif vlm is False:
            vlm = NoVlm()
        self.vlm = vlm
        self._vlm_takes_deadline = _accepts_deadline(getattr(vlm, "ask", None))
        self.on_output = on_output
        self.memory_limit = memory_limit
        if memory_budget < memory_limit:
            raise ValueError(f"memory_budget ({memory_budget} bytes) is less than one call's memory_limit "
                             f"({memory_limit} bytes)")
        #: Calls that run at once: the budget over one call's limit. More wait their turn.
        self.calls_at_once = memory_budget // memory_limit
        self._slots = threading.BoundedSemaphore(self.calls_at_once)
        self._running_lock = threading.Lock()
        self._running = 0
        #: The most calls that have run at once in this host (at most `calls_at_once`).
        self.peak_calls = 0
        self.cpu_deadline = cpu_deadline
        self.wall_deadline = wall_deadline

        if cache_dir is False:
            cache: Optional[Path] = None
        elif cache_dir is None or cache_dir is True:
            cache = default_cache_dir()
        else:
            cache = Path(cache_dir)

        try:
            wasm = self.wasm_path.read_bytes()
        except OSError as e:
            raise MediagateError(f"cannot read the component {self.wasm_path}: {e} (pass wasm_path= or set "
                                 f"{ENV_WASM} to mediagate-agent-tool.wasm)") from e
        self.engine = shared_engine()
        try:
            self.component, self.origin = load_component_with_origin(self.engine, wasm, cache)
        except wasmtime.WasmtimeError as e:
            raise MediagateError(f"cannot compile {self.wasm_path}: {e}") from e
        extra = sorted(set(self.component.type.imports(self.engine)) - WORLD_IMPORTS)
        if extra:
            raise MediagateError(f"{self.wasm_path} imports {', '.join(extra)}, which the agent-tool world does not: "
                                 "this host links WASI for the world's imports only; use the "
                                 "mediagate-agent-tool.wasm of this release")
        self.linker = self._make_linker()

        def export(iface: str, name: str) -> wc.ExportIndex:
            parent = self.component.get_export_index(iface)
            index = self.component.get_export_index(name, parent) if parent is not None else None
            if index is None:
                raise MediagateError(f"{self.wasm_path} does not export {iface}#{name}: this host speaks contract "
                                     f"{CONTRACT}; use the mediagate-agent-tool.wasm of this release")
            return index

        self._exports = {
            "definition": export(TOOL_IFACE, "definition"),
            "read-image": export(TOOL_IFACE, "read-image"),
            "admit-file": export(WORKSPACE_IFACE, "admit-file"),
            "admit-tool-result": export(ADMISSION_IFACE, "admit-tool-result"),
            "admit-request": export(ADMISSION_IFACE, "admit-request"),
            "default-options": export(ADMISSION_IFACE, "default-options"),
            "convertible-types": export(ADMISSION_IFACE, "convertible-types"),
        }
        # The batch entries came later in contract 0.3.0: a component without them still serves
        # every other call, and `admit_batch_line` says what is missing when it is called.
        for name in BATCH_EXPORTS:
            parent = self.component.get_export_index(ADMISSION_IFACE)
            index = self.component.get_export_index(name, parent) if parent is not None else None
            if index is not None:
                self._exports[name] = index
        # The options a call that names none gets, and the names an option takes, from the
        # component (the one place they live): `default-options`, and the enums of the
        # `admit-options` and `request-input` records as the component types them.
        # Both request records have an `api`, of different enums: the batch one is `batch_api` here.
        typed = {("admit-file", "options"): "", ("admit-request", "input"): ""}
        if self.batch_supported:
            typed[("admit-batch-line", "input")] = "batch_"
        d, records = self._call("default-options", type_of=tuple(typed))
        self.defaults: Dict[str, Any] = {"downsample": bool(d.downsample), "provider": d.provider,
                                         "verify": d.verify, "keep_metadata": bool(getattr(d, "keep-metadata"))}
        self._choices: Dict[str, tuple] = {}
        for prefix, record in zip(typed.values(), records):
            for name, ty in record.fields:
                ty = ty.payload if isinstance(ty, wc.OptionType) else ty
                if isinstance(ty, wc.EnumType):
                    self._choices[prefix + name] = tuple(ty.names)
        #: The profiles the gate knows (`provider=`), as the component names them.
        self.providers: tuple = self._choices["provider"]

    # ---- imports ---------------------------------------------------------------------------

    def _make_linker(self) -> wc.Linker:
        linker = wc.Linker(self.engine)
        linker.add_wasip2()
        with linker.root() as root:
            with root.add_instance(VLM_IFACE) as vlm:
                vlm.add_resource("reply", wc.ResourceType.host(_REPLY_TYPE), _drop_reply)
                vlm.add_func("configured", _configured)
                vlm.add_func("api", _api)
                vlm.add_func("ask", _ask)
                vlm.add_func("[method]reply.next-chunk", _next_chunk)
            with root.add_instance(OUTPUT_IFACE) as output:
                output.add_func("write", _write)
        return linker

    # ---- calls -----------------------------------------------------------------------------

    def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """One export called in a fresh store and instance once the memory budget has room for
        it: each instance may grow to `memory_limit`, so at most `calls_at_once` exist at a time
        (a waiting call's deadlines start when it runs)."""
        with self._slots:
            with self._running_lock:
                self._running += 1
                self.peak_calls = max(self.peak_calls, self._running)
            try:
                return self._call_now(name, *args, **kwargs)
            finally:
                with self._running_lock:
                    self._running -= 1

    def _call_now(self, name: str, *args: Any, on_output: Optional[OutputCallback] = None,
                  workspace: Optional[str] = None, type_of: "tuple[tuple[str, str], ...]" = ()) -> Any:
        """One export called in a fresh store and instance. `type_of=((export, param), …)`: also
        answer those parameters' types, as the instance types them."""
        store = wasmtime.Store(self.engine)
        call = _Call(store=store, vlm=self.vlm, on_output=on_output or self.on_output,
                     cpu_deadline=self.cpu_deadline, wall_deadline=self.wall_deadline,
                     vlm_takes_deadline=self._vlm_takes_deadline)
        previous = getattr(_current, "call", None)
        _current.call = call
        fault: Optional[Exception] = None
        try:
            store.set_limits(memory_size=self.memory_limit)
            store.set_epoch_deadline(call.epoch_ticks())
            wasi = wasmtime.WasiConfig()
            preopen = workspace or self.workspace
            wasi.preopen_dir(preopen, preopen, fs_mutable=False)
            store.set_wasi(wasi)
            try:
                instance = self.linker.instantiate(store, self.component)
                func = instance.get_func(store, self._exports[name])
                if func is None:  # pragma: no cover - checked at load time
                    raise MediagateError(f"the component has no function {name}")
                result = func(store, *args)
                func.post_return(store)
                if type_of:
                    types = [dict(instance.get_func(store, self._exports[export]).type(store).params)[param]
                             for export, param in type_of]
                    result = (result, types)
            except (wasmtime.Trap, wasmtime.WasmtimeError, _WallDeadline) as e:
                fault = e
            else:
                if time.monotonic() >= call.wall_deadline_at:
                    call.wall_expired = True
                    fault = _WallDeadline()
                else:
                    return result
        finally:
            _current.call = previous
            call.close()
            store.close()
            if fault is not None:
                if not call.wall_expired and time.monotonic() >= call.wall_deadline_at and "interrupt" in str(fault):
                    call.wall_expired = True  # the epoch deadline was the wall-clock one
                raise GuestTrap.from_error(name, fault, self, wall_expired=call.wall_expired) from fault

    def tool_definition(self) -> Dict[str, Any]:
        """`{"name", "description", "parameters"}` — `parameters` is the JSON schema, parsed."""
        d = self._call("definition")
        return {
            "name": d.name,
            "description": d.description,
            "parameters": json.loads(getattr(d, "parameters-schema")),
        }

    def read_image(self, path: str, question: Optional[str] = None,
                   on_output: Optional[OutputCallback] = None, page: Optional[int] = None) -> str:
        """Ask the VLM about the workspace image at `path` (`question`, or the describe prompt).
        A type no provider takes (SVG, BMP, TIFF, ICO, a PDF) is converted in the component first;
        `page` is the page (1-based, default 1) of a PDF to render.

        Returns the answer (reasoning removed); raises `ToolError` on a tool error."""
        result = self._call("read-image", str(path), question, _page_or_none(page), on_output=on_output)
        if isinstance(result, str):
            return result
        raise ToolError(result.code, result.message)

    def admit_file(self, path: str, claimed_mime: Optional[str] = None, downsample: Optional[bool] = None,
                   provider: Optional[str] = None, verify: Optional[str] = None, keep_metadata: Optional[bool] = None,
                   include_data: bool = False, convert: bool = False, page: Optional[int] = None) -> Dict[str, Any]:
        """The gate's verdict on the workspace file at `path`: the JSON `mediagate admit FILE --json`
        prints (with `--convert`, `--page N`), written by the component and parsed here.
        `claimed_mime=None`: the component picks the type as the CLI does (the bytes' type when the
        gate admits it, or, converting, whenever it is an image; else the one `path`'s extension
        names), so a JPEG named `.png` is admitted as the JPEG it is. `include_data=True` adds
        `"data"`, the admitted bytes as base64. Options left `None` are the component's defaults
        (`self.defaults`).

        `convert=True` converts a type no provider takes (SVG, BMP, TIFF, ICO; an animated GIF's
        first frame for a profile that refuses animation) instead of refusing it; the verdict then
        carries `"converted": {"from", "to", "note"}`. `page` renders that page (1-based) of a PDF
        as an image (it implies `convert`); a page that does not exist, an encrypted PDF, a page
        that renders blank are refused verdicts (`no_such_page` with `requested` and `count`,
        `encrypted`, `blank`). A file that cannot be read, or a page of a file that is not a PDF,
        raises `ToolError` (`not-found`, `not-a-file`, `outside-workspace`, `too-large`, `io`,
        `page-of-non-pdf`)."""
        return self._admit_file(str(path), claimed_mime, self._options(downsample, provider, verify, keep_metadata),
                                include_data, convert, page)

    def _admit_file(self, path: str, claimed_mime: Optional[str], options: Any, include_data: bool, convert: bool,
                    page: Optional[int], workspace: Optional[str] = None) -> Dict[str, Any]:
        file = wc.Record()
        file.path = path
        setattr(file, "claimed-mime", claimed_mime)
        file.convert = bool(convert)
        file.page = _page_or_none(page)
        # The admitted bytes come back as base64 inside the JSON (one string, lifted in one copy),
        # never as a `list<u8>` (which wasmtime-py would lift value by value).
        file.data = "json-base64"
        ok, value = _ok_or_err(self._call("admit-file", file, options, workspace=workspace))
        if not ok:
            raise ToolError(value.code, value.message)
        verdict = _parsed(value.json, "admit-file")
        if not include_data:
            verdict.pop("data", None)
        return verdict

    def convertible_types(self) -> list:
        """The media types the component converts from (`admission.convertible-types`)."""
        return list(self._call("convertible-types"))

    def admit_bytes(self, data: Union[bytes, bytearray, memoryview], claimed_mime: Optional[str] = None,
                    downsample: Optional[bool] = None, provider: Optional[str] = None,
                    verify: Optional[str] = None, keep_metadata: Optional[bool] = None, include_data: bool = False, convert: bool = False,
                    page: Optional[int] = None) -> Dict[str, Any]:
        """The gate's verdict on `data`, in the shape of `admit_file` (as `mediagate admit -` judges
        stdin: no name, so `claimed_mime=None` is the type the bytes carry when the gate admits it).

        The bytes reach the component as a file: they are written to a fresh private directory
        (mode 0700, the file created exclusively, mode 0600), which is that call's only preopen,
        and removed after. wasmtime-py passes a `list<u8>` (`admission.admit`) element by element
        (about a second per MB); a file costs a write."""
        options = self._options(downsample, provider, verify, keep_metadata)
        with tempfile.TemporaryDirectory(prefix="mediagate-") as d:
            d = os.path.realpath(d)
            # No extension: unnamed input gives the component no name to take a type from.
            fd = os.open(os.path.join(d, "input"), os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                         0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            return self._admit_file("input", claimed_mime, options, include_data, convert, page, workspace=d)

    def admit_tool_result(self, tool: str, content: Any, downsample: Optional[bool] = None,
                          provider: Optional[str] = None, verify: Optional[str] = None, keep_metadata: Optional[bool] = None,
                          convert: bool = False) -> Dict[str, Any]:
        """Every media block of a tool's result admitted: the JSON `mediagate admit-tool-result`
        prints, written by the component and parsed here: `{"content": ..., "refused": [{"index",
        "path", "type", "reason", "bytes", "mime", "limit"?}]}` (`path` is the block's JSON Pointer).
        `content` is the JSON text of the result (a list of blocks, an object with `content`, or one
        block; MCP or Anthropic shapes) or the parsed value. Admitted blocks are rebuilt from the
        bytes checked; a refused block is replaced in its slot by a text block that names `tool`
        and the refusal. With no media block the content comes back as it was; content that is not
        JSON the gate can read is refused whole (one text block in its place). The content crosses
        into the component as one string (cheap, unlike `list<u8>`). `convert=True` converts the
        blocks no provider takes instead of refusing them, and adds `"conversions": [{"path",
        "from", "to", "note"}]` (`admit-tool-result --convert`)."""
        text = content if isinstance(content, str) else json.dumps(content)
        request = wc.Record()
        request.tool = str(tool)
        setattr(request, "content-json", text)
        request.convert = bool(convert)
        result = self._call("admit-tool-result", request, self._options(downsample, provider, verify, keep_metadata))
        return _parsed(result.json, "admit-tool-result")

    def admit_request(self, api: str, request: Any, downsample: Optional[bool] = None,
                      provider: Optional[str] = None, verify: Optional[str] = None, keep_metadata: Optional[bool] = None,
                      convert: bool = False) -> Dict[str, Any]:
        """A whole provider request through the gate: the JSON `mediagate admit-request --api API
        --json` prints, written by the component and parsed here: `{"api", "request", "changed",
        "refused", "refusal"}`. `api` is `"anthropic"` (Messages), `"openai"` (Chat Completions),
        `"gemini"` (`generateContent`) or `"anthropic-batch"` (the body that creates a Message
        Batch: each item's `params` as a Messages request); `request` is its JSON text or the
        parsed value. Every image and document block in its
        messages is admitted in place or replaced in its slot, and the API's request-level rules
        apply (more than 20 images: 2000 px a side; 100 images and 32 MB per Anthropic request; 500
        images per OpenAI request). `provider` (the per-image limits) defaults to the API's own. A
        request that is not one of the API, or cannot be made to fit, has `"request": None` and
        `refusal` says why (`unusable` for the former). `convert=True` converts the blocks no
        provider takes and adds `"conversions"`."""
        return self.admit_request_text(api, request, downsample, provider, verify, keep_metadata, convert)[0]

    def admit_request_text(self, api: str, request: Any, downsample: Optional[bool] = None,
                           provider: Optional[str] = None, verify: Optional[str] = None,
                           keep_metadata: Optional[bool] = None,
                           convert: bool = False) -> Tuple[Dict[str, Any], Optional[str]]:
        """`admit_request`'s report, and the admitted request as the component wrote it: the
        input text with only the changed blocks replaced (`None` when it stands as it is, or is
        refused whole). Send this text, not the report's parsed `request` written again: Python's
        `json` would change what it cannot round-trip (`1e400`, a lone surrogate)."""
        self._check("api", api)
        text = request if isinstance(request, str) else json.dumps(request)
        input = wc.Record()
        input.api = api
        setattr(input, "request-json", text)
        input.convert = bool(convert)
        result = self._call("admit-request", input, self._options(downsample, provider, verify, keep_metadata))
        verdict = result.verdict
        admitted = verdict.payload.request if verdict.tag == "admitted" else None
        return _parsed(result.json, "admit-request"), admitted

    @property
    def batch_supported(self) -> bool:
        """Whether the loaded component has the batch entries (`admit_batch_line`, `check_batch_file`)."""
        return all(name in self._exports for name in BATCH_EXPORTS)

    def _batch_export(self, name: str) -> str:
        if name not in self._exports:
            raise MediagateError(f"{self.wasm_path} does not export {ADMISSION_IFACE}#{name}: it predates batch "
                                 "admission; use the mediagate-agent-tool.wasm of this release")
        return name

    def admit_batch_line(self, api: str, line: str, number: int, downsample: Optional[bool] = None,
                         provider: Optional[str] = None, verify: Optional[str] = None,
                         keep_metadata: Optional[bool] = None, convert: bool = False) -> BatchLineAdmission:
        """One request of a Batch API file through the gate (`admission.admit-batch-line`): `line` is
        a JSON line without its line break (OpenAI `{"custom_id", "method", "url", "body"}`,
        Anthropic `{"custom_id", "params"}`) or one item of an Anthropic `requests` array, as text;
        `number` is its 1-based line (or item) number, which the report names. The component reads
        the request, judges its body by its endpoint's dialect (the walk and rules of
        `admit_request`) and splices the admitted body back into the text: nothing is parsed or
        rewritten here. `mediagate_host.batch.admit_batch` streams a whole file through this."""
        self._check("batch_api", api)
        if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number < 1 << 64:
            raise ValueError(f"number must be a whole number (u64), got {number!r}")
        input = wc.Record()
        input.api = api
        input.line = line
        input.number = number
        input.convert = bool(convert)
        result = self._call(self._batch_export("admit-batch-line"), input,
                            self._options(downsample, provider, verify, keep_metadata))
        return BatchLineAdmission(result.outcome, getattr(result, "custom-id"), result.line, result.json)

    def check_batch_file(self, api: str, requests: int, bytes: int) -> List[Dict[str, Any]]:
        """The Batch API's rules on a whole file that a file of `requests` requests and `bytes`
        bytes breaks (`admission.check-batch-file`): `[{"rule", "limit", "actual", "message"}]`,
        empty when it breaks none."""
        self._check("batch_api", api)
        rules = self._call(self._batch_export("check-batch-file"), api, int(requests), int(bytes))
        return [{"rule": r.rule, "limit": r.limit, "actual": r.actual, "message": r.message} for r in rules]

    def _check(self, option: str, value: Any) -> None:
        """A name the component's type takes (`provider`, `verify`, `api`, `batch_api`), else
        `ValueError` naming the parameter (`api` for both)."""
        names = self._choices[option]
        if value not in names:
            raise ValueError(f"{option.removeprefix('batch_')} must be one of {names} (got {value!r})")

    def _options(self, downsample: Optional[bool], provider: Optional[str], verify: Optional[str],
                 keep_metadata: Optional[bool] = None) -> Any:
        """`admit-options`: what the caller named; each left `None` is the component's default.
        `keep_metadata=True` admits an image's metadata (EXIF, XMP, comments, text chunks) as given
        instead of the gate's canonical re-mux without it."""
        for option, value in (("provider", provider), ("verify", verify)):
            if value is not None:
                self._check(option, value)
        options = wc.Record()
        options.downsample = None if downsample is None else bool(downsample)
        options.provider = provider
        options.verify = verify
        setattr(options, "keep-metadata", None if keep_metadata is None else bool(keep_metadata))
        return options


def _parsed(text: str, export: str) -> Dict[str, Any]:
    """The component's JSON, parsed; text that is not a JSON object is a host-side fault."""
    try:
        value = json.loads(text)
    except ValueError as e:
        raise MediagateError(f"{export} answered JSON that does not parse: {e}") from e
    if not isinstance(value, dict):
        raise MediagateError(f"{export} answered JSON that is not an object")
    return value


def _page(page: Any) -> int:
    """A PDF page number: a whole number from 1 (`u32`)."""
    if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= 0xFFFF_FFFF:
        raise ValueError(f"page must be a whole number from 1 (got {page!r})")
    return page


def _page_or_none(page: Any) -> Optional[int]:
    return None if page is None else _page(page)


def _ok_or_err(result: Any) -> tuple:
    """`(ok, payload)` of a WIT `result` as wasmtime-py lifts it: a `Variant("ok"|"err", …)` when
    both cases are of one Python type (records), else the payload itself."""
    if isinstance(result, wc.Variant) and result.tag in ("ok", "err"):
        return result.tag == "ok", result.payload
    return not hasattr(result, "code"), result


def _accepts_deadline(ask: Any) -> bool:
    """Whether a VLM client's `ask` takes the call's wall-clock deadline as `deadline=`."""
    try:
        params = inspect.signature(ask).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "deadline" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


# --------------------------------------------------------------------------------------------
# The import functions. wasmtime-py calls them as `f(store_context, *args)`.


def _configured(_store: Any) -> bool:
    call = _call_state()
    entered = call.enter_host()
    try:
        return bool(call.vlm.configured)
    finally:
        call.leave_host(entered)


def _api(_store: Any) -> str:
    """The dialect the model speaks (`openai` | `anthropic`): the guest admits under its profile."""
    call = _call_state()
    api = getattr(call.vlm, "api", "openai")
    return "anthropic" if api == "anthropic" else "openai"


def _ask(store: Any, prompt: str, image: Any) -> Any:
    call = _call_state()
    entered = call.enter_host()
    data_base64 = image.data
    try:
        if call.asked >= ASKS_PER_CALL:
            return wc.Variant("unreachable", f"this call already asked the vision model {ASKS_PER_CALL} time(s), as "
                                             "many as one call may; nothing was sent")
        call.asked += 1
        try:
            if call.vlm_takes_deadline:
                reply = call.vlm.ask(prompt, image.mime, data_base64, deadline=call.wall_deadline_at)
            else:
                reply = call.vlm.ask(prompt, image.mime, data_base64)
        except VlmError as e:
            call.check_wall()
            return _vlm_error_value(e)
        except Exception as e:  # a custom VLM client's own failure
            log.exception("the VLM client failed")
            return wc.Variant("unreachable", f"{type(e).__name__}: {e}")
        with _rep_lock:
            rep = next(_next_rep)
        call.replies[rep] = reply
        call.check_wall()
        return wc.ResourceHost.own(rep, _REPLY_TYPE)
    finally:
        call.leave_host(entered)


def _next_chunk(store: Any, this: Any) -> Any:
    call = _call_state()
    entered = call.enter_host()
    try:
        rep = this.to_host(store).rep
        reply = call.replies.get(rep)
        if reply is None:
            return _wit.Err(wc.Variant("malformed-stream", "this reply is no longer open"))
        try:
            chunk = reply.next_chunk()
        except VlmError as e:
            call.check_wall()
            return _wit.Err(_vlm_error_value(e))
        except Exception as e:
            log.exception("the VLM reply failed")
            return _wit.Err(wc.Variant("malformed-stream", f"{type(e).__name__}: {e}"))
        call.check_wall()
        if chunk is None:
            return _wit.Ok(None)
        # A model streams a few characters an event: one crossing per event would spend the
        # guest's CPU deadline (wasmtime-py's lifting counts as guest time) long before the guest's
        # read bound, so what is already here goes along.
        ready = getattr(reply, "ready_text", None)
        more = ready(chunk.kind, READY_TEXT_CHARS) if ready is not None else ""
        record = wc.Record()
        record.kind = chunk.kind
        record.text = chunk.text + more
        return _wit.Ok(record)
    finally:
        call.leave_host(entered)


def _drop_reply(_store: Any, rep: int) -> None:
    call = getattr(_current, "call", None)
    if call is None:
        return
    reply = call.replies.pop(rep, None)
    if reply is not None:
        reply.close()


def _write(_store: Any, kind: str, text: str) -> None:
    call = _call_state()
    used = call.written.get(kind, 0)
    text = text[:max(0, OUTPUT_CAP_CHARS - used)]
    call.written[kind] = used + len(text)
    if call.on_output is None or not text:
        return
    entered = call.enter_host()
    try:
        call.on_output(kind, text)
    except Exception:
        # A failing display must not fail the tool call.
        log.exception("the output callback raised; the call goes on")
    finally:
        call.leave_host(entered)

