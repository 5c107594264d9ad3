import type { Message, RunAgentInput } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import { expect } from 'chai';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { lastValueFrom, toArray } from 'rxjs';
import { type AIAgent, type AgentRunResponseUpdate, agentToken, approvalResponse, createContainer, messageText, tool } from 'skein';
import { AgUiAgent, AgUiRunError, AgUiServer, agUiPlugin, agUiStateOf } from 'skein/ag-ui';
import { Emulator } from 'skein/testing';
import { z } from 'zod';
import { dropSchema } from '../stores/services.js';
import { PG_SCHEMA, type ToolLog, agentsOn, tempDir } from './ag-ui-fixture.js';

describe('skein/ag-ui: AgUiAgent, a remote AG-UI agent as a Skein agent', () => {
  describe('against AgUiServer', () => {
    let emulator: Emulator;
    let dir: string;
    let log: ToolLog;
    let setup: Awaited<ReturnType<typeof agentsOn>>;
    let server: AgUiServer;
    let base: string;

    before(async () => {
      emulator = await Emulator.start();
      dir = await tempDir();
      log = { deleted: [] };
      setup = await agentsOn(emulator, dir, log);
      server = new AgUiServer({ agents: setup.agents, logger: { warn: () => undefined, error: () => undefined } });
      base = `${await server.listen()}/agents`;
    });
    after(async () => {
      await server.close();
      await setup.close();
      await emulator.stop();
      await rm(dir, { recursive: true, force: true });
      await dropSchema(PG_SCHEMA);
    });

    it('run and runStream hold a conversation; the thread serializes and resumes in another agent instance', async () => {
      const agent = new AgUiAgent({ url: `${base}/chat-sqlite`, name: 'remote' });
      const thread = agent.getNewThread();
      expect((await agent.run('My name is Ada.', { thread })).text).to.equal('Nice to meet you, Ada!');
      const updates = await lastValueFrom(agent.runStream('What is my name?', { thread }).pipe(toArray()));
      expect(updates.map((u: AgentRunResponseUpdate) => u.text).join('')).to.equal('Your name is Ada.');
      const saved = JSON.parse(JSON.stringify(await thread.serialize())) as unknown;
      expect(saved).to.deep.include({ $type: 'service', provider: 'ag-ui', serviceThreadId: thread.serviceThreadId });
      const again = new AgUiAgent({ url: `${base}/chat-sqlite`, name: 'remote' });
      const resumed = await again.deserializeThread(saved);
      expect((await again.run('What is my name?', { thread: resumed })).text).to.equal('Your name is Ada.');
      expect((await again.getMessages(resumed)).map(messageText)).to.deep.equal(['My name is Ada.', 'Nice to meet you, Ada!', 'What is my name?', 'Your name is Ada.', 'What is my name?', 'Your name is Ada.']);
    });

    it('a run the remote refuses over HTTP (here: no agent at that path) is an AgUiRunError with the status and the server\'s message', async () => {
      const agent = new AgUiAgent({ url: `${base}/nobody` });
      const thread = agent.getNewThread();
      const error = await agent.run('hello', { thread }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(AgUiRunError);
      const path = new URL(`${base}/nobody`).pathname;
      expect((error as AgUiRunError).message).to.equal(`The AG-UI agent at ${base}/nobody refused the run (HTTP 404): No agent at ${path}; agents are served at /agents/chat-sqlite, /agents/chat-postgres, /agents/chat-redis, /agents/responses, /agents/assistants. The thread is unchanged.`);
      expect((error as AgUiRunError).code).to.equal('404');
      expect(thread.serviceThreadId).to.equal(undefined);
    });

    it('additionalInstructions reach the remote model for that run only (as AG-UI context)', async () => {
      const agent = new AgUiAgent({ url: `${base}/responses` });
      const thread = agent.getNewThread();
      const marker = `checkout-${Math.random().toString(36).slice(2)}`;
      const from = emulator.requests.length;
      expect((await agent.run('My name is Ada.', { thread, additionalInstructions: `The user is on page ${marker}.` })).text).to.equal('Nice to meet you, Ada!');
      const carried = (since: number) => emulator.requests.slice(since).filter((r) => r.method === 'POST' && JSON.stringify(r.body ?? '').includes(`The user is on page ${marker}.`));
      expect(carried(from)).to.have.length(1);
      const next = emulator.requests.length;
      expect((await agent.run('What is my name?', { thread })).text).to.equal('Your name is Ada.');
      expect(carried(next)).to.have.length(0);
    });

    it('interrupts are Skein approval requests: approving runs the remote tool once', async () => {
      const agent = new AgUiAgent({ url: `${base}/chat-postgres` });
      const thread = agent.getNewThread();
      const before = log.deleted.length;
      const asked = await agent.run('call delete_file {"path":"/tmp/b.txt"}', { thread });
      expect(asked.approvalRequests.map((r) => [r.name, r.arguments])).to.deep.equal([['delete_file', '{"path":"/tmp/b.txt"}']]);
      expect(log.deleted.length).to.equal(before);
      const done = await agent.run(approvalResponse(asked.approvalRequests[0]!, true), { thread });
      expect(done.text).to.equal('delete_file returned: deleted /tmp/b.txt');
      expect(log.deleted.slice(before)).to.deep.equal(['/tmp/b.txt']);
    });

    it('local tools are offered as frontend tools and run here; state is exposed on the thread', async () => {
      const painted: string[] = [];
      const paint = tool({ name: 'change_background', description: 'Changes the background', parameters: z.object({ color: z.string() }), execute: ({ color }) => (painted.push(color), `now ${color}`) });
      const agent = new AgUiAgent({ url: `${base}/responses`, tools: [paint] });
      const thread = agent.getNewThread();
      const response = await agent.run('call change_background {"color":"red"}', { thread });
      expect(painted).to.deep.equal(['red']);
      expect(response.text).to.equal('change_background returned: now red');
      const todo = await agent.run('Please add todo Milk', { thread: agent.getNewThread() });
      expect(todo.text).to.equal('add_todo returned: added Milk');
    });

    it('a config file names a remote AG-UI agent with client: ag-ui', async () => {
      const container = await createContainer({ plugins: [agUiPlugin()], agents: { remote: { client: 'ag-ui', url: `${base}/chat-sqlite` } } });
      const agent = container.get<AIAgent>(agentToken('remote'));
      expect(agent).to.be.instanceOf(AgUiAgent);
      expect((await agent.run('My name is Zed.')).text).to.equal('Nice to meet you, Zed!');
    });
  });

  describe('against an AG-UI server Skein did not write (@ag-ui/encoder)', () => {
    let http: Server;
    let url: string;
    const seen: RunAgentInput[] = [];

    before(async () => {
      // A small AG-UI agent: it asks the client's get_time tool when asked for the time, answers
      // with its result, fails on "fail", echoes anything else, and keeps `state.turns`.
      http = createServer((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          const input = JSON.parse(body) as RunAgentInput;
          seen.push(input);
          const encoder = new EventEncoder({ accept: req.headers.accept });
          res.writeHead(200, { 'content-type': encoder.getContentType() });
          const send = (event: Record<string, unknown>) => res.write(encoder.encodeSSE(event as never));
          const last = input.messages.at(-1) as Message;
          send({ type: 'RUN_STARTED', threadId: input.threadId, runId: input.runId });
          const turns = ((input.state as { turns?: number } | undefined)?.turns ?? 0) + 1;
          send({ type: 'STATE_SNAPSHOT', snapshot: { turns } });
          const text = (m: string) => {
            send({ type: 'TEXT_MESSAGE_START', messageId: `m-${input.runId}`, role: 'assistant' });
            send({ type: 'TEXT_MESSAGE_CONTENT', messageId: `m-${input.runId}`, delta: m });
            send({ type: 'TEXT_MESSAGE_END', messageId: `m-${input.runId}` });
          };
          if (last.role === 'tool') text(`The time is ${String(last.content)}.`);
          else if (String(last.content).includes('fail')) {
            send({ type: 'RUN_ERROR', message: 'model overloaded', code: 'overloaded' });
            return res.end();
          } else if (String(last.content).includes('time')) {
            send({ type: 'TOOL_CALL_START', toolCallId: `c-${input.runId}`, toolCallName: 'get_time', parentMessageId: `m-${input.runId}` });
            send({ type: 'TOOL_CALL_ARGS', toolCallId: `c-${input.runId}`, delta: '{"zone":"UTC"}' });
            send({ type: 'TOOL_CALL_END', toolCallId: `c-${input.runId}` });
          } else text(`Echo: ${String(last.content)} (${input.messages.length} messages)`);
          send({ type: 'RUN_FINISHED', threadId: input.threadId, runId: input.runId });
          res.end();
        });
      });
      await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/agent`;
    });
    after(() => new Promise<void>((resolve) => http.close(() => resolve())));

    it('sends the whole history each run, runs its frontend tool calls here, and keeps its state on the thread', async () => {
      const getTime = tool({ name: 'get_time', description: 'The time', parameters: z.object({ zone: z.string() }), execute: ({ zone }) => `12:00 ${zone}` });
      const agent = new AgUiAgent({ url, tools: [getTime] });
      const thread = agent.getNewThread();
      expect((await agent.run('hello', { thread })).text).to.equal('Echo: hello (1 messages)');
      expect((await agent.run('what time is it?', { thread })).text).to.equal('The time is 12:00 UTC.');
      expect(seen.at(-1)!.tools.map((t) => t.name)).to.deep.equal(['get_time']);
      expect(seen.at(-1)!.messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user', 'assistant', 'tool']);
      expect(agUiStateOf(thread)).to.deep.equal({ turns: 3 });
      expect((await agent.run('bye', { thread })).text).to.equal('Echo: bye (7 messages)');
      expect(new Set(seen.slice(-4).map((i) => i.threadId)).size).to.equal(1);
    });

    it("the remote's RUN_ERROR is an AgUiRunError; the thread is unchanged", async () => {
      const agent = new AgUiAgent({ url });
      const thread = agent.getNewThread();
      await agent.run('hello', { thread });
      const error = await agent.run('please fail', { thread }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(AgUiRunError);
      expect((error as AgUiRunError).message).to.equal(`The AG-UI agent at ${url} failed: model overloaded`);
      expect((error as AgUiRunError).code).to.equal('overloaded');
      expect((await agent.getMessages(thread)).map(messageText)).to.deep.equal(['hello', 'Echo: hello (1 messages)']);
    });
  });
});
