"""Explicit `ok`/`err` for WIT `result` values returned from Python host functions.

wasmtime-py lowers a `result<T, E>` by guessing the case from the Python type of the value
(`VariantLikeType._lower`): the first case whose Python classes match wins. For
`result<option<chunk>, vlm-error>` (`reply.next-chunk`) the `ok` case is an `option`, whose classes
include `object` (for `none`), so *every* value matches `ok` and an error can never be returned:
`Variant("refused", …)` is tried as `some(chunk)` and fails with `ValueError`.

`Ok(value)` / `Err(value)` name the case explicitly. `install()` wraps
`wasmtime.component._types.ResultType.convert_to_c` so that these two marker types are lowered to
the named case; every other value is lowered by wasmtime-py exactly as before.

`install()` also lifts a `list<u8>` (the admitted bytes, the image the VLM is asked about) in one
C-level copy: wasmtime-py reads it element by element in Python (about a second per MB). The C
API hands the list over as an array of `wasmtime_component_val_t`, each holding one `u8`; the bytes
are every `sizeof(val_t)`-th byte of that array, which a strided `memoryview` slice copies out.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from wasmtime import _ffi as ffi
from wasmtime.component import _types


@dataclass(frozen=True)
class Ok:
    value: Any = None


@dataclass(frozen=True)
class Err:
    value: Any = None


_installed = False
#: wasmtime-py's own `ResultType.convert_to_c`, kept for the values this module does not handle.
original_convert_to_c = _types.ResultType.convert_to_c


def install() -> None:
    global _installed
    if _installed:
        return
    original = original_convert_to_c

    def convert_to_c(self, store, val, ptr):  # type: ignore[no-untyped-def]
        if not isinstance(val, (Ok, Err)):
            return original(self, store, val, ptr)
        is_ok = isinstance(val, Ok)
        ty = self.ok if is_ok else self.err
        raw = None
        if ty is not None:
            space = ffi.wasmtime_component_val_t()
            ty.convert_to_c(store, val.value, ctypes.pointer(space))
            raw = ffi.wasmtime_component_val_new(ctypes.byref(space))
        elif val.value is not None:
            raise TypeError("this result case carries no payload")
        ptr.contents.kind = ffi.WASMTIME_COMPONENT_RESULT
        ptr.contents.of.result.is_ok = is_ok
        ptr.contents.of.result.val = raw

    _types.ResultType.convert_to_c = convert_to_c  # type: ignore[method-assign]

    original_list_from_c = _types.ListType.convert_from_c
    stride = ctypes.sizeof(ffi.wasmtime_component_val_t)
    offset = ffi.wasmtime_component_val_t.of.offset + ffi.wasmtime_component_valunion_t.u8.offset

    def list_from_c(self, c):  # type: ignore[no-untyped-def]
        if not self._is_bytes():
            return original_list_from_c(self, c)
        n = c.of.tuple.size
        try:
            if n == 0:
                return b""
            array = (ctypes.c_uint8 * (n * stride)).from_address(ctypes.addressof(c.of.tuple.data.contents))
            return memoryview(array)[offset::stride].tobytes()
        finally:
            # The elements are u8: they own nothing; the array itself is freed here.
            ffi.wasmtime_component_valtuple_delete(ctypes.byref(c.of.tuple))

    _types.ListType.convert_from_c = list_from_c  # type: ignore[method-assign]
    _installed = True
