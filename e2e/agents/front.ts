import express, { type Request, type RequestHandler, type Response } from 'express';
import { SendMessageRequest } from '@a2a-js/sdk';
import { ServerCallContext, UnauthenticatedUser, type DefaultRequestHandler } from '@a2a-js/sdk/server';
import { ExtensionSupportRequiredError, restStatusFor, toJsonRpcError, toRestErrorBody, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { methodOf, paramsOf, type TestLog, type Transport } from './testlog.ts';

/** The two methods the misbehaving agents misbehave on; everything else stays honest. */
const SEND_METHODS = new Set(['SendMessage', 'SendStreamingMessage']);

const extensionsOf = (req: Request): string[] =>
  [req.headers['a2a-extensions']].flat().join(',').split(',').map((s) => s.trim()).filter(Boolean);

const jsonRpcId = (req: Request): unknown => {
  const body: unknown = req.body;
  return typeof body === 'object' && body !== null && 'id' in body ? body.id : null;
};

/** Writes an SDK error in the transport's own wire shape (same mapping the SDK adapters use). */
export function sendA2AError(res: Response, transport: Transport, id: unknown, err: unknown): void {
  if (transport === 'jsonrpc') {
    res.status(200).json({ jsonrpc: '2.0', id, error: toJsonRpcError(err) });
    return;
  }
  const status = restStatusFor(err);
  res.status(status).type('application/a2a+json').send(JSON.stringify(toRestErrorBody(err, status)));
}

const json = express.json({ limit: '4mb', type: ['application/json', 'application/a2a+json'] });

/**
 * Parses the body ahead of the SDK router so the log and the misbehaviours can see the
 * method; the SDK's own parser then skips the already-parsed body (brief gotcha 1).
 * A parse failure is answered here because the request stream is already consumed.
 */
export function bodyParser(transport: Transport): RequestHandler {
  return (req, res, next) =>
    json(req, res, (err?: unknown) => {
      if (err === undefined) return next();
      if (transport === 'jsonrpc') res.status(200).json({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      else res.status(400).type('application/a2a+json').send(JSON.stringify({ error: { code: 400, status: 'INVALID_ARGUMENT', message: 'Parse error', details: [] } }));
    });
}

/** Refuses (-32008 / 400) any A2A request whose `A2A-Extensions` header lacks `uri`. */
export function requireExtension(uri: string, transport: Transport): RequestHandler {
  return (req, res, next) => {
    if (extensionsOf(req).includes(uri)) return next();
    sendA2AError(res, transport, jsonRpcId(req), new ExtensionSupportRequiredError(`Extension required: ${uri}`));
  };
}

/**
 * drop-after-accept: runs the send to completion (so the task really exists, COMPLETED,
 * for a later read-back) and then destroys the socket without writing a single byte.
 * Completing first makes the read-back deterministic for tests.
 */
export function dropAfterAccept(transport: Transport, handler: DefaultRequestHandler, log: TestLog): RequestHandler {
  return async (req, _res, next) => {
    if (!SEND_METHODS.has(methodOf(transport, req))) return next();
    await runThenDrop(transport, handler, log, req);
  };
}

/**
 * lose-marked-sends: honest, except per message — a send whose message says "lose before"
 * is reset unread (never executed), one that says "lose after" is run to completion and
 * then dropped (executed, its reply lost). So a test can lose one follow-up turn of a task
 * while the others go through (issue #25 item 2).
 */
export function loseMarkedSends(transport: Transport, handler: DefaultRequestHandler, log: TestLog): RequestHandler {
  return async (req, _res, next) => {
    if (!SEND_METHODS.has(methodOf(transport, req))) return next();
    const text = JSON.stringify(paramsOf(transport, req).message ?? null);
    if (text.includes('lose before')) return void req.socket.destroy();
    if (text.includes('lose after')) return runThenDrop(transport, handler, log, req);
    next();
  };
}

/** Runs a send to its terminal state, then destroys the socket without writing a byte. */
async function runThenDrop(transport: Transport, handler: DefaultRequestHandler, log: TestLog, req: Request): Promise<void> {
  try {
    const params = SendMessageRequest.fromJSON(paramsOf(transport, req));
    // Force blocking even for streams/returnImmediately: we want the terminal task stored.
    params.configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, ...params.configuration, returnImmediately: false };
    const ctx = new ServerCallContext({
      user: new UnauthenticatedUser(), // same owner scope the SDK adapters use with noAuthentication
      requestedVersion: '1.0',
      requestedExtensions: extensionsOf(req),
      tenant: params.tenant,
    });
    const result = await handler.sendMessage(params, ctx);
    if (!('messageId' in result)) log.accept(result.id);
  } catch (err) {
    // The drop is the behaviour under test; an execution error must not turn into a response.
    console.error('drop-after-accept: execution failed', err);
  }
  req.socket.destroy();
}

/** never-answer: holds send requests open with no bytes until the process (or close()) ends them. */
export function neverAnswer(transport: Transport, held: Set<Response>): RequestHandler {
  return (req, res, next) => {
    if (!SEND_METHODS.has(methodOf(transport, req))) return next();
    held.add(res);
    res.on('close', () => held.delete(res));
  };
}

/** reset-on-send: receives a send, executes nothing and resets the connection — delivered, then lost, with no task to find. */
export function resetOnSend(transport: Transport): RequestHandler {
  return (req, _res, next) => {
    if (!SEND_METHODS.has(methodOf(transport, req))) return next();
    req.socket.destroy();
  };
}

/** refuse-sends: answers every send with an A2A error that means "not executed" (UnsupportedOperationError, -32004). */
export function refuseSends(transport: Transport): RequestHandler {
  return (req, res, next) => {
    if (!SEND_METHODS.has(methodOf(transport, req))) return next();
    sendA2AError(res, transport, jsonRpcId(req), new UnsupportedOperationError('this agent takes no work today'));
  };
}

/**
 * duplicate-key-stream: an honest agent whose streamed artifact events carry the
 * text key twice (`"text":"…","text":"forged"`). JSON.parse keeps the last one;
 * Baton's strict parser must refuse the event instead (issue #25 item 7).
 */
export function duplicateKeyStream(transport: Transport): RequestHandler {
  return (req, res, next) => {
    if (transport !== 'jsonrpc' || !['SendStreamingMessage', 'message/stream'].includes(methodOf(transport, req))) return next();
    const write = res.write.bind(res) as (...a: unknown[]) => boolean;
    res.write = ((chunk: unknown, ...rest: unknown[]) =>
      write(typeof chunk === 'string' && /"artifactUpdate"|"artifact-update"/.test(chunk) ? chunk.replace(/("text":"[^"]*")/, '$1,"text":"forged"') : chunk, ...rest)) as typeof res.write;
    next();
  };
}
