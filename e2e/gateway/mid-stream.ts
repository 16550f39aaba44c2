/** Streams one task and runs `act` once, at the first WORKING status; shared by the revocation tests. */
import { TaskState, type StreamResponse, type Task, type TaskState as State } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';

const OUTCOME = 'urn:baton:outcome:v2';

export interface MidStreamRun {
  events: StreamResponse[];
  acted: boolean;
  /** The state of the last event (task or status update). */
  finalState: State | undefined;
}

export async function streamActingAtWorking(client: Client, params: Parameters<Client['sendMessageStream']>[0], act: (rootDelegationId: string) => Promise<void>): Promise<MidStreamRun> {
  const events: StreamResponse[] = [];
  let acted = false;
  for await (const ev of client.sendMessageStream(params)) {
    events.push(ev);
    const p = ev.payload;
    if (!acted && p?.$case === 'statusUpdate' && p.value.status?.state === TaskState.TASK_STATE_WORKING) {
      acted = true;
      await act(rootOf(events));
    }
  }
  const last = events[events.length - 1]?.payload;
  const finalState = last?.$case === 'statusUpdate' ? last.value.status?.state : last?.$case === 'task' ? last.value.status?.state : undefined;
  return { events, acted, finalState };
}

/** The root delegation id Baton reported on the stream's first task event. */
function rootOf(events: readonly StreamResponse[]): string {
  const first = events.find((e) => e.payload?.$case === 'task')?.payload?.value as Task | undefined;
  const meta = first?.metadata?.[OUTCOME] as { rootDelegationId?: string } | undefined;
  if (!meta?.rootDelegationId) throw new Error('no task event carried Baton metadata');
  return meta.rootDelegationId;
}
