"""mediagate for Python agents: the admission gate and the `read_image` tool, run from the
mediagate `agent-tool` WebAssembly component with wasmtime-py."""

from .host import (
    GuestTrap,
    Mediagate,
    MediagateError,
    ToolError,
    default_wasm_path,
    mime_from_extension,
    verdict_dict,
)
from .vlm import Chunk, NoVlm, OpenAICompatibleVlm, Reply, Vlm, VlmError

__all__ = [
    "Chunk",
    "GuestTrap",
    "Mediagate",
    "MediagateError",
    "NoVlm",
    "OpenAICompatibleVlm",
    "Reply",
    "ToolError",
    "Vlm",
    "VlmError",
    "default_wasm_path",
    "mime_from_extension",
    "verdict_dict",
]
