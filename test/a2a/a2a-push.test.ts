import 'reflect-metadata';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { expect } from 'chai';
import { ChatAgent } from 'skein';
import { A2AServer } from 'skein/a2a';
import { OpenAIChatClient } from 'skein/openai';
import { Emulator } from 'skein/testing';
import { userMessage } from './remote-fixtures.js';
import { startWebhook } from './webhook-receiver.js';

describe('A2AServer push notifications (SDK client, SDK sender)', () => {
  let emulator: Emulator;
  beforeEach(async () => (emulator = await Emulator.start()));
  afterEach(() => emulator.stop());

  function agent() {
    return new ChatAgent({ chatClient: new OpenAIChatClient({ apiKey: 'test', baseURL: emulator.openaiBaseURL, maxRetries: 0, model: 'gpt-test' }), name: 'assistant' });
  }

  for (const binding of ['JSON-RPC', 'gRPC'] as const) {
    it(`delivers task updates to the registered webhook; config get/list/delete work; the card says so (${binding})`, async () => {
      const hook = await startWebhook();
      // Loopback http is allowed here for the test; the default allows https URLs only.
      const server = new A2AServer({ agent: agent(), pushNotifications: { webhookAllowed: (url) => url.hostname === '127.0.0.1' }, logger: { warn: () => {}, error: () => {} } });
      await server.listen();
      if (binding === 'gRPC') await server.listenGrpc();
      try {
        const factory =
          binding === 'gRPC' ? new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new GrpcTransportFactory()], preferredTransports: ['GRPC'] })) : new ClientFactory();
        const client = await factory.createFromUrl(server.url!);
        expect((await client.getAgentCard()).capabilities?.pushNotifications).to.equal(true);
        const config = { tenant: '', id: '', taskId: '', url: hook.url, token: 'secret-1', authentication: undefined };
        const task = await client.sendMessage({
          tenant: '',
          message: userMessage('My name is Ada'),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: config, returnImmediately: false },
          metadata: undefined,
        });
        await hook.completed;
        expect(hook.received.every((r) => r.token === 'secret-1')).to.equal(true);
        const taskId = 'id' in task ? task.id : '';
        const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 10, pageToken: '' });
        expect(listed.configs.map((c) => c.url)).to.deep.equal([hook.url]);
        const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId, id: listed.configs[0]!.id });
        expect(got.url).to.equal(hook.url);
        await client.deleteTaskPushNotificationConfig({ tenant: '', taskId, id: listed.configs[0]!.id });
        expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId, pageSize: 10, pageToken: '' })).configs).to.deep.equal([]);
        expect((await client.getTask({ tenant: '', id: taskId, historyLength: 0 })).status?.state).to.equal(TaskState.TASK_STATE_COMPLETED);
      } finally {
        await server.close();
        await hook.close();
      }
    });
  }

  it('refuses a webhook the server does not allow (plain http by default)', async () => {
    const server = new A2AServer({ agent: agent(), pushNotifications: true, logger: { warn: () => {}, error: () => {} } });
    await server.listen();
    try {
      const client = await new ClientFactory().createFromUrl(server.url!);
      const config = { tenant: '', id: '', taskId: '', url: 'http://169.254.169.254/latest', token: '', authentication: undefined };
      const error = await client
        .sendMessage({ tenant: '', message: userMessage('hello'), configuration: { acceptedOutputModes: [], taskPushNotificationConfig: config, returnImmediately: false }, metadata: undefined })
        .catch((e: unknown) => e);
      expect(String(error)).to.contain('not allowed');
    } finally {
      await server.close();
    }
  });

  it('without pushNotifications the card says false and the SDK refuses configs', async () => {
    const server = new A2AServer({ agent: agent(), logger: { warn: () => {}, error: () => {} } });
    await server.listen();
    try {
      const client = await new ClientFactory().createFromUrl(server.url!);
      expect((await client.getAgentCard()).capabilities?.pushNotifications).to.equal(false);
      const error = await (async () => client.listTaskPushNotificationConfig({ tenant: '', taskId: 'x', pageSize: 10, pageToken: '' }))().catch((e: unknown) => e);
      expect((error as Error).name).to.equal('PushNotificationNotSupportedError');
    } finally {
      await server.close();
    }
  });
});
