/**
 * Server-sent events for the live views: one ticker for all watchers, which
 * re-renders the attempts table from the store (so work done on any node
 * shows) and sends it only when it changed. It runs only while someone
 * watches; a stream whose session expired is ended.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';

interface Watcher {
  res: ServerResponse;
  alive: () => boolean;
}

export class LiveFeed {
  private readonly watchers = new Set<Watcher>();
  private timer: NodeJS.Timeout | undefined;
  private last = '';
  private ticking = false;
  private beat = 0;

  constructor(
    private readonly deps: { render: () => Promise<string>; sample?: () => Promise<void>; pollMs: number; logger: Logger },
  ) {}

  /** Adds a watcher: it gets the current rendering at once, then every change. */
  watch(res: ServerResponse, alive: () => boolean): void {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    res.write(': live\n\n');
    const w = { res, alive };
    this.watchers.add(w);
    res.once('close', () => {
      this.watchers.delete(w);
      if (this.watchers.size === 0) this.stop();
    });
    this.last = ''; // the newcomer must get the table even if nothing changed
    this.timer ??= setInterval(() => void this.tick(), this.deps.pollMs);
    void this.tick();
  }

  private async tick(): Promise<void> {
    if (this.ticking) return; // never overlap passes
    this.ticking = true;
    try {
      for (const w of this.watchers) if (!w.alive()) w.res.end();
      if (this.watchers.size === 0) return;
      const body = await this.deps.render();
      const keepalive = ++this.beat % 15 === 0;
      if (body !== this.last) {
        this.last = body;
        this.send(`event: attempts\n${body.split('\n').map((l) => `data: ${l}`).join('\n')}\n\n`);
      } else if (keepalive) this.send(': keep-alive\n\n');
      if (this.beat % 5 === 0) await this.deps.sample?.();
    } catch (err) {
      this.deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'console live feed failed');
    } finally {
      this.ticking = false;
    }
  }

  private send(frame: string): void {
    for (const w of this.watchers) w.res.write(frame);
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Ends every stream (shutdown must not wait for them). */
  close(): void {
    this.stop();
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }
}
