// How a JavaScript agent host puts the gate on tool results: every result passes admission
// after the last hand that can change it and before it enters the conversation history.
import { admitToolResult } from '@mediagate/preflight';

/**
 * Records one executed tool call in the history (Anthropic Messages shape).
 * `result.content` is what the tool (an MCP server, a local function) returned.
 */
export async function recordToolResult(history, toolUse, result, { provider = 'anthropic' } = {}) {
  const { content, refused } = await admitToolResult(toolUse.name, result.content, { provider });
  for (const r of refused) {
    // The refused block is already replaced in its slot by a text block the model can read.
    console.warn(`mediagate: ${toolUse.name} block ${r.index} refused: ${r.reason} (${r.bytes} bytes)`);
  }
  history.push({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: toolUse.id, content, is_error: Boolean(result.isError) }],
  });
  return refused;
}
