"""mediagate for Python agents: the admission gate and the `read_image` tool, run from the
mediagate `agent-tool` WebAssembly component with wasmtime-py. The component ships inside this
package (`mediagate_host/mediagate-agent-tool.wasm`)."""

from .batch import BatchInputError, admit_batch
from .host import (
    BatchLineAdmission,
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
    "BatchInputError",
    "BatchLineAdmission",
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
    "admit_batch",
    "default_wasm_path",
    "packaged_wasm_path",
    "vlm_from_env",
]
