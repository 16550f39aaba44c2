/**
 * A real loopback proxy between one gateway and the next that loses chosen
 * follow-up sends the way a network does: by resetting the caller's
 * connection (TCP RST). Everything else (cards, GetTask, ListTasks, first
 * turns) passes through untouched. Which send is lost, and where, is decided
 * by the test from the message id, so a run is deterministic.
 */
import { createServer, request, Agent, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * What happens to one send: `pass`; `reset-before` resets before a byte is
 * forwarded (the delegatee never sees the turn); `reset-after` forwards it and
 * resets once the delegatee's answer has started (it saw the turn, the sender
 * did not hear back).
 */
export type Fate = 'pass' | 'reset-before' | 'reset-after';

export interface ResetProxy {
  url: string;
  /** Sets where requests go (the next gateway listens only after its public URL, this one, is known). */
  connect(upstream: string): void;
  /** The fate each follow-up send met, by message id, as applied (not merely planned). */
  applied: Map<string, Fate>;
  /** Answers relayed, counted by JSON-RPC method (or request path), HTTP status and whether a credential was sent. */
  answered: Map<string, number>;
  close(): Promise<void>;
}

const SENDS = new Set(['SendMessage', 'SendStreamingMessage']);

/** The JSON-RPC method, and the follow-up's message id when the body is a send on an existing task. */
function inspect(body: Buffer): { method?: string; followUp?: string } {
  try {
    const rpc = JSON.parse(body.toString('utf8')) as { method?: string; params?: { message?: { messageId?: unknown; taskId?: unknown } } };
    const m = rpc.params?.message;
    const followUp = SENDS.has(rpc.method ?? '') && typeof m?.taskId === 'string' && m.taskId !== '' && typeof m.messageId === 'string' ? m.messageId : undefined;
    return { ...(rpc.method ? { method: rpc.method } : {}), ...(followUp ? { followUp } : {}) };
  } catch {
    return {};
  }
}

/** RST, not FIN: the sender must see a lost connection, not an empty answer. */
const reset = (s: Socket) => s.resetAndDestroy();

export async function startResetProxy(fateOf: (messageId: string) => Fate): Promise<ResetProxy> {
  let upstream: URL | undefined;
  const applied = new Map<string, Fate>();
  const answered = new Map<string, number>();
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });

  const relay = (req: IncomingMessage, res: ServerResponse, body: Buffer, fate: Fate, what: string) => {
    const up = request({ host: upstream!.hostname, port: upstream!.port, method: req.method, path: req.url, headers: req.headers, agent }, (answer) => {
      const key = `${what} ${answer.statusCode}${req.headers['x-api-key'] ? '' : ' without x-api-key'}`;
      answered.set(key, (answered.get(key) ?? 0) + 1);
      if (fate === 'reset-after') {
        // The first bytes of the answer mean the next hop admitted and forwarded the turn; then the line is cut.
        answer.once('data', () => {
          reset(req.socket);
          answer.destroy();
        });
        answer.once('end', () => reset(req.socket));
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    up.on('error', () => reset(req.socket));
    res.on('close', () => up.destroy());
    up.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const { method, followUp } = inspect(body);
      const fate = followUp === undefined ? 'pass' : fateOf(followUp);
      if (followUp !== undefined) applied.set(followUp, fate);
      if (fate === 'reset-before') return reset(req.socket);
      relay(req, res, body, fate, method ?? `${req.method} ${req.url?.replace(/\?.*$/, '')}`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    applied,
    answered,
    connect(u) {
      upstream = new URL(u);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
