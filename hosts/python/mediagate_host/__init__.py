"""mediagate for Python agents: the admission gate and the `read_image` tool, run from the
mediagate `agent-tool` WebAssembly component with wasmtime-py. The component ships inside this
package (`mediagate_host/mediagate-agent-tool.wasm`)."""

from .host import (
    GuestTrap,
    Mediagate,
    MediagateError,
    ToolError,
    default_wasm_path,
    packaged_wasm_path,
)
from .vlm import (
    AnthropicVlm,
    Chunk,
    HttpVlm,
    NoVlm,
    OpenAICompatibleVlm,
    Reply,
    SseDecoder,
    Vlm,
    VlmConfigError,
    VlmError,
    vlm_from_env,
)

__all__ = [
    "AnthropicVlm",
    "Chunk",
    "GuestTrap",
    "HttpVlm",
    "Mediagate",
    "MediagateError",
    "NoVlm",
    "OpenAICompatibleVlm",
    "Reply",
    "SseDecoder",
    "ToolError",
    "Vlm",
    "VlmConfigError",
    "VlmError",
    "default_wasm_path",
    "packaged_wasm_path",
    "vlm_from_env",
]
