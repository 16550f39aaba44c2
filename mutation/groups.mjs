// The mutation-testing groups (issue 27): every pure decision of Baton, each
// with the unit tests that guard it and the score below which `npm run
// mutation` fails. Read by stryker.config.mjs, vitest.mutation.config.ts and
// scripts/mutation*.mjs.
//
// `break` is the floor: never below 85 for a group holding a safety rule (all
// of these do). Where a group was measured, it is the measured score minus a
// small margin (`measured` says when); an unmeasured group starts at 85 until
// its first full run, then is raised the same way.
//
// `static`: true mutates module-level code too — the zod schemas built at
// import, which are the validation rules at the edges — at the cost of
// rerunning every test of the group per static mutant. A string is the reason
// a group leaves them out.

// `classified`: survivors judged not to be gaps, by file:line:column, each with its one-line reason
// (shown beside the mutant in mutation/SUMMARY.md).

/** @typedef {{ mutate: string[], tests: string[], exclude?: string[], break: number, measured?: string, static: true | string, classified?: Record<string, string> }} Group */

// Reasons shared by many ledger survivors (the group runs only the SQLite adapter: src/store/sqlite/ops.ts).
const LEDGER_LOCK = "unobservable in SQLite: lock modes are no-ops there (BEGIN IMMEDIATE serialises writers); row locks are PostgreSQL's, outside this group";
const LEDGER_READ_AHEAD = "unobservable in SQLite: only the read-ahead of a new task's rows in one statement; batch.head and nodeIn read the same rows later in the transaction";
const LEDGER_LOAD_NODES = "unobservable in SQLite: loadNodes only reads ahead; nodeIn reads the same row from the store later in the same transaction";
const LEDGER_STORE_COUNT = "statement count only: without the in-memory count, descendantsIn writes the nodes and counts them in the store, which gives the same number";
const LEDGER_STORE_BALANCES = "statement count only: without the new chain's balances in memory, admitIn reads them from the store (the nodes are written by then), the same rows";
const LEDGER_CARRIED = "statement count only: the admission counts retained records in the store again (open.ts retainedIn), which gives the number carrying forward would";
const LEDGER_NO_READ_AFTER_CHARGE = "unreachable: no program reads balances after it charged them in the same transaction (admitIn and settled charge last), so no charge is ever pending at a read";
const LEDGER_VERDICT_READ_AHEAD = "statement count only: without the read-ahead, fencesHold reads the fenced heads and the audit event's append reads its stream's head, the same rows in two statements instead of one (e2e/statements.test.ts counts it)";
const LEDGER_AUDIT_HEAD_FIRST = "unobservable in SQLite: the audit stream's head is read before the resolution only where writers are not serial (PostgreSQL, where that read then goes ahead with the resolution in one round trip: postgres/transaction.ts, outside this group); on SQLite, reading it early too is one statement more (e2e/statements.test.ts counts it) and the same rows";
const LEDGER_CHARGED_INSERT = "equivalent on SQLite: a new node's row charged by its journal entry's statement (sqlite/appends.ts ledger_journal, after the batch inserted the nodes) ends as inserting it charged does; PostgreSQL's one statement cannot update a row it inserts, so there it is needed, held by the PostgreSQL store contracts outside this group";
const LEDGER_EMPTY = "equivalent: skips a statement over no rows, which the adapter skips too (insertRows, streamHeads and recordHeads answer an empty list without SQL)";

// Reasons shared by many records survivors.
const RECORDS_CACHE = 'equivalent (cache only): the cache holds what is computed again, the same, from a deep-frozen value';
const RECORDS_FAST = 'equivalent: the strict-JSON fast path only gives up (undefined) more often, and the strict parser then answers the same';
const RECORDS_JOSE = "unreachable: jose's decodeProtectedHeader returns only a non-null object (it throws otherwise)";
const RECORDS_UTF8 = 'equivalent: UTF-8 is the default encoding';
// Static mutants are not retested by an incremental run once they survived (no per-test coverage ties them to
// the new tests); each of these was applied by hand and fails the named test file (vitest run test/records).
const RECORDS_STATIC = (test) => `static, killed by hand (an incremental run does not retest it): ${test}`;

/** @type {Record<string, Group>} */
export const GROUPS = {
  records: {
    // Every contract test seals records; the list stays to the files with logic. Envelope, ids and
    // schema refs are the RW-003 §3 edge schemas of every record Baton accepts from a peer.
    mutate: ['src/records/canonical.ts', 'src/records/key-order.ts', 'src/records/digest.ts', 'src/records/envelope.ts', 'src/records/revision-ref.ts', 'src/records/strict-json.ts', 'src/records/put.ts', 'src/records/ids.ts', 'src/records/schema-ref.ts', 'src/records/signature.ts', 'src/records/verified-signatures.ts', 'src/records/decode.ts', 'src/records/wire-json.ts', 'src/records/json-text.ts'],
    tests: ['test/records/**/*.test.ts', 'test/store/sqlite-records.test.ts'],
    break: 85,
    measured: '87.8 % on 2026-12-07 (StrykerJS 9.6.1, incremental, concurrency 2: 5 min, after the decode cache began forgetting a turn\'s records at its verdict, issue #24 session 32)',
    static: true,
    classified: {
      // wireJson's walk (issue #24): where it stops only decides what JSON.stringify writes natively, never the value written.
      ...Object.fromEntries(
        ['35:31', '42:90', '48:65'].map((at) => [`src/records/wire-json.ts:${at}`, 'equivalent (speed only): walking deeper, or never stopping, writes text that parses to the same value; records are spliced at any depth the walk reaches']),
      ),
      'src/records/canonical.ts:129:18': 'equivalent: copyWrite assigns copiedText before every read of it',
      // The body's native write (issue #24): the long way (write over the copy) gives the same text and height, only slower.
      'src/records/canonical.ts:138:15': 'equivalent (speed only): the body then goes the long way, which writes the same text and height',
      'src/records/canonical.ts:191:15': 'equivalent: copyWrite sets `ordered` before every sortedCopy it reads it after',
      ...Object.fromEntries(
        ['251:11', '251:25'].map((at) => [`src/records/canonical.ts:${at}`, 'equivalent (speed only): flagging more keys as possible indices only sends more bodies the long way, which writes the same text']),
      ),
      ...Object.fromEntries(['153:18', '235:18'].map((at) => [`src/records/canonical.ts:${at}`, 'equivalent: the loop assigns every slot of the list, so its preset length changes nothing'])),
      'src/records/canonical.ts:168:21': 'equivalent: the loop assigns every slot of the member texts, so their preset length changes nothing',
      ...Object.fromEntries(['175:11', '255:11'].map((at) => [`src/records/canonical.ts:${at}`, 'equivalent: defineProperty with enumerable, writable and configurable true is what the assignment makes'])),
      ...Object.fromEntries(['175:101', '255:101'].map((at) => [`src/records/canonical.ts:${at}`, 'equivalent: the copy is frozen right after, which makes every member non-writable anyway'])),
      ...Object.fromEntries(['175:121', '255:121'].map((at) => [`src/records/canonical.ts:${at}`, 'equivalent: the copy is frozen right after, which makes every member non-configurable anyway'])),
      // The mark (issue #24): where it is kept, and whether a text is kept on it, decide only speed.
      'src/records/canonical.ts:50:7': "equivalent (speed only): without the early answer an extensible object is looked up, holds no mark of its own (the owner check) and is never in sealedMarks, which holds only objects that were non-extensible when frozen",
      'src/records/canonical.ts:59:7': 'equivalent (speed only): every mark then goes to sealedMarks, where markOf finds it for a frozen (non-extensible) object all the same',
      'src/records/canonical.ts:278:10': 'equivalent: markOf answers undefined for a non-object (Object.isExtensible is false for it, it holds no mark and a WeakMap holds no primitives), so the type check only skips a call',
      'src/records/canonical.ts:283:7': 'equivalent (speed only): a value already marked is walked and marked again, in sealedMarks, where markOf never looks for an object that holds its own mark',
      // Lent texts (issue #24: a record's members' kept texts as slices of the record's own).
      'src/records/canonical.ts:186:16': 'equivalent: with CACHED_DEPTH 1 only the top level (depth 0) reaches this line (depth 1 returns above), so the test is always true here',
      'src/records/canonical.ts:186:30': 'equivalent in effect: nothing reads copiedText after the top level returns; what matters is that it no longer holds the record text (kept-texts.test.ts), and a short literal does not',
      'src/records/canonical.ts:374:9': 'equivalent: entries a deeper object pushes are lent from that object\'s own text (their positions are its own) when it keeps one, and objects below the cached depth keep no text to re-point; the finally drops them either way',
      'src/records/canonical.ts:374:24': 'equivalent in effect: a threshold; a 512-character member lends its text with `>=` and keeps its own with `>`',
      'src/records/canonical.ts:374:53': 'equivalent (speed only): a string member is pushed too, and lendText finds no mark on a primitive (markOf answers undefined), so nothing is re-pointed',
      ...Object.fromEntries(['393:7', '393:26'].map((at) => [`src/records/canonical.ts:${at}`, 'unreachable (defensive): lending runs only for a marked record, whose members the same walk marked, and write returns exactly a member\'s kept text (kept returns its argument), so the check always holds'])),
      'src/records/canonical.ts:396:25': 'equivalent: a stray first entry is never read, since each top-level write reads and truncates from the length it found',
      ...Object.fromEntries(['183:7', '261:7', '326:11', '326:52', '334:32'].map((at) => [`src/records/canonical.ts:${at}`, RECORDS_CACHE])),
      'src/records/json-text.ts:21:7': 'unreachable: no written text holds a raw U+0000 (PLAIN excludes it, JSON.stringify escapes it), so the check never throws',
      'src/records/json-text.ts:21:58': 'unreachable: the message of the U+0000 check, which never throws (no written text holds a raw U+0000)',
      'src/records/json-text.ts:44:9': 'equivalent in effect: `<=` keeps 4,097 names instead of 4,096; canonical-fast-paths.test.ts checks that the bound holds',
      // sortKeys (issue #24): the insertion sort and Array#sort give the same order; the cut-off picks the quicker.
      ...Object.fromEntries(
        ['19:7', '19:26'].map((at) => [`src/records/key-order.ts:${at}`, 'equivalent: below and above the cut-off both paths sort the keys (and their members) into the same order; the cut-off only picks the quicker']),
      ),
      'src/records/key-order.ts:24:57': 'equivalent: the keys of one object are distinct, so `<=` and `<` answer alike for every pair the sort compares',
      'src/records/key-order.ts:35:9': 'equivalent: the early continue only skips a key already in place; the loop below would leave it there too',
      'src/records/key-order.ts:38:12': 'equivalent: at j = -1, keys[-1] is undefined and `undefined > key` is false, so the loop stops where `j >= 0` stops it',
      'src/records/key-order.ts:38:22': 'equivalent: the keys of one object are distinct, so `>=` and `>` answer alike for every pair the sort compares',
      'src/records/digest.ts:11:31': RECORDS_STATIC('envelope-parts.test.ts "the Digest form is exactly sha256:<64 lowercase hex>"'),
      'src/records/digest.ts:12:56': RECORDS_STATIC('envelope-parts.test.ts "the Digest form is exactly sha256:<64 lowercase hex>"'),
      'src/records/digest.ts:26:7': RECORDS_CACHE,
      'src/records/digest.ts:28:7': RECORDS_CACHE,
      ...Object.fromEntries(
        [19, 21, 22, 23, 24, 25, 26, 27].map((line) => [`src/records/envelope.ts:${line}:3`, RECORDS_STATIC('envelope-parts.test.ts "knows exactly the RW-003 lifecycle assertions"')]),
      ),
      ...Object.fromEntries(
        ['139:15', '140:24', '141:24', '142:22', '143:26', '144:27', '145:25', '146:18', '148:15', '149:15', '150:20', '151:21', '152:23'].map((at) => [
          `src/records/envelope.ts:${at}`,
          RECORDS_STATIC('envelope-parts.test.ts "prefixes the record id by type and the revision id with rev"'),
        ]),
      ),
      'src/records/envelope.ts:99:7': RECORDS_CACHE,
      'src/records/envelope.ts:109:7': RECORDS_CACHE,
      'src/records/envelope.ts:109:15': RECORDS_CACHE,
      'src/records/envelope.ts:111:9': RECORDS_CACHE,
      'src/records/envelope.ts:115:7': RECORDS_CACHE,
      'src/records/ids.ts:25:16': RECORDS_STATIC('ids.test.ts "takes prefixes of a lowercase letter then up to 15 of [a-z0-9_]"'),
      'src/records/ids.ts:31:9': 'equivalent: 4,096 is not a multiple of 10, so the pool never ends exactly at an id\'s last byte and `>=` refills exactly when `>` does',
      'src/records/ids.ts:71:32': 'equivalent: i is 0 or 1 there, and `>>>` takes its count as ToUint32, so 8 / (1 - i) shifts by 8 or by Infinity, i.e. 0, as 8 * (1 - i) does',
      'src/records/ids.ts:92:32': RECORDS_UTF8,
      'src/records/decode.ts:43:97': "equivalent in what is served: a record stored without a follow-up would be tagged with an effect no verdict ends, so none is forgotten early (only that tag's list grows)",
      'src/records/decode.ts:56:46': "equivalent: an effect with no tagged records would delete revision 'Stryker was here', which no record has",
      'src/records/put.ts:25:7': 'equivalent: the checks before have already refused a prior without a head and a head without a prior',
      'src/records/put.ts:25:38': 'equivalent: the head names a revision inserted in the same transaction that set it, so its row exists',
      'src/records/put.ts:57:29': RECORDS_STATIC('put.test.ts "stores the content riding beside a record in the same transaction"'),
      'src/records/schema-ref.ts:34:36': RECORDS_STATIC('envelope-parts.test.ts "places Baton\'s own types under its family…"'),
      'src/records/schema-ref.ts:35:54': RECORDS_STATIC('envelope-parts.test.ts "places Baton\'s own types under its family…"'),
      'src/records/schema-ref.ts:35:55': RECORDS_STATIC('envelope-parts.test.ts "places Baton\'s own types under its family…"'),
      'src/records/schema-ref.ts:35:69': RECORDS_STATIC('envelope-parts.test.ts "places Baton\'s own types under its family…"'),
      'src/records/schema-ref.ts:35:83': RECORDS_STATIC('envelope-parts.test.ts "places Baton\'s own types under its family…"'),
      'src/records/schema-ref.ts:35:102': RECORDS_STATIC('envelope-parts.test.ts "places Baton\'s own types under its family…"'),
      'src/records/schema-ref.ts:35:122': RECORDS_STATIC('envelope-parts.test.ts "places Baton\'s own types under its family…"'),
      'src/records/schema-ref.ts:45:64': RECORDS_STATIC('envelope-parts.test.ts and envelope.test.ts (every known schema_ref is refused)'),
      'src/records/signature.ts:27:46': RECORDS_STATIC('signature.test.ts "refuses algorithms off the allow-list…"'),
      'src/records/signature.ts:31:8': RECORDS_STATIC('signature.test.ts "requires a kid of 1..256 characters, typ JOSE if any, and a jku URL of at most 2048"'),
      'src/records/signature.ts:78:16': RECORDS_STATIC('signature.test.ts "refuses a signature or protected header that is not unpadded base64url, anywhere in it"'),
      'src/records/signature.ts:82:87': 'equivalent: the signing input is base64url and ".", ASCII, which UTF-8 (the default) encodes the same',
      'src/records/signature.ts:90:7': 'equivalent: converting the WebCrypto key again gives an equal KeyObject; only the conversion repeats',
      'src/records/signature.ts:96:32': 'equivalent: only an EC key has namedCurve prime256v1, so the curve check alone refuses the same keys',
      'src/records/signature.ts:96:64': 'equivalent: the curve is read only once the key is EC, whose asymmetricKeyDetails is always set',
      'src/records/signature.ts:129:17': RECORDS_JOSE,
      'src/records/signature.ts:129:44': RECORDS_JOSE,
      'src/records/signature.ts:133:7': RECORDS_JOSE,
      'src/records/signature.ts:133:34': RECORDS_JOSE,
      'src/records/signature.ts:157:12': 'equivalent: ok is assigned in the try before it is read, or the catch throws',
      'src/records/signature.ts:165:9': 'equivalent (cache only): verifying a cached signature again with node:crypto answers the same true',
      'src/records/verified-signatures.ts:31:7': 'equivalent (cache only): a KeyObject cannot change, so its thumbprint computed again is the same',
      'src/records/verified-signatures.ts:33:69': "equivalent: with no encoding named, hash() answers the thumbprint's 32 bytes as a latin1 string, another one-to-one spelling of the same key",
      'src/records/verified-signatures.ts:40:35': "equivalent: with no encoding named, hash() answers the 32 bytes as a latin1 string, another one-to-one spelling of the same signing input's digest",
      'src/records/verified-signatures.ts:78:61': 'equivalent: a position not yet proven then holds a string that is no key thumbprint, which answers false as undefined does',
      // The fast path's string skip: every one of these makes some search run past the document's last quote (a
      // closing quote is never escaped), so any document holding a quote gives up to the strict parser; only a bare
      // top-level string can still pass, with its value checked as before. Give-ups only: equivalent in result.
      'src/records/strict-json.ts:57:9': 'equivalent: treating every (or every other) character as a string start only gives up, except on a bare top-level string, which parses the same',
      'src/records/strict-json.ts:65:13': 'equivalent: never ending, or ending only at an escaped quote, makes the skip run past the last (unescaped) quote: a give-up',
      'src/records/strict-json.ts:20:35': RECORDS_STATIC('every test/records file that imports strict-json (new TextDecoder(\'\') throws at import)'),
      'src/records/strict-json.ts:20:70': RECORDS_STATIC('strict-json-paths.test.ts "reads a byte order mark as data: refused, never skipped"'),
      ...Object.fromEntries(
        ['105:78', '105:87', '105:96', '105:105', '105:114'].map((at) => [
          `src/records/strict-json.ts:${at}`,
          RECORDS_STATIC('strict-json-paths.test.ts "parses empty containers, escapes and spaces exactly"'),
        ]),
      ),
      'src/records/strict-json.ts:27:34': RECORDS_UTF8,
      'src/records/strict-json.ts:93:7': 'equivalent: a boolean then reaches Object.keys, which gives none, so checked still answers true',
      'src/records/strict-json.ts:55:19': 'equivalent: charCodeAt past the end is NaN, which is no token the scan counts',
      'src/records/strict-json.ts:65:14': 'equivalent: j-1-k, j+1-k and j-1+k differ by even amounts (k >= i >= 0), so the backslash run has the same parity',
      'src/records/strict-json.ts:62:13': 'equivalent: j > i >= 0, so j is never 0; `true` only gives up (strict parser answers)',
      'src/records/strict-json.ts:128:12': 'equivalent: charCodeAt past the end is NaN, which is no whitespace',
      'src/records/strict-json.ts:210:15': 'equivalent: the number pattern matches at least one digit or fails (null)',
      'src/records/strict-json.ts:241:14': 'equivalent: hex is a slice of at most 4 characters, so one anchor with {4} already requires all of it',
      'src/records/strict-json.ts:245:21': 'equivalent: ESCAPES has no "undefined" member, so ESCAPES[undefined] is undefined too',
      ...Object.fromEntries(
        [
          '51:78', '69:16', '70:11', '73:11', '73:23', '74:16', '74:30', '75:13', '76:18', '76:32', '76:44', '80:7', '82:11', '86:10',
          '90:45', '92:7', '93:59', '95:35', '96:12', '99:3', '100:29', '101:10',
        ].map((at) => [`src/records/strict-json.ts:${at}`, RECORDS_FAST]),
      ),
    },
  },
  contracts: {
    // Issuance, attenuation (narrow only), final admission, minting and the attestation chain B accepts from A;
    // model.ts holds the contract schema a presented chain is parsed with.
    mutate: ['src/contracts/issuance.ts', 'src/contracts/attenuation.ts', 'src/contracts/admission.ts', 'src/contracts/mint.ts', 'src/contracts/attestation-chain.ts', 'src/contracts/attestation-link.ts', 'src/contracts/model.ts'],
    tests: ['test/contracts/**/*.test.ts'],
    // The CLI and the tree renderer are not the core (the CLI test spawns processes).
    exclude: ['test/contracts/delegate-cli.test.ts', 'test/contracts/render-tree.test.ts'],
    break: 96,
    measured: '98.38 % on 2026-12-04 (StrykerJS 9.6.1, --force, concurrency 1: 25 min)',
    static: true,
    classified: {
      'src/contracts/admission.ts:101:14': 'equivalent: with no region, !regions.includes(undefined) is already true (regions are ids): still fails closed',
      'src/contracts/attestation-chain.ts:58:7': 'equivalent: first and last come from the same array, so both are undefined or neither is',
      'src/contracts/attestation-chain.ts:154:12': 'equivalent: a root lineage is strict and has no parent_ref, so the walk ends there either way',
      'src/contracts/issuance.ts:164:58': "equivalent: attenuation tells levels apart only by level === 'child'; '' is the same-hop rule as 'same'",
      'src/contracts/mint.ts:134:61': 'equivalent: mergeTerms reads opts.childDepth as a flag; absent is false',
      'src/contracts/mint.ts:149:14': 'equivalent: BigInt > undefined is false, so a dimension the budget does not name keeps its ceiling either way',
      'src/contracts/mint.ts:149:36': 'equivalent: at equality the cap is left.toString(), the same canonical integer text as the ceiling (IntegerText)',
      'src/contracts/mint.ts:157:144': "equivalent: attenuation tells levels apart only by level === 'child'; '' is the same-hop rule as 'same'",
      // Detected, not survived: zod refuses the discriminated union while model.ts is imported, so every test file
      // fails to load; Stryker's vitest runner counts that as no failing test (as attempts' outcome.ts:42:122).
      'src/contracts/model.ts:68:45': 'detected by an import-time error the vitest runner does not count (run by hand: every file fails to load)',
      'src/contracts/model.ts:69:18': 'detected by an import-time error the vitest runner does not count (run by hand: every file fails to load)',
      'src/contracts/model.ts:70:18': 'detected by an import-time error the vitest runner does not count (run by hand: every file fails to load)',
      'src/contracts/model.ts:131:46': "equivalent: Buffer.byteLength(s, '') counts UTF-8, the default encoding",
      'src/contracts/model.ts:137:7': 'equivalent: past the root maximum, root_max_depth - depth < 0 <= max_remaining_depth (min 0): the other clause refuses',
      'src/contracts/model.ts:175:50': "equivalent: Buffer.byteLength(s, '') counts UTF-8, the default encoding",
    },
  },
  control: {
    // Fences (RW-003 §1.2), authority state, the append decision; fence sets and events are parsed at the edge.
    mutate: ['src/control/fence.ts', 'src/control/state.ts', 'src/control/append.ts'],
    tests: ['test/control/**/*.test.ts'],
    break: 97,
    measured: '99.68 % on 2026-12-04 (StrykerJS 9.6.1, --force, concurrency 1: 5 min)',
    static: true,
    classified: {
      // `typeof l !== 'string' || !LIFECYCLE_TARGETS.has(l)`: a Set of strings holds no non-string, so the second test alone refuses the same values.
      'src/control/state.ts:96:7': 'equivalent: LIFECYCLE_TARGETS holds only strings, so has() already refuses every non-string lifecycle',
    },
  },
  ledger: {
    // The programs run inside a store transaction, so their tests go through the real SQLite adapter.
    // programs.ts was split (issue #24): opening nodes and settling are open.ts and settle.ts; the set-oriented
    // writer they share (tx/batch.ts) holds the record-head and event-chain checks of the hot path.
    mutate: ['src/ledger/rules.ts', 'src/ledger/amount.ts', 'src/ledger/programs.ts', 'src/ledger/open.ts', 'src/ledger/plan.ts', 'src/ledger/prepare.ts', 'src/ledger/settle.ts', 'src/store/tx/batch.ts'],
    tests: ['test/ledger/**/*.test.ts', 'test/store/sqlite-ledger.test.ts', 'test/records/decode-follows.test.ts'],
    break: 90,
    measured: '91.59 % on 2026-12-07 (StrykerJS 9.6.1, incremental, concurrency 2: 5 min, after the batch began telling the decode cache which follow-ups it starts and ends, issue #24 session 32)',
    static: "no edge schema here: the ledger's schemas for what it reads back (src/ledger/stored.ts, src/store/tx/rows.ts) are outside the group, held by the row contract on both stores (test/store/support/row-contract.ts); the module-level code here is constant tables",
    classified: {
      // Re-keyed after the statement diet, after the plan moved out of the transaction, and again after the
      // plan's issued events (TxBatch.appendFirst), the stored-JSON schemas, and the batch's record write without a head
      // read (issue #24): same expressions at their new lines.
      'src/ledger/open.ts:78:54': LEDGER_LOCK,
      'src/ledger/open.ts:157:49': LEDGER_LOCK,
      'src/ledger/open.ts:162:94': LEDGER_LOCK,
      'src/ledger/open.ts:173:101': LEDGER_LOCK,
      'src/ledger/open.ts:140:7': "unobservable in SQLite: lockPreset is a no-op there (BEGIN IMMEDIATE serialises writers); the preset row lock is PostgreSQL's, outside this group",
      'src/ledger/programs.ts:57:101': LEDGER_LOCK,
      'src/ledger/programs.ts:57:72': "equivalent (rows read only): a larger bound reads more of a lineage than telling a too-long one needs; still bounded, and the loop check refuses at the same node",
      ...Object.fromEntries(
        ['54:63', '54:80'].map((at) => [`src/ledger/open.ts:${at}`, "PostgreSQL's prune horizon: SQLite prunes in the root's insert trigger (capacity.ts PRUNE_ON_ISSUE_SQLITE); held by test/store/pg-live-roots.test.ts, outside this SQLite group"]),
      ),
      'src/ledger/programs.ts:100:84': LEDGER_LOCK,
      'src/ledger/programs.ts:107:44': LEDGER_LOCK,
      'src/ledger/programs.ts:106:80': "unobservable on SQLite: serialWriters is always true there, so the PostgreSQL branch (the audit stream's head read when it is appended to) never runs",
      'src/ledger/programs.ts:170:61': LEDGER_LOCK,
      'src/ledger/programs.ts:174:141': LEDGER_LOCK,
      'src/ledger/settle.ts:83:60': LEDGER_LOCK,
      'src/ledger/settle.ts:107:29': LEDGER_LOCK,
      'src/ledger/settle.ts:58:7': LEDGER_VERDICT_READ_AHEAD,
      'src/ledger/settle.ts:54:7': LEDGER_AUDIT_HEAD_FIRST,
      'src/ledger/settle.ts:54:43': LEDGER_AUDIT_HEAD_FIRST,
      'src/ledger/settle.ts:58:47': LEDGER_VERDICT_READ_AHEAD,
            'src/ledger/settle.ts:58:120': LEDGER_LOCK,
      'src/ledger/settle.ts:139:42': LEDGER_LOCK,
      'src/ledger/settle.ts:142:51': LEDGER_LOCK,
      'src/store/tx/batch.ts:97:43': LEDGER_LOCK,
      'src/ledger/settle.ts:86:7': "equivalent: an equal settlement on an unknown row is an unknown replay, which the unknown-replay return below gives unchanged too; a null settlement never equals the JSON text",
      'src/ledger/settle.ts:86:34': "equivalent: an equal settlement on an unknown row is an unknown replay, which the unknown-replay return below gives unchanged too; a null settlement never equals the JSON text",
      'src/ledger/settle.ts:86:49': "equivalent: an equal settlement on an unknown row is an unknown replay, which the unknown-replay return below gives unchanged too; a null settlement never equals the JSON text",
      'src/ledger/settle.ts:86:140': "equivalent: a replayed settlement finds its effect's follow-up ended already (its reservation left held before, which ended it: migration 20), so ending it again or not changes nothing",
      'src/ledger/settle.ts:90:114': "equivalent: a replayed settlement finds its effect's follow-up ended already (its reservation left held before, which ended it: migration 20), so ending it again or not changes nothing",
      'src/ledger/settle.ts:94:96': "equivalent: the status reaching settled() is never 'unknown' (an unknown row asked for unknown was returned above it), so the condition is false anyway",
      'src/ledger/settle.ts:94:107': "equivalent: the status reaching settled() is never 'unknown' (an unknown row asked for unknown was returned above it), so comparing with '' gives the same req.at",
      'src/store/tx/batch.ts:143:18': LEDGER_CHARGED_INSERT,
      'src/store/tx/batch.ts:143:39': LEDGER_CHARGED_INSERT,
      'src/store/tx/batch.ts:143:46': LEDGER_CHARGED_INSERT,
      'src/store/tx/batch.ts:144:11': LEDGER_CHARGED_INSERT,
      'src/store/tx/batch.ts:144:20': LEDGER_CHARGED_INSERT,
      'src/store/tx/batch.ts:117:43': LEDGER_LOCK,
      // Prepared before the transaction (ledger/prepare.ts, DESIGN: nothing hashed under the lock).
      'src/ledger/prepare.ts:139:11': 'equivalent: without the catch block\'s return the function ends, and returns undefined all the same',
      'src/ledger/programs.ts:178:73': "unreachable: every task admission the store runs is prepared (store/compose.ts composeLedger), budgets' digests included; only a program run without a preparation has none",
      'src/ledger/programs.ts:170:42': LEDGER_READ_AHEAD,
      'src/ledger/programs.ts:171:17': LEDGER_READ_AHEAD,
      'src/ledger/programs.ts:171:36': LEDGER_READ_AHEAD,
      'src/ledger/programs.ts:171:43': LEDGER_READ_AHEAD,
      'src/ledger/programs.ts:172:7': LEDGER_READ_AHEAD,
      'src/ledger/programs.ts:172:25': LEDGER_READ_AHEAD,
      'src/ledger/programs.ts:174:23': LEDGER_READ_AHEAD,
      'src/ledger/programs.ts:173:72': "unobservable on SQLite: serialWriters is always true there, so the PostgreSQL branch (no fence read-ahead) never runs",
      'src/ledger/settle.ts:57:7': "equivalent: with no ends_follow, the batch's DELETE … WHERE effect_id IN (NULL) matches no work row",
      'src/ledger/settle.ts:79:7': "equivalent: an equal settlement on an unknown row is an unknown replay, which the unknown-replay return below gives unchanged too; a null settlement never equals the JSON text",
      'src/ledger/settle.ts:79:34': "equivalent: an equal settlement on an unknown row is an unknown replay, which the unknown-replay return below gives unchanged too; a null settlement never equals the JSON text",
      'src/ledger/settle.ts:79:49': "equivalent: an equal settlement on an unknown row is an unknown replay, which the unknown-replay return below gives unchanged too; a null settlement never equals the JSON text",
      'src/ledger/settle.ts:92:86': "equivalent: the status reaching resolveReservation is never 'unknown' (an unknown row asked for unknown was returned above it), so comparing with '' gives the same req.at",
      'src/ledger/settle.ts:92:75': "equivalent (the one survivor here, `false`): the status reaching resolveReservation is never 'unknown' (an unknown row asked for unknown was returned above it), so req.at is stored anyway",
      'src/ledger/settle.ts:86:79': "equivalent: the status reaching settled() is never 'unknown' (an unknown row asked for unknown was returned above it), so the condition is false anyway",
      'src/ledger/settle.ts:86:90': "equivalent: the status reaching settled() is never 'unknown' (an unknown row asked for unknown was returned above it), so comparing with '' gives the same req.at",
      'src/ledger/settle.ts:145:42': "equivalent: at wanted = ceiling both branches give the ceiling",
      'src/ledger/settle.ts:145:92': "equivalent: at wanted = floor both branches give the floor",
      'src/ledger/settle.ts:146:9': "equivalent: next is never above the ceiling, and lowerCeiling's `AND ceiling > ?` makes an equal one a no-op",
      'src/ledger/plan.ts:73:20': "equivalent: a root has no parent_id, and placed.get(undefined) is undefined as the conditional's own branch gives",
      'src/store/tx/batch.ts:61:65': LEDGER_LOAD_NODES,
      'src/store/tx/batch.ts:62:21': LEDGER_LOAD_NODES,
      'src/store/tx/batch.ts:62:46': LEDGER_LOAD_NODES,
      'src/store/tx/batch.ts:62:54': LEDGER_LOAD_NODES,
      'src/store/tx/batch.ts:63:9': LEDGER_LOAD_NODES,
      'src/store/tx/batch.ts:72:9': LEDGER_EMPTY,
      // New with the diet: the batch's in-memory shortcuts, each with the store read it saves as the fallback.
      'src/ledger/open.ts:131:7': LEDGER_STORE_COUNT,
      'src/store/tx/batch.ts:279:56': LEDGER_STORE_COUNT,
      'src/store/tx/batch.ts:280:9': LEDGER_STORE_COUNT,
      'src/store/tx/batch.ts:280:28': LEDGER_STORE_COUNT,
      'src/store/tx/batch.ts:280:35': LEDGER_STORE_COUNT,
      'src/store/tx/batch.ts:280:59': "equivalent: rootId is always a root's id (parent.root_id), so a created node with that id has a null parent; `!==` only makes it undefined, which the store count answers the same",
      'src/store/tx/batch.ts:285:69': LEDGER_STORE_BALANCES,
      'src/store/tx/batch.ts:288:20': LEDGER_STORE_BALANCES,
      'src/store/tx/batch.ts:288:38': LEDGER_STORE_BALANCES,
      'src/store/tx/batch.ts:288:45': "equivalent: `balances` holds only the rows of nodes this transaction created (journal drops changed ones), so the check only sends other ids to the store read, which answers the same",
      'src/store/tx/batch.ts:289:11': LEDGER_STORE_BALANCES,
      // The batch's record write (issue #24: on PostgreSQL no head read first). A record it leaves out takes the single-row rules,
      // which refuse or write it exactly as the batch would have; test/ledger/ledger-effects.test.ts counts the
      // statements, so a mutant that sends a plain revision down that path is killed.
      'src/store/tx/batch.ts:330:44': "unreachable (`true`) and equivalent (`.record` without `?.`): the check runs only for a revision the batch's statement wrote, which came from `batched`; it differs only for one revision queued twice in one transaction as two objects, which no program does",
      'src/store/tx/batch.ts:309:48': "equivalent: a revision whose prior names another record never fits its head in the batch's INSERT (revision ids are unique), so it reaches the single-row rules either way, which refuse it",
      'src/store/tx/batch.ts:320:9': "unobservable in SQLite: its adapter reads the heads under BEGIN IMMEDIATE and moves one per revision it writes, so its count is never short; a short count is PostgreSQL's (READ COMMITTED), held by test/store/pg-record-heads.test.ts outside this group",
      'src/store/tx/batch.ts:320:53': "unobservable in SQLite: its adapter reads the heads under BEGIN IMMEDIATE and moves one per revision it writes, so its count is never short; a short count is PostgreSQL's (READ COMMITTED), held by test/store/pg-record-heads.test.ts outside this group",
      'src/store/tx/batch.ts:322:28': "unobservable in SQLite: its adapter reads the heads under BEGIN IMMEDIATE and moves one per revision it writes, so its count is never short; a short count is PostgreSQL's (READ COMMITTED), held by test/store/pg-record-heads.test.ts outside this group",
      'src/store/tx/batch.ts:322:95': "unobservable in SQLite: its adapter reads the heads under BEGIN IMMEDIATE and moves one per revision it writes, so its count is never short; a short count is PostgreSQL's (READ COMMITTED), held by test/store/pg-record-heads.test.ts outside this group",
      'src/store/tx/batch.ts:322:107': "unobservable in SQLite: its adapter reads the heads under BEGIN IMMEDIATE and moves one per revision it writes, so its count is never short; a short count is PostgreSQL's (READ COMMITTED), held by test/store/pg-record-heads.test.ts outside this group",
      'src/store/tx/batch.ts:318:44': "equivalent: a revision the batch wrote is its record's batched one unless the same revision was queued twice, and then the single-row rules answer 'exists' for the copy",
      'src/store/tx/batch.ts:38:41': "equivalent: a string in `created` has no node_id or root_id, so no filter or some() matches it, and writeNodes slices only the unwritten tail",
      'src/store/tx/batch.ts:48:37': "equivalent: ends the follow-up of effect id 'Stryker was here', which no effect has (DELETE matches no work row)",
      'src/store/tx/batch.ts:218:9': "equivalent: with nothing unwritten it inserts nothing (nodeParts drops empty tables, so no statement runs)",
      'src/store/tx/batch.ts:205:75': "unreachable: open() sets the balances of every node it queues, so the `?? []` fallback never runs",
      // The retained count carried forward from the root's capacity statement (TxBatch.retainedNow): a mutant that
      // only carries it forward less often leaves the admission counting again, the same number, one statement more.
      'src/ledger/open.ts:123:7': LEDGER_CARRIED,
      'src/store/tx/batch.ts:250:57': LEDGER_CARRIED,
      'src/store/tx/batch.ts:251:21': LEDGER_CARRIED,
      'src/store/tx/batch.ts:264:59': LEDGER_CARRIED,
      'src/store/tx/batch.ts:266:9': LEDGER_CARRIED,
      'src/store/tx/batch.ts:268:30': "equivalent: every node's root_id is a root's id, so with children among `newRoots` the same nodes pass the test below",
      'src/store/tx/batch.ts:268:50': LEDGER_CARRIED,
      'src/store/tx/batch.ts:268:57': LEDGER_CARRIED,
      'src/store/tx/batch.ts:268:83': LEDGER_CARRIED,
      'src/store/tx/batch.ts:269:9': LEDGER_CARRIED,
      'src/store/tx/batch.ts:269:27': "equivalent: a count is noted only by placeRoot, and the root it places is opened right after, so `since` always holds a new root and the negated test always carries nothing forward (LEDGER_CARRIED)",
      // TxBatch.storedBalances writes pending charges before it reads: no program reads balances after charging them.
      'src/store/tx/batch.ts:159:9': LEDGER_NO_READ_AFTER_CHARGE,
      'src/store/tx/batch.ts:159:42': LEDGER_NO_READ_AFTER_CHARGE,
    },
  },
  attempts: {
    // The verdict: project() and the fence downgrade withFences() (RW-003 §1.2, §7.1) — the request path's pure
    // verdict decision lives here, not in src/gateway/path/verify.ts (which does the I/O around it).
    // task-view.ts parses a delegatee's task (an edge).
    mutate: ['src/attempts/outcome.ts', 'src/attempts/task-view.ts'],
    tests: ['test/attempts/**/*.test.ts'],
    break: 97,
    measured: '99.56 % on 2026-12-04 (StrykerJS 9.6.1, --force, concurrency 1: 3 min)',
    static: true,
    classified: {
      // Detected, not survived: the emptied body makes test/attempts/outcome.test.ts throw while it is collected
      // (a property test calls project() at describe time); Stryker's vitest runner counts a file that fails to
      // load as no failing test. The direct checkAcceptance test fails on it when run by hand.
      'src/attempts/outcome.ts:42:122': 'detected by a collection-time error the vitest runner does not count (run by hand: fails)',
    },
  },
  gates: {
    // Which effects need a named human (RW-003 §6) and who may give it; the gate config is an owner edge.
    mutate: ['src/gates/rules.ts', 'src/gates/policy.ts'],
    tests: ['test/gates/rules.test.ts'],
    break: 97,
    measured: '99.44 % on 2026-12-04 (StrykerJS 9.6.1, --force, concurrency 1: 4 min)',
    static: true,
    classified: {
      'src/gates/policy.ts:54:7': 'equivalent: with no requireApproval it pushes undefined, which sort() puts last, so [0] is unchanged',
    },
  },
  federation: {
    // Head statements and control notices (both HeadStatement under verifyJws), consumption receipts, the chain
    // split. Federation.receiveNotice/fetch are I/O around these, driven by e2e/federation-suite.ts.
    mutate: ['src/federation/head-statement.ts', 'src/federation/consumption.ts', 'src/federation/jws.ts', 'src/federation/scopes.ts'],
    tests: ['test/federation/**/*.test.ts'],
    break: 95,
    measured: '97.5 % on 2026-12-04 (StrykerJS 9.6.1, --force, concurrency 1: 4 min)',
    static: true,
    classified: {
      'src/federation/consumption.ts:89:38': "equivalent: BigInt('') is 0n, as BigInt('0') is",
      'src/federation/consumption.ts:92:21': 'equivalent: when the claim equals the reservation both branches settle the same amount',
      // verifyJws's `catch {}` replaces every inner error with the one context_invalidated refusal; their messages go nowhere.
      'src/federation/jws.ts:33:21': 'equivalent: a header without kid looks up keys.get(undefined), which is undefined as the guard gives',
      'src/federation/jws.ts:34:98': 'unobservable: message of an inner error the catch replaces (no binding, not logged)',
      'src/federation/jws.ts:39:54': 'unobservable: message of an inner error the catch replaces (no binding, not logged)',
    },
  },
  cards: {
    // Where a verified card may send Baton, and which keys may vouch for a card (pinned or jku origins).
    mutate: ['src/cards/endpoint-policy.ts', 'src/cards/trust-store.ts'],
    tests: ['test/cards/endpoint-policy.test.ts', 'test/cards/trust-store.test.ts', 'test/cards/card-safety.test.ts', 'test/cards/verify.test.ts', 'test/cards/fetch.test.ts'],
    break: 97,
    measured: '100 % on 2026-12-04 (StrykerJS 9.6.1, concurrency 1: 1 min, after the dead re-check in lookup() was removed)',
    static: 'no schema in these files: the card schema is A2A\'s (the SDK), the trust config is parsed in src/config.ts',
  },
  audit: {
    // The verifier over a real SQLite store's rows, tampered with; content.ts through the store's content table.
    mutate: ['src/audit/verify.ts', 'src/audit/content.ts', 'src/audit/report.ts'],
    tests: ['test/audit/verify.test.ts', 'test/audit/sqlite-scan.test.ts', 'test/audit/content.test.ts', 'test/audit/content-approvals.test.ts'],
    break: 96,
    measured: '98.33 % on 2026-12-04 (StrykerJS 9.6.1, --force, concurrency 1: 14 min)',
    static: 'no edge schema: the verifier recomputes from the store\'s own rows; module-level code is the break-kind table',
    classified: {
      'src/audit/content.ts:37:9': 'equivalent: each later test still checks the record type, so other records are only parsed',
      'src/audit/content.ts:60:15': 'equivalent: recomputed is declared unassigned, so an emptied catch leaves it undefined as the assignment does',
      'src/audit/content.ts:66:20': 'equivalent: purges is keyed by record id, so purges.get(null) is undefined as the null branch is',
      'src/audit/verify.ts:217:34': 'equivalent: checkEventDoc runs only on a parsed ControlEvent, whose position is always an integer',
      'src/audit/verify.ts:243:11': 'unreachable: assertPlacement and nextState throw only invalid_request; the rethrow guards a programming error',
      'src/audit/verify.ts:323:10': "equivalent: join of no pairs is '', which every caller treats as falsy like undefined",
      'src/audit/verify.ts:327:41': 'equivalent: shown values are strings, bigints or null, and String(null) is JSON.stringify(null)',
      'src/audit/verify.ts:333:11': 'equivalent: an emptied catch block returns undefined as `return undefined` does',
    },
  },
  path: {
    // The request path's decision functions: which A2A method is what kind of step. The verdict is in `attempts`.
    mutate: ['src/gateway/path/classify.ts'],
    tests: ['test/gateway/path/classify.test.ts'],
    break: 94,
    measured: '96.52 % on 2026-12-04 (StrykerJS 9.6.1, concurrency 1: 2 min)',
    static: true,
    classified: {
      'src/gateway/path/classify.ts:33:9': 'equivalent: with the check gone, `undefined >= 400` is false, so no status is still no refusal',
      'src/gateway/path/classify.ts:53:75': 'equivalent: a non-string reason\'s fallback need only be no ADR-0014 code, which "Stryker was here!" is not',
      'src/gateway/path/classify.ts:65:7': 'unreachable: saysNotTransmitted runs only once batonCodeOf found a code, so data is an array',
      'src/gateway/path/classify.ts:65:36': 'unreachable: saysNotTransmitted runs only once batonCodeOf found a code, so data is an array',
    },
  },
  mcp: {
    // The MCP adapter's decisions (issue #26): a read route formed from and checked against the call, a tool
    // result's projection (only an agreeing read verifies), and the gate default the annotations choose.
    mutate: ['src/mcp/read-route.ts', 'src/mcp/outcome.ts', 'src/mcp/policy.ts'],
    tests: ['test/mcp/**/*.test.ts'],
    break: 97,
    measured: '100 % on 2026-12-04 (StrykerJS 9.6.1, concurrency 1: 1 min)',
    static: true,
    classified: {},
  },
};

/** Where a group's committed incremental file (a Stryker JSON report) and summary live. */
export const groupDir = (group) => `mutation/${group}`;
