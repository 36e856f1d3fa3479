"""mediagate for Python agents: the admission gate and the `read_image` tool, run from the
mediagate `agent-tool` WebAssembly component with wasmtime-py. The component ships inside this
package (`mediagate_host/mediagate-agent-tool.wasm`)."""

from .host import (
    GuestTrap,
    Mediagate,
    MediagateError,
    ToolError,
    conversion_dict,
    converted_file_dict,
    default_wasm_path,
    mime_from_extension,
    packaged_wasm_path,
    tool_result_dict,
    verdict_dict,
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
    "conversion_dict",
    "converted_file_dict",
    "default_wasm_path",
    "mime_from_extension",
    "packaged_wasm_path",
    "tool_result_dict",
    "verdict_dict",
    "vlm_from_env",
]
