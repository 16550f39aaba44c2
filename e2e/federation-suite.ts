import { randomUUID } from 'node:crypto';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partsText, textPart } from './agents/card.ts';
import { startFederation, type Federation } from './gateway/federation.ts';

const OUTCOME = 'urn:baton:outcome:v2';
export const send = (text: string, extra: { taskId?: string; contextId?: string } = {}) => ({
  tenant: '',
  message: { messageId: randomUUID(), contextId: extra.contextId ?? '', taskId: extra.taskId ?? '', role: Role.ROLE_USER, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] },
  configuration: undefined,
  metadata: undefined,
});

/** Separate stores per organisation; `pg` maps org index → PostgreSQL URL for the mixed run. */
export function federationSuite(name: string, setup: () => Promise<{ pgUrls?: Record<number, string> }>): void {
  let fed: Federation;
  beforeAll(async () => {
    fed = await startFederation(await setup());
  }, 90_000);
  afterAll(async () => fed?.close());

  describe(`${name}: two organisations, separate stores: A → B → agent`, () => {
    it('delegates through B under signed head statements from A', async () => {
      const client = await fed.client();
      const task = (await client.sendMessage(send('across two stores'))) as Task;
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(partsText(task.artifacts[0]!.parts)).toBe('serots owt ssorca');
      expect((task.metadata?.[OUTCOME] as { outcome: string }).outcome).toBe('succeeded');
    });
  });
}
