import type { RunToolCall, SimulatedRun } from './run-simulator.js';

/**
 * The Foundry Agents emulator's memory and wire shapes: agents, threads, messages and runs as
 * `@azure/ai-agents` 1.x reads them, and the error a route throws to answer with an envelope.
 */
export type Directive = 'failed' | 'expired' | 'cancelled' | 'incomplete' | 'hold';

export interface WireTool {
  type: string;
  function?: { name: string; description?: string; parameters?: Record<string, unknown> };
  [key: string]: unknown;
}

export interface WireMessage {
  id: string;
  object: 'thread.message';
  created_at: number;
  thread_id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
  completed_at: number | null;
  incomplete_at: number | null;
  role: 'user' | 'assistant';
  content: WireContent[];
  assistant_id: string | null;
  run_id: string | null;
  attachments: WireAttachment[];
  metadata: Record<string, string>;
}

export type WireContent =
  | { type: 'text'; text: { value: string; annotations: unknown[] } }
  | { type: 'image_url'; image_url: { url: string; detail: string } }
  | { type: 'image_file'; image_file: { file_id: string; detail: string } };

export interface WireAttachment {
  file_id: string;
  tools: { type: 'file_search' | 'code_interpreter' }[];
}

export type WireToolCall = RunToolCall;

export interface WireRun {
  id: string;
  object: 'thread.run';
  thread_id: string;
  assistant_id: string;
  status: string;
  required_action: { type: 'submit_tool_outputs'; submit_tool_outputs: { tool_calls: WireToolCall[] } } | null;
  last_error: { code: string; message: string } | null;
  model: string;
  instructions: string;
  tools: WireTool[];
  created_at: number;
  expires_at: number | null;
  started_at: number | null;
  completed_at: number | null;
  cancelled_at: number | null;
  failed_at: number | null;
  incomplete_details: { reason: string } | null;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
  temperature: number;
  top_p: number;
  max_prompt_tokens: number | null;
  max_completion_tokens: number | null;
  truncation_strategy: { type: string; last_messages: number | null };
  tool_choice: unknown;
  response_format: unknown;
  metadata: Record<string, string>;
  tool_resources: null;
  parallel_tool_calls: boolean;
}

export interface RunState extends SimulatedRun {
  object: WireRun;
  directive: Directive | undefined;
  offerTools: boolean;
  /** Tool calls asked for and the outputs submitted, per round, in order. */
  rounds: { calls: WireToolCall[]; outputs: Map<string, string> }[];
  /** Messages of the thread the run reads (those before it started). */
  inputCount: number;
}

export interface ThreadState {
  wire: { id: string; object: 'thread'; created_at: number; metadata: Record<string, string>; tool_resources: null };
  messages: WireMessage[];
  runs: RunState[];
}

export interface AgentWire {
  id: string;
  object: 'assistant';
  created_at: number;
  name: string | null;
  description: string | null;
  model: string;
  instructions: string | null;
  tools: WireTool[];
  tool_resources: null;
  temperature: number;
  top_p: number;
  response_format: unknown;
  metadata: Record<string, string>;
}

export class FoundryState {
  readonly agents = new Map<string, AgentWire>();
  readonly threads = new Map<string, ThreadState>();
}

/** Thrown while handling a request; becomes an error envelope with this status. */
export class FoundryRouteError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param?: string,
    readonly code?: string,
  ) {
    super(message);
  }
}
