import { AgentRunResponse, messageText, type AgentRunMiddleware, type ChatMessage } from 'skein';

/** The documented redaction: key-like strings never reach the service; the thread keeps them. */
export const redactKeys: AgentRunMiddleware = {
  onRun(context, next) {
    const clean = (m: ChatMessage): ChatMessage => ({
      ...m,
      contents: m.contents.map((c) => (c.kind === 'text' ? { ...c, text: c.text.replace(/sk-[A-Za-z0-9]{8,}/g, '[REDACTED]') } : c)),
    });
    context.messages = context.messages.map(clean);
    return next();
  },
};

/** Answers any input that mentions "forbidden" itself, without running the agent. */
export const forbiddenGuard: AgentRunMiddleware = {
  async onRun(context, next) {
    if (context.messages.some((m) => /forbidden/i.test(messageText(m)))) {
      return new AgentRunResponse([{ role: 'assistant', contents: [{ kind: 'text', text: 'I cannot help with that.' }] }]);
    }
    return next();
  },
};
