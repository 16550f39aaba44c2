/** RW-003 §2 UtcTime and the injected clock the core reads instead of Date.now(). */
import { z } from 'zod';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can move by hand. */
export function manualClock(start: Date | string): Clock & { advance(ms: number): void; set(at: Date | string): void } {
  let t = new Date(start).getTime();
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
    set: (at) => {
      t = new Date(at).getTime();
    },
  };
}

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** RFC 3339 timestamp in UTC ("Z"), which also parses to a real instant. */
export const UtcTime = z
  .string()
  .regex(RFC3339_UTC, 'expected an RFC 3339 UTC timestamp ending in Z')
  .refine((s) => !Number.isNaN(Date.parse(s)), 'not a real instant');
export type UtcTime = z.infer<typeof UtcTime>;

/** Canonical UtcTime text for an instant (millisecond precision). */
export function utc(at: Date): UtcTime {
  return at.toISOString();
}
