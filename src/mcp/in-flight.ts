/**
 * MCP calls running in this process, by attempt id, so a stop (revocation,
 * suspension, breaker, operator) can cancel them (RW-003 §10.2: MCP
 * cancellation is cooperative — the SDK sends `notifications/cancelled` — and
 * proves nothing: the call's own verdict still decides, `unknown` staying
 * unknown).
 */
export class InFlightCalls {
  private readonly running = new Map<string, AbortController>();

  /** Registers a call; the returned signal aborts when it is stopped. `done` must be called when it ends. */
  start(attemptId: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    this.running.set(attemptId, controller);
    return { signal: controller.signal, done: () => this.running.get(attemptId) === controller && this.running.delete(attemptId) };
  }

  /** Cancels the call of `attemptId` if it runs here; false when it does not (another node, or over). */
  abort(attemptId: string, reason: string): boolean {
    const c = this.running.get(attemptId);
    if (!c) return false;
    c.abort(new Error(reason));
    return true;
  }
}
