/**
 * `tsx bench/profile-main.ts [seconds]`: only the profile step of `npm run bench`
 * (Baton under --cpu-prof at c=32), printed as JSON, for measuring one change
 * at a time. Also reports gateway CPU per request from the profile's busy time, and
 * the CPU of the main thread and of the other threads per request (/proc).
 * BENCH_PROFILE_TOP lists more functions; BENCH_PROFILE_C profiles another concurrency.
 */
import { profileBaton } from './profile.ts';

const quick = process.env.BENCH_QUICK !== '0';
const r = await profileBaton(quick, (s: string) => process.stderr.write(`${s}\n`));
process.stdout.write(
  `${JSON.stringify({ requests: r.requests, rps: r.rps, errors: r.errors, busyMs: r.busyMs, busyMsPerRequest: Math.round((100 * r.busyMs) / Math.max(1, r.requests)) / 100, threadsMsPerRequest: r.threadsMsPerRequest, byArea: r.byArea.map((a) => `${a.pct}% ${a.area}`), byOwner: r.byOwner?.map((a) => `${a.pct}% ${a.area}`), selfTop: r.selfTop.map((e) => `${e.pct}% ${e.ms}ms ${e.name} ${e.where}`), inclusiveSrc: r.inclusiveSrc.map((e) => `${e.pct}% ${e.name} ${e.where}`) }, null, 1)}\n`,
);
process.exit(0);
