/**
 * `npm run bench` (BENCH_QUICK=1 for a short smoke run): every benchmark
 * in one run, side by side, on loopback. Writes bench/results.json and
 * regenerates bench/RESULTS.md. Bounded throughout: fixed durations or
 * counts, hard timeouts, and every process and temp dir cleaned up.
 *
 * BENCH_SOAK=0 skips the soak (step 7, up to BENCH_SOAK_MAX_MIN of load) and
 * carries the last soak in bench/results.json over, dated; `npm run
 * bench:soak` runs the soak alone. BENCH_ROOT_LIFETIME_S overrides the preset
 * lifetime (production default 3,600 s); BENCH_GROWTH_UNEXPIRED=1 seeds the
 * growth history unexpired; BENCH_RENDER_ONLY=1 re-renders RESULTS.md.
 * BENCH_ONLY=mcp runs only the MCP tools/call phase (about a minute, half
 * quick) and prints it; over the results.json of an earlier full run it also
 * merges it in and re-renders RESULTS.md, so no other section is lost.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { stopAll } from '../e2e/harness/process.ts';
import { benchAdmission } from './admission.ts';
import { benchContracts } from './contracts.ts';
import { benchHttp } from './http.ts';
import { benchMcp, type McpResults } from './mcp.ts';
import { renderMcp } from './mcp-report.ts';
import { cleanupTemp, machine, spawnLines, stopAllLines } from './lib/proc.ts';
import { profileBaton } from './profile.ts';
import { benchSoak } from './soak.ts';
import { benchWorkers, type WorkersResults } from './workers.ts';
import { renderMarkdown, targetsOf, type Accounting, type Results } from './report.ts';

const quick = process.env.BENCH_QUICK === '1';
const RESULTS_JSON = fileURLToPath(new URL('./results.json', import.meta.url));
/** The last run's results, if any (BENCH_RENDER_ONLY, and BENCH_SOAK=0 carrying its soak over). */
function previous(): Results | undefined {
  try {
    return JSON.parse(readFileSync(RESULTS_JSON, 'utf8')) as Results;
  } catch {
    return undefined;
  }
}
const started = Date.now();
const soakOn = process.env.BENCH_SOAK !== '0';
// The soak stops its own load at BENCH_SOAK_MAX_MIN (60 min, 10 quick); everything else takes about 24 min (7 quick).
const SOAK_MAX_MIN = soakOn ? Number(process.env.BENCH_SOAK_MAX_MIN ?? (quick ? 10 : 60)) : 0;
const HARD_LIMIT_MS = ((quick ? 8 : 29) + (soakOn ? SOAK_MAX_MIN + 5 : 0)) * 60_000;
const log = (s: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);

async function cleanup(): Promise<void> {
  await Promise.allSettled([stopAll(), stopAllLines()]);
  cleanupTemp();
}
const hard = setTimeout(() => {
  log(`hard time limit (${HARD_LIMIT_MS / 60_000} min) reached; stopping everything`);
  void cleanup().finally(() => process.exit(1));
}, HARD_LIMIT_MS);
hard.unref();
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void cleanup().finally(() => process.exit(130)));

if (process.env.BENCH_ONLY === 'mcp') {
  // Only the MCP phase. Merged into RESULTS.md only over a full run's results.json (never a section lost to a partial run).
  try {
    const mcp: McpResults = { ...(await benchMcp(quick, log)), only: true };
    const results = previous();
    if (results?.http && !results.machine.quick) {
      results.mcp = mcp;
      Object.assign(results, targetsOf(results.http, results.admission, results.workers, results.soak, mcp));
      writeFileSync(RESULTS_JSON, `${JSON.stringify(results, null, 2)}\n`);
      writeFileSync(fileURLToPath(new URL('./RESULTS.md', import.meta.url)), renderMarkdown(results));
      log('merged the MCP phase into bench/results.json and re-rendered bench/RESULTS.md');
    } else {
      log('no full run in bench/results.json: RESULTS.md left as it is; the MCP section follows');
    }
    process.stdout.write(`${renderMcp(mcp, results?.http ?? { rows: [], timing: { warmupMs: 0, durationMs: 0, minWarm: 0 } }).join('\n')}\n${JSON.stringify(mcp)}\n`);
  } finally {
    await cleanup();
    clearTimeout(hard);
  }
  process.exit(0);
}

const notes: string[] = [];
/** Measurements taken by hand while working on issue #15 (not re-measured by this run). */
const HISTORY = [
  'Issue #15, group commit (src/store/sqlite/group-commit.ts): measured by hand with bench/admission.ts `processes()` (one SQLite process, depth-3 chain, 1 s warm-up + 4 s), old and new store alternated within two minutes at load average 5–8: before 234 and 298 admissions/s with 1 in flight, 143 and 220/s with 32 in flight; after 293, 280 and 194/s with 1 in flight, 767, 936 and 558/s with 32 in flight, 32 admissions per transaction. Durability is unchanged: journal_mode=WAL, synchronous=FULL, BEGIN IMMEDIATE, and each admission is acknowledged only after the COMMIT that holds it returned.',
  'Issue #15, verified-signature cache (src/records/verified-signatures.ts): contracts Baton signs are entered into the cache at signing, so the per-request accounting counts 0 ECDSA verifications (3 before); anything else is still verified once per exact (signing input, signature, key).',
  'Issue #15, frozen records and cached canonical bytes: sealed, signed and decoded records are deep-frozen (src/records/canonical.ts `freezeCanonical`), and the JCS text of each frozen object, its digest, its content digest, its contract parse and its signing text are computed once and kept in WeakMaps keyed by the object; the store\'s decoder answers a re-read of the same row (byte-equal document) with the frozen record, primed by putRecord with the record just written; card bytes are prepared (parsed, validated, digested) once per cached buffer. One-pass JCS writer, checked against the `canonicalize` package on 500 generated values. Profile at c=32 (bench/profile-main.ts, load average 0.8 before): `canonicalize` 20.4 % self + `assertCanonicalisable` 2 % and `computeContentDigest` 8.6 % inclusive before; after, the JCS writer is about 7 % inclusive and `computeContentDigest` left the top 15. Gateway CPU per request, old and new tree alternated (bench/ab-cpu.ts, load average 19–21, so every figure is inflated): c=4, 24.17 / 26.14 / 22.65 ms before vs 22.09 / 21.91 / 21.95 ms after (−9.5 % mean); c=32, 21.32 / 18.63 vs 17.39 / 18.75 ms.',
  'Issue #15, capacity counts (session 5): the ADR-0014 active-root, retained-record and preset counts scanned every unexpired node with two EXISTS subqueries each, so with the production preset lifetime (3,600 s) a gateway slowed down as settled-but-unexpired roots piled up: one Baton at c=32 fell from 16.2 to 1.9 req/s within 6,807 requests (bench/soak.ts, 1,200-request stretches, load average 5–10). They now walk `ledger_live_roots` (src/store/capacity.ts, migration 10), whose rows every write that can change a root\'s liveness recomputes from the reservations. Timed directly over 33,334 settled-but-unexpired seeded tasks (10^5 retained records): active roots 132.9 → 0.007 ms, retained records 215.7 → 0.013 ms, preset active roots 102.1 → 0.007 ms per count (old SQL vs new, same store, same run). A differential fast-check test holds the new counts equal to the rule over the raw rows on SQLite and PostgreSQL.',
  'Issue #15, JavaScript on the request path (session 5): each new record\'s canonical text written once (sealing copies, freezes and writes in one pass; signing reuses the sealed text; control events composed from member texts), contracts Baton itself issues or mints no longer re-validated by zod (everything read from the store, the network or a caller still is), strict JSON through native JSON.parse behind a pre-scan that proves the strict parser would agree, per-object parse caches for stored attempts and cached cards, tracing a no-op without the SDK, fence heads read in one call. Gateway CPU per request, old and new tree alternated (bench/ab-cpu.ts, load average 4–8): c=32 29.38 / 30.44 / 27.48 → 22.66 / 23.29 / 19.43 ms; c=1 29.39 / 29.76 / 29.07 → 24.68 / 23.49 / 18.36 ms.',
  'Issue #15, memory (session 5): a heap snapshot after 1,500 requests held 2.5 million strings (123 MB of a 207 MB heap), the ropes cached as canonical text for every nested object of every cached record; texts are now cached for a written value and its direct members only (c=32 CPU alternated, same window: 16.96 / 16.67 / 22.02 ms before, 14.46 / 15.95 / 17.48 ms after). A 50-minute soak before that change and before the JavaScript cuts (c=32, 3,600 s lifetime, load average 4–12 from other work) ran 56,005 requests: gateway RSS 499.6 MiB after 10,000, 508.5 / 518.1 / 521.6 / 514.9 MiB after 20,000 / 30,000 / 40,000 / 50,000 and 512.2 MiB at the end (+2.5 %), 16 errors, all in the first 20,000 while the machine was most loaded.',
  'Issue #24, SQLite statement journals (session 13): every statement that writes more than one row or fires a trigger needs a statement journal, and with temp_store = FILE (the better-sqlite3 build\'s default) such statements cost far more: timed on a copy of a bench store, a two-row INSERT into ledger_nodes 290 µs vs 28 µs with temp_store = MEMORY, a root\'s one-row INSERT (its live-root trigger) 104 vs 25 µs. With the pragma (src/store/sqlite/database.ts), SQL per delegated call at c=32, timed per statement in the gateway (hrtime around each better-sqlite3 call, 454 and 531 requests): 2.09 → 1.31 ms; records INSERT 131 → 57 µs, control_events INSERT 105 → 32 µs, ledger_nodes INSERT 192 → 37 µs, the verdict\'s reservation UPDATE 143 → 62 µs. Gateway CPU per request alternated with the previous tree (bench/ab-cpu.ts, c=32): 8.99 / 9.36 / 9.81 ms before, 8.75 / 9.12 / 9.02 ms after; durable admission (bench/admission.ts quick, same window) 1,519 → 1,877/s with 32 in flight, 523 → 708/s with 1. Also: JCS key order by an in-place insertion sort (Array#sort\'s work arrays were 17 % of the bytes a call allocates in a sampled heap profile; 1.65 → 1.34 MB allocated per call, CPU unchanged within noise). WAL pages per call, counted (pwrite64 of 4 KiB frames to the -wal file under strace; page numbers mapped to B-trees with dbstat): 97.5 at c=1 for about 37 KB of payload; records 7 + 3 overflow, its content-digest index 5, control events 5 and their idempotency index 3.7, every other table and index about 2 (one page per transaction), the schema page 2 (the file grows every commit).',
  'Issue #15, PostgreSQL admission lock order (session 5): admissions share-locked the fence heads before locking the chain\'s balances, so admissions queued on the balances each held a head share-locked and a revocation\'s FOR UPDATE waited while they kept coming (four racing processes: > 120 s); the balances are now locked first (2.3 s).',
  'Issue #24, where the CPU goes besides the main thread (session 14): /proc per thread (bench/ab-cpu.ts, the profile step) put 2.3-3.9 ms of every delegated call at c=32 on threads other than the main one, which a --cpu-prof profile never shows. With --no-concurrent-recompilation about 1.5 ms of it moved to the main thread: V8 was still optimising code (297 optimisations of 285 distinct functions, 33 deoptimisations, mostly "wrong map", in a 6 s window after a 2 s warm-up; a warm-up, not a loop). --single-threaded-gc moved about 1 ms: the parallel scavenger. GC traced at c=1 (--trace-gc-nvp): a scavenge every ~10 requests, 7-9 ms each with ~1.8 MB survived and promoted, i.e. ~0.75 ms of main-thread pause and ~0.95 ms of helper time per request; --max-semi-space-size=64 changed neither (fewer, longer scavenges). The decoded-record cache (4,096 entries) holds 31 MB of a 72 MB live heap but is not what the scavenges copy (promoted bytes 53.5 → 49.1 MB per 6 s with it at 1 entry). Tried and left: page_size 1,024/2,048/8,192 and checkpoints every 16/64/256 transactions, no difference above this machine\'s noise (ab-cpu c=32 of one tree ranges 9.1-12.0 ms between runs, so an A/B below ~10 % is not resolvable here). Taken: a sealed body copied in JCS key order and written by JSON.stringify, only record and body remembered as deep-frozen (canonicalCopy and text of a call\'s 7 records 200-210 → 148-165 µs in a microbenchmark, weak-set entries per call 118 → 35, bench/accounting.ts); SQLite migration 17 drops ledger_reservations_live, unread since the counter (a B-tree page per admission and per verdict).',
  'Issue #24, the verdict without pre-reads (session 15): a turn admitted here is judged on what its admission left; the settle program settles its reservation only while still held (held_only: conflict not_held, nothing written, judged again on the store) and checks its fences in the same transaction (fences: a head that moved makes the outcome unknown, RW-003 §1.2, closing the window between the fence read and the commit). Statements per delegated call 33 → 31 on SQLite and 19 → 18 on PostgreSQL, store reads outside a transaction 3 → 1 (bench/accounting.ts). Measured alternated with the previous tree (bench/ab-cpu.ts, c=32): 9.36 / 10.42 / 9.14 ms before, 9.06 / 8.95 / 9.32 ms after, within noise; SQL per call at c=1 (bench/accounting.ts, each statement timed) 2.01 / 2.13 → 1.96 / 1.99 ms. Also measured: an autocommit read costs ~10 µs more than the same statement inside a transaction (a primary-key lookup 14.5 vs 4.1 µs, a 4-row VALUES-join of control_heads 24.7 vs 15.2 µs); one durable admission at c=32 in one process costs ~510 µs of CPU, 245 µs of it SQL (the reservation INSERT with its live-root and counter triggers 42 µs, COMMIT 59 µs amortised); allocation per delegated call 1.2-1.3 MB (bench/accounting.ts {"alloc":true}), the records module\'s share charged to receiptOf 79 KB (the evidence digest over a read-back whose history echoes both contracts), sealContract 67 KB, composeEvent 110 KB with its own.',
  'Issue #24, measured and left out (session 16): WITHOUT ROWID for the text-keyed tables (microbenchmark, 200,000-row tables, 7 head upserts and 2 node inserts per transaction: 18.7 WAL frames and 246-255 µs per transaction with rowid tables, 19.2 frames and 272-313 µs without; the time-ordered ids already append at the right edge); a sorted copy plus JSON.stringify for the canonical text of large unfrozen values (a 4 KB task with two contracts in its history, hashed: 20-25 µs with the writer, 23-29 µs with the copy); secure_delete OFF on the hot path (SQL per call at c=1 1.76 / 1.91 ms ON, 1.94 / 1.86 ms OFF); a longer JIT warm-up (1.5 s against 20 s before the c=32 CPU window, three alternated pairs: 7.27 / 7.72, 10.01 / 10.84, 8.56 / 10.67 ms, noise). Taken: the admission appends the issued events its plan composed instead of composing them again under the lock (SHA-256 per delegated call 41 → 37, bench/accounting.ts); rows read back are checked with zod at the store edge (about 0.4 µs per row, 1.9 % of a durable admission\'s CPU in its profile). Durable admission profiled in one process (the bench\'s workload, 32 in flight): 1,700-1,970/s at 520-600 µs of CPU each, SQL about 45 % (reservation INSERT with its triggers 41 µs, fence VALUES-join 17 µs twice, balances read 19 µs, the chain walked one node per statement 3 × 6 µs, COMMIT 1.3 ms per batch of about 32); nothing in the rest above 10 %.',
  'Issue #24, record heads and the reservation in the batch (session 17): on PostgreSQL a batch writes its record revisions with no head read first (src/store/tx/rows-sql.ts recordParts: an INSERT … SELECT that writes a revision only where it fits its head, and one upsert that moves a head only while the row itself still names the prior, so a head moved after the snapshot is a short count and a head_moved refusal, no fork), and the admission\'s reservation rides in the batch\'s one statement: statements per delegated call 18 → 15 on PostgreSQL. On SQLite the same conditional insert was measured slower and left out: the records INSERT of the hot path 130 / 132 µs per call as INSERT … VALUES after a head read, 268 / 288 µs as INSERT … SELECT (256 / 262 without the self-reference, 281 / 295 without RETURNING; bench/accounting.ts, 150 calls); a microbenchmark puts the extra at +2 to +8 µs per 3-row insert with 2.5 KB documents and +20 to +30 µs with 20 KB ones, the documents carried through the statement once more. SQLite stays at 31 statements, SQL per call unchanged within noise (2,063 / 2,389 µs before, 2,065 / 1,947 µs after). PostgreSQL durable admission, one process, old and new tree alternated five times: 170 / 159 / 147 / 140 / 128 vs 143 / 146 / 163 / 130 / 156 admissions/s, not resolvable on this machine (its bare-commit floor was 6,003/s in this run, 9,446/s in the last).',
  'Issue #24, fewer bytes and statements per admission (session 18): a reservation row keeps of its admission receipt only the decision ref (src/ledger/stored.ts StoredReceipt; a replay rebuilds the receipt from the row\'s columns and its own request, whose digest fixes the fence set), so the receipt column holds 200 bytes per delegated call instead of 1,586 and the reservation INSERT took 98 / 91 → 81 / 77 µs at c=1 (bench/accounting.ts, alternated); an admission reads a stored chain in one statement (a recursive walk, src/store/tx/rows-sql.ts lineageSql: the durable-admission benchmark\'s depth-3 chain 3 statements → 1); the balances of the nodes an admission opens are inserted charged and written in the batch\'s own write, so no balance row is inserted and then updated, and on PostgreSQL the node insert joins the batch\'s one statement; on SQLite the live-root prune runs in the root\'s own insert trigger (migration 18). Statements per delegated call: SQLite 31 → 29, PostgreSQL 15 → 14 (asserted). SQL per call at c=1, old and new tree alternated: 1,971 / 1,965 / 1,959 / 2,084 µs before, 2,108 / 2,020 / 1,949 / 1,894 µs after — within noise, as is the durable admission (in one process, 32 in flight: 2,190 / 1,927 / 1,751 vs 1,915 / 1,914 / 1,738 per second). Measured and left: the decoded-record cache is not what the collector pays for (whole-process CPU per call at c=32 with written records remembered and without, three alternated pairs: 9.84 / 10.50 / 9.71 vs 10.66 / 10.21 / 13.27 ms); --single-threaded-gc, --max-semi-space-size=32 and --v8-pool-size=1 (11.03 / 10.09 / 10.25 / 10.89 ms against the default\'s first, 13.93 / 14.30 / 14.20 / 11.41 ms in a second round: the machine moves more than any of them); a no-op guard on the live-root upsert of every reservation INSERT (59-60 µs either way). The helper threads\' CPU per call falls from about 3.9 to 1.8 ms within 12 s of c=32 load (the JIT settling), so a window right after a short warm-up overstates it.',
  'Issue #24, PostgreSQL statements prepared once, and what else was measured (session 19): node-postgres sent every parameterised query unnamed, so the server parsed and planned each one on every execution; now each text is a named statement, prepared once per connection (src/store/postgres/prepared.ts; at most 512 texts per process; store.preparedStatements: false behind a pooler that cannot keep them; a statement another node\'s migration made stale, 0A000, goes unnamed and runs again). PostgreSQL server CPU per durable admission 2.15 → 1.47 ms (/proc of the server\'s processes, one process admitting in sequence); admissions/s, old and new tree alternated: one process 249 / 265 → 318 / 321, four 416 / 410 → 481 / 482, one with 8 in flight 294 / 293 → 357 / 368; the gateway on PostgreSQL at c=32 (bench/workers.ts quick) 99.8 → 106.8 req/s with one worker, 105.7 → 115.8 with two, its own CPU per request unchanged (7.4 ms). SHA-256 by node:crypto\'s one-shot hash (0.4 vs 0.8 µs for 300 bytes, 37 digests per call) and ids written from the millisecond and the pool into one reused buffer (0.53 → 0.26 µs an id): allocation per delegated call 1,274 → 1,245 KB (bench/accounting.ts, alternated). Measured and left: the SQLite store on a worker thread (a bench-only prototype, admissions built on the main thread and run by SqliteStore in a worker): 2,423 / 2,634 against 2,408 / 2,333 durable admissions/s in one thread at about 20 % more CPU per admission, since a program\'s JavaScript runs with its SQL; group-commit batches of 16 or 8 instead of 64 (2,331 / 2,091 / 2,223 against 2,700 / 2,743 admissions/s: a transaction costs about 1 ms of CPU, mostly WAL frames); mmap_size 256 MiB (no difference); the chain read as one recursive statement against one primary-key read per node (13-14 against 7.5-10.5 µs for three nodes in a hot loop, about 3.5 µs per admission on a stored chain; kept, as it is one round trip on PostgreSQL); Ed25519 instead of ES256 (slower here: sign 35 against 26-29 µs, verify 91-95 against 68-69 µs); pino\'s redaction, which parses its 27 paths on every call (16 µs per logged line against 2 µs without, 2 µs per request for the access logger\'s child at warn). An event\'s input texts and composition cost 27 µs each in a microbenchmark (two sorts and three concatenations of ~2 KB, two SHA-256), 5 events per call. Profiled at c=1 on a quiet machine: 5.7 ms on the main thread and 2.6 ms on others per request at 80 req/s, the store 23 % of the main thread (COMMIT and the savepoints 6 %), records 15 %, Node internals 15 %.',
  'Issue #24, 20 statements per delegated call on SQLite (session 20): SQLite has no data-modifying WITH, so every row a write implies (a head, a charge) had a statement of its own; now it rides on the statement of the row it follows from. SQLite migration 19 adds three views a batch appends through, each with an INSTEAD OF trigger (src/store/sqlite/appends.ts): record_appends checks each revision against its record\'s head (the rule of records/put.ts, as PostgreSQL\'s insert does) and moves the head, aborting the whole statement when one does not fit, after which the batch reads the heads and the single-row rules name the refusal as before; control_appends writes an event and its stream\'s head; ledger_journal writes an entry and adds its row\'s charge. Migration 20 (both dialects) ends an effect\'s follow-up in the statement that moves its reservation out of held. A new root\'s capacity statement also counts the reservations holding the admission\'s ids, so a new task reads no claims of its own, and a plain admission reads its audit stream\'s head with the fence heads. Statements per delegated call 29 → 20 on SQLite and 14 → 13 on PostgreSQL (e2e/statements.test.ts asserts both); the durable admission\'s transaction 14 → 9 statements. CPU, old and new tree alternated on a machine about half as fast as session 19\'s (bench/ab-cpu.ts c=32): 14.48 / 15.64 / 15.22 ms per call before, 15.74 / 15.73 / 15.38 ms after; durable admission in one process, 32 in flight (before the audit stream\'s read was folded in): 1,070 / 1,126 against 1,067 / 1,072 per second. A statement costs microseconds here and the trigger does its work, so the count fell and the CPU did not.',
  'Issue #24, measured past the JIT warm-up (session 21): every A2A phase, the profile step and bench/ab-cpu.ts first drive their process with a c=32 burst of up to 4,000 requests (45 s at most; bench/lib/load.ts warmJit). V8 optimises a function only after some thousands of calls, and a c=1 Baton that had served 150 requests was still compiling: --trace-opt counted about 90 first-time TurboFan compiles in a 5 s window even after 1,300 requests, and its compiler threads cost about 2 ms a call. The same burst warms every route, so the pass-throughs got faster too (read-back pass-through at c=32: 626 → 1,315 req/s on this run\'s machine) and the throughput ratio fell. bench/wal-frames.ts counts the WAL frames a delegated call writes, by B-tree (strace on the frame headers, pages named by dbstat): 113 per call at c=1 (2 commits of 57), 44 at c=32 (about 6 programs per transaction); the records\' content_digest index alone, random by nature, is 9 of them at c=1 and 8 at c=32.',
  'Issue #24, the records\' content_digest index dropped (session 22): a record\'s content digest covers its revision id, so revision_id UNIQUE already made it unique, and every read by digest held the whole RevisionRef (now src/store/record-at.ts, by revision id, answered only when the digest matches too). Migration 21 drops the constraint on PostgreSQL and rebuilds records and record_heads on SQLite (which cannot drop a constraint\'s index; 100,000 records of 2.5 KB: 2.5 s and 424 MB of WAL, with secure_delete off for the copy since the old pages hold the same rows, 5.1 s and 855 MB with it on). WAL frames per delegated call (bench/wal-frames.ts): 113 → 102.6 at c=1, 44 → 37.1 at c=32. Statement time per call unchanged within noise (bench/accounting.ts, the record INSERT 233 / 235 µs before, 226 / 291 µs after, in runs where every statement moved together). Also measured: two Baton processes of the same commit, run side by side in alternating 3 s slices (bench/ab-interleave.ts), differed by 8-10 % in CPU per call (1.079 and 0.904), so a difference between processes, not only machine drift, limits what an A/B on this VM can resolve. The MCP phases now get the JIT warm-up burst too (2,000 calls at c=32, 25 s at most).',
  'Issue #24, five small keyed tables WITHOUT ROWID (session 23): SQLite migration 22 rebuilds record_heads, control_heads, attempt_work, ledger_balances and ledger_live_roots as WITHOUT ROWID tables, one B-tree each where a rowid B-tree and a key index were two (src/store/sqlite/without-rowid.ts; 100,000 record heads take 0.4 s to rebuild). WAL frames per delegated call (bench/wal-frames.ts): 101.5 → 99.3 at c=1, 37.1 → 32.7 at c=32 (a batch had shared the rowid B-trees\' last pages, so the gain is at c=32). ledger_nodes and ledger_reservations rebuilt the same way (foreign keys off for the migration) changed nothing measurable (99.2 and 33.3 frames) and were left. Session 16 had left WITHOUT ROWID out on a microbenchmark (200,000-row tables: 18.7 against 19.2 frames and 246-255 against 272-313 µs per transaction); in the gateway, statement by statement (bench/accounting.ts, 400 calls at c=1, old and new tree alternated five times), SQL per call came out at 1,544 µs on average on this tree against 1,634 µs on the previous one (1,421-1,754 against 1,440-1,762), COMMIT 474 against 500 µs, and no statement slower. Process CPU per call against the previous tree, interleaved (bench/ab-interleave.ts, old / new): 1.033 at c=32, 0.914 at c=1, both inside the ~10 % by which two processes of one build differ. This run\'s machine was slower than session 22\'s (bare-commit floor 7,180/s against 17,941/s; read-back pass-through at c=32 1,639 against 1,874 req/s), and its --workers 2 vs 1 on SQLite came out at 0.99×; four reruns of that step alone gave 1.24× and 1.11× on this tree and 1.10× and 1.05× on the previous one. Also measured and left: page_size 1,024 / 2,048 / 8,192 against 4,096 (main-thread CPU at c=1 8.44 / 6.69 / 6.28 against 6.20-6.95 ms: smaller pages overflow the 3-6 KB records, larger ones change nothing resolvable); --max-semi-space-size=64 (GC 8.2 → 6.2 % of the c=32 profile, CPU within noise); allocation about 1.1 MB per delegated call at c=32 (V8 sampling heap profiler counting collected objects: canonical JSON writing about 260 KB, composeEvent 55 KB, the rest spread thin); the documents per call (two contracts of about 5.1 KB, two attempt revisions of 3.7 KB, a receipt of 2.2 KB, a decision of 2.1 KB, a task input of 0.7 KB, five events of 1.1-2.2 KB); threads at c=1 past the warm-up, per call: main 6.9 ms, others 1.3 ms (V8\'s helpers about 0.65, libuv\'s pool 0.37, the WAL checkpointer 0.26).',
  'Issue #24, the commit\'s bookends and the WAL\'s sync (session 24): a group-commit batch of one program (every batch at c=1) runs in the transaction itself, without a SAVEPOINT, so SQLite no longer copies each page the program dirties into a statement journal and frees it on RELEASE (a refusal rolls the whole transaction back and is still answered after the next fsync); SQL per delegated call at c=1 (bench/accounting.ts, 400 calls, old and new tree alternated three times) 2,178 / 2,530 / 2,124 → 2,046 / 1,975 / 1,984 µs, RELEASE alone having been 37-62 µs. The WAL\'s sync keeps one descriptor open while the store is (checked against the path by inode, a synchronous stat, before each sync) and uses fdatasync, as SQLite and PostgreSQL do for a WAL: one trip to libuv\'s pool per commit instead of three (open, fsync, close were 2.4 % of the main thread at c=1 in its profile). The WAL checkpoint interval stretches from 16 up to 256 transactions toward a 4,000-frame WAL (src/store/sqlite/checkpointer.ts): at c=1 a checkpoint every 16 transactions (8 calls) copied the same hot pages again and again, and the checkpoint worker took 0.49 / 0.44 ms per call at c=1, 0.28 / 0.24 ms after (/proc per thread, old and new alternated); at c=32 the interval stays about 16. Also measured and left: GC at c=32 by --trace-gc (a scavenge every ~10 requests, 6-9 ms each, ~35 % survival: the 32 in-flight requests\' objects outlive two scavenges; --max-semi-space-size=64 cut scavenge time 1,040 → 690 ms per 1,200 requests and left CPU per call at 8.6 ms either way); the written-records cache off (scavenge time and throughput slightly worse); SAVEPOINTs dropped from multi-program batches too (5-6 µs per program in a microbenchmark, against re-running a batch after any refusal); the synchronous pragma\'s two exec calls per transaction (1 µs together). Process CPU per call, interleaved with older trees (bench/ab-interleave.ts, which now also reports each side\'s median p50): 7.14 against 7.27 ms at c=32 against session 23\'s tree; at c=1 three pairs disagreed — 14.09 against 12.40 ms (session 23\'s tree) and 13.33 against 10.93 ms (this session\'s tree before the checkpoint change) in the older trees\' favour, then 10.85 against 11.36 ms for the checkpoint change alone (the same tree with the frame target off) in its favour — so the per-thread, per-statement and per-syscall counts above are the evidence, not process CPU. This session\'s machine was slower again than session 23\'s: the full run put Baton at 15.73 ms per call at c=1 and 8.62 ms at c=32, against 8.87 and 5.59 ms then, while the read-back pass-through took 1.07 against 0.53 ms at c=1 and 0.22 against 0.23 ms at c=32.',
  'Issue #24, nothing hashed under the write lock, and another process\'s lock waited for on a timer (session 25): the request digests, the new nodes\' digests and the attempt stream\'s audit events are computed before the transaction (src/ledger/prepare.ts), composed on the head this process last committed to their stream and appended as they are where that is still the head (TxBatch.appendPlanned; else composed in the transaction): SHA-256 digests between BEGIN and COMMIT per delegated call 9 → 0 (e2e/statements-suite.ts counts them on both stores), the write lock held 3,377 / 3,267 → 3,064 / 2,925 µs per call at c=1 (bench/accounting.ts lockHeldUsPerRequest), CPU per call unchanged (the same thread does the work). A batch whose BEGIN IMMEDIATE finds another connection\'s lock waits on a timer (1 ms doubling to 8 ms, up to the busy timeout) instead of inside SQLite\'s busy handler, which blocked the event loop: durable admission with 4 processes × 1 in flight 499 / 505 → 512 / 534 per second, p99 71 / 82 → 44 / 45 ms. Also measured: a call at c=1 costs 11.05 ms on the main thread against 7.06 at c=32, spread over every function (the cost of waking a cold process per event); 302 system calls per call at c=1 (pwrite64 217); a call stores 22.6 KB of records, 7.7 KB of events and 0.5 KB of content, and its read-back carries 10.3 KB of Baton\'s own echoed chain (parseStrictJson 94 µs and digestOf 79 µs on it); on PostgreSQL one admitting process already kept the 2-core machine 54 % busy (2.1 ms of Node and 2.3 ms of server CPU per admission).',
  'Issue #24, PostgreSQL transactions pipelined (session 26): node-postgres sends one statement per round trip, and a transaction\'s BEGIN and COMMIT were one each, so a delegated call made 17 round trips to the database. Now several statements go before one Sync (src/store/postgres/pipeline.ts): BEGIN rides on a transaction\'s first statement; the reads its program will make go ahead together (a copy of the program runs on presumed answers — new nodes and streams without rows, nothing claimed, capacity to spare — and the program\'s own calls are answered from the reads only while each is the very call read ahead); the batch\'s write is answered as planned at once and rides with what follows it, COMMIT included, as a statement that fails (SQLSTATE BT001, migration 23) unless it wrote exactly what the program planned, so no COMMIT behind a miss commits. Any miss rolls back and runs the program statement by statement (src/store/postgres/transaction.ts). A new task\'s admission is 2 round trips, its verdict 3 (its COMMIT waits for the fence check), a delegated call 8 (e2e/statements-suite.ts asserts it; statements stay 13). The gateway on PostgreSQL at c=32 (--workers 1, old and new tree alternated twice): 47.9 / 43.8 → 53.6 / 47.8 req/s, gateway CPU 16.2 / 18.1 → 15.3 / 17.3 ms per call; at c=1 behind a TCP relay adding about 1 ms each way, p50 80.8 / 78.0 → 49.3 / 51.6 ms; on plain loopback the c=1 p50 (30.1 / 32.0 → 29.3 / 25.2 ms) and durable admission (1 process 172 / 218 → 228 / 188 per second, 4 processes 258 / 276 → 262 / 225) do not resolve on this machine. Noticed: the server\'s CPU per delegated call was about 10-12 ms in that run (all postgres processes), and pg_stat_user_tables showed 5 sequential scans of control_heads and 2 of record_heads per call on a fresh schema of ~600 calls: the generic plans of the stream-head reads (a join against unnest() of parameter arrays, estimated 100 rows) hash-join a small table; a later EXPLAIN on the grown tables chose index probes.',
  'Issue #24, a preset\'s per-minute issuance kept as a counter row (session 27): the capacity statement counted every root the preset issued in the last minute, on every new root (ledger_nodes_by_preset, about 30 ns a root on SQLite: O(rate × 60 s) under the write lock). Migration 24 keeps, per preset, the count of its roots issued after the row\'s own start, moved to a minute before each new root by a trigger on the statement that inserts it (SQLite: per row; PostgreSQL: per statement, over a transition table); the read corrects it by the roots between the two starts, one range empty, exactly (src/store/capacity.ts presetIssuedSinceSql; test/store/support/live-roots.ts compares it with the rows through sub-minute steps and a clock that goes back). The capacity statement at c=32 after 70 s of load (statement timings inside the gateway): 154 → 71 µs per call; SQL per call 1,332 → 1,131 µs. Measured and left: at c=32 a call allocates 1.13 MB (canonical texts 0.19 MB, parsing the 10.7 KB first stream event and the 10.8 KB read-back, each carrying Baton\'s own 10.2 KB chain, 0.06 MB); the WAL takes 36.5 frames per call at c=32 (141.9 per commit), 7.5 of them the records\' own pages; --max-semi-space-size 32 or 64 again did not resolve against this VM\'s noise.',
  'Issue #24, the contract chain out of the delegatee\'s task (session 28): an A2A agent keeps the message it is sent in the task\'s history, so the chain Baton attached to the message (a 4.2 KB root and a 6.0 KB child contract) came back in the first stream event and in the read-back of every call, each parsed strictly and the read-back digested whole for the receipt\'s evidence digest, and stayed in the agent\'s task store. It now travels in the request\'s own metadata (SendMessageRequest.metadata, A2A §3.2.1), which is not part of the task, wherever the delegatee\'s card does not declare the extension the old way (src/gateway/chain-placement.ts: Baton\'s proxy cards declare params.chainPlacement "request"; a card that declares the extension without it still gets the chain in the message; a downstream Baton reads either and refuses both at once). The first event and the read-back shrink from about 10.7 KB to about 0.6 KB. Measured on the same machine within minutes, old and new tree alternated twice (bench/profile-main.ts, full warm-up, c=32): main-thread busy time per call 6.63 / 6.62 → 5.39 / 5.50 ms, throughput 147.3 / 147.5 → 182.6 / 178.6 req/s, the process\'s other threads 1.38 / 1.51 → 1.05 / 1.02 ms per call; strict JSON parsing 3.4 → 1.1 % and the evidence digest 2.5 → 1.2 % of the profile; allocation per call at c=1 1,171 → 1,046 KB (bench/accounting.ts {"alloc":true}). This run\'s machine was faster than session 27\'s (bare-commit floor 8,728 against 5,330/s, read-back pass-through at c=32 1,518.5 against 1,042.1 req/s), so the CPU figures above it are not comparable with that run\'s; the alternated pairs are the evidence. Also: on PostgreSQL the capacity statement\'s text is built once per variant instead of per call (about 1.5 KB of string building per transaction). Measured and left: JSON.stringify of a forwarded request re-walks the two sealed contracts whose canonical texts are already cached (31 µs in a hot loop; splicing the cached texts 2.5 µs), worth about 1 % and a placeholder scheme to do it; the capacity statement\'s live-root walks now 84 µs a call at c=32; card continuity\'s read of card_history per call 27 µs.',
];
if (process.env.BENCH_RENDER_ONLY === '1') {
  // Re-render RESULTS.md from the last results.json without measuring.
  const results = previous();
  if (!results?.http) throw new Error('BENCH_RENDER_ONLY=1 needs the bench/results.json of a full `npm run bench`');
  Object.assign(results, targetsOf(results.http, results.admission, results.workers, results.soak, results.mcp)); // the target rules may have changed since
  // History entries written since that run.
  results.notes = [...results.notes, ...historySince(results.notes)];
  writeFileSync(fileURLToPath(new URL('./RESULTS.md', import.meta.url)), renderMarkdown(results));
  process.exit(0);
}
function historySince(notes: readonly string[]): string[] {
  return HISTORY.filter((h) => !notes.includes(h));
}
const loadAverageBefore = loadavg();
try {
  log(`machine: ${machine(quick).cpuModel}, load average ${loadAverageBefore.map((x) => x.toFixed(2)).join(' ')}`);

  log('1/8 delegated SendMessage: direct, pass-through, Baton at c=1 and c=32');
  const http = await benchHttp(quick, log);

  log('2/8 MCP tools/call: direct and through Baton at c=1 and c=8');
  let mcp: McpResults | undefined;
  try {
    mcp = await benchMcp(quick, log);
  } catch (err) {
    notes.push(`MCP run failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }

  log('3/8 per-request accounting (instrumented gateway, c=1)');
  let accounting: Accounting | undefined;
  const acct = spawnLines(fileURLToPath(new URL('./accounting.ts', import.meta.url)), [JSON.stringify({ requests: quick ? 20 : 60, warmup: 10 })]);
  try {
    accounting = await acct.next<Accounting>(180_000);
    // Let it stop its agent and remove its temp dir itself before any signal.
    await Promise.race([acct.exited, new Promise((r) => setTimeout(r, 20_000))]);
  } catch (err) {
    notes.push(`Accounting run failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  } finally {
    await acct.stop();
  }

  log('4/8 profile: Baton under --cpu-prof at c=32');
  let profile;
  try {
    profile = await profileBaton(quick, log);
  } catch (err) {
    notes.push(`Profile run failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }

  log('5/8 durable admission: SQLite and PostgreSQL, 1 and 4 processes; growth');
  const admission = await benchAdmission(quick, log);

  log('6/8 contracts: mint + sign + verify, verification by depth');
  const contracts = await benchContracts(quick);

  log('7/8 scale across cores: baton serve --workers 1 and 2, SQLite and PostgreSQL');
  let workers: WorkersResults | undefined;
  try {
    workers = await benchWorkers(quick, log);
  } catch (err) {
    notes.push(`--workers run failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }

  let soak: Results['soak'];
  if (soakOn) {
    log('8/8 bounded memory: soak at c=32');
    try {
      soak = await benchSoak(quick, log);
    } catch (err) {
      notes.push(`Soak run failed: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  } else {
    const last = previous()?.soak;
    if (last) soak = { ...last, carried: true };
    log(`8/8 bounded memory: skipped (BENCH_SOAK=0)${last ? `; carrying over the soak of ${last.date}` : ''}`);
  }

  const { targets, ratios } = targetsOf(http, admission, workers, soak, mcp);
  const lifetimes = [...new Set(http.rows.filter((r) => r.route === 'baton').map((r) => r.rootLifetimeS))];
  notes.push(
    `Capacity (ADR-0014, production defaults): every SendMessage issues a fresh root and opens a root and a child node and a reservation, but the limits count only live work (src/store/capacity.ts): a root whose reservations are all settled is no longer active, and its nodes are no longer retained. So a closed loop of c requests holds about c active roots and 3c retained records however long it runs; the Baton phases run unbounded in count, at the production preset lifetime (${lifetimes.join(', ')} s; BENCH_ROOT_LIFETIME_S overrides it), each on a fresh instance and data dir. Settled roots stay unexpired for their lifetime: whatever the store does per unexpired root grows with the run, and is part of what is measured (see the soak).`,
    'This machine is shared: other work was running (see the load average), so figures move between runs; the ratios compare routes measured seconds apart in the same run, each on fresh processes.',
    ...contracts.notes.filter((n) => n.startsWith('chain stopped')),
    ...HISTORY,
  );
  const results: Results = {
    machine: { ...machine(quick), loadAverageBefore, loadAverageAfter: loadavg(), wallSeconds: (Date.now() - started) / 1000 },
    http,
    ...(mcp ? { mcp } : {}),
    ratios,
    ...(accounting ? { accounting } : {}),
    ...(profile ? { profile } : {}),
    admission,
    contracts,
    ...(workers ? { workers } : {}),
    ...(soak ? { soak } : {}),
    targets,
    notes,
  };
  writeFileSync(RESULTS_JSON, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(fileURLToPath(new URL('./RESULTS.md', import.meta.url)), renderMarkdown(results));
  log('wrote bench/results.json and bench/RESULTS.md');
  for (const t of targets) log(`${t.reported ? 'INFO' : t.pass ? 'PASS' : 'MISS'}  ${t.name}: ${t.measured} (goal ${t.goal})`);
} finally {
  await cleanup();
  clearTimeout(hard);
}
process.exit(0);
