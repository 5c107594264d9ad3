import type { AIContent, ChatClientMiddleware, ChatMessage, DataContent, JsonValue } from 'skein';

/**
 * Lets the model see the images MCP tools return. A tool result reaches the model as text (a
 * function output), so the images an MCP result carried (kept on the result as
 * `additionalProperties.mcpData`) are sent right after the tool message, as a user message with
 * image content, on every model call that includes that tool message. Only what is sent changes:
 * the thread keeps the tool result as it was. The `mcp` plugin adds this to every agent of its
 * container; give it to a hand-built agent with `middleware: { chatClient: [mcpToolImages()] }`.
 */
export function mcpToolImages(): ChatClientMiddleware {
  return {
    onChatRequest(context, next) {
      context.messages = withToolImages(context.messages);
      return next();
    },
  };
}

/** `messages` with a user message of images after each tool message whose results carried images (the same array when none did). */
export function withToolImages(messages: readonly ChatMessage[]): readonly ChatMessage[] {
  if (!messages.some((m) => m.role === 'tool' && imagesOf(m).length > 0)) return messages;
  const out: ChatMessage[] = [];
  for (const message of messages) {
    out.push(message);
    if (message.role !== 'tool') continue;
    const images = imagesOf(message);
    if (images.length === 0) continue;
    const label: AIContent = { kind: 'text', text: `(${images.length === 1 ? 'The image' : `The ${images.length} images`} from the tool results above.)` };
    out.push({ role: 'user', contents: [label, ...images] });
  }
  return out;
}

function imagesOf(message: ChatMessage): DataContent[] {
  return message.contents.flatMap((content) => {
    if (content.kind !== 'function-result') return [];
    const data = content.additionalProperties?.mcpData;
    return Array.isArray(data) ? data.filter(isImage).map((d) => ({ kind: 'data' as const, mediaType: d.mediaType, data: d.data })) : [];
  });
}

function isImage(value: JsonValue): value is { mediaType: string; data: string } {
  return (
    !!value && typeof value === 'object' && !Array.isArray(value) && typeof value.mediaType === 'string' && value.mediaType.startsWith('image/') && typeof value.data === 'string'
  );
}
