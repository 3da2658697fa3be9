/**
 * The status intake's `store` stage on its own, against the real Postgres: 20,000 reports
 * (1,000 clusters × 20 placed objects) stored in batches of 2,000, as the intake does (one
 * placement read, then one upsert per batch), in the statement shapes below. Prints the time per
 * 20,000 reports of each shape, the median of `rounds` rounds, for a backlog into an empty table
 * (the bench's backlog drain deletes the rows first) and for newer reports over stored rows, and
 * the CPU milliseconds the Postgres backend and this process (the hub's side: building the
 * parameters) spent on both: wall-clock moves with the machine's load, CPU much less.
 *
 * `--fillfactor=100,50` runs every shape once per fillfactor of object_status (a lower one leaves
 * room on each page, so an update of a stored row can be a HOT update: no new index entry).
 *
 *   npx tsx --conditions=@flotilla/source test/bench/hub/status-store.ts [rounds=5] [--fillfactor=N,…]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { sql, type SQLWrapper } from 'drizzle-orm';
import { PROTOCOL_VERSION } from '@flotilla/api';
import { createTestDatabase } from '@flotilla/test';
import { createDb, runMigrations, upsertStatuses, type Db } from '@flotilla/hub';
import { objectStatus } from '../../../hub/src/db/schema/index.js';
import { isoMicros, statusKey, type TimedStatus } from '../../../hub/src/domain/status-coalesce.js';
import { processCpuMs } from './cpu.js';
import { NEWER_STATUS_WINS, STATUS_COLUMNS, placementsOf } from '../../../hub/src/repositories/status-repo.js';

const args = process.argv.slice(2);
const ROUNDS = Number(args.find((a) => !a.startsWith('--')) ?? 5);
const FILLFACTORS = (args.find((a) => a.startsWith('--fillfactor='))?.split('=')[1] ?? '')
  .split(',')
  .filter(Boolean)
  .map(Number);
const CLUSTERS = 1000;
const OBJECTS = 20;
const BATCH = 2000;

interface Shape {
  name: string;
  place(db: Db, batch: readonly TimedStatus[]): Promise<unknown>;
  upsert(db: Db, batch: readonly TimedStatus[]): Promise<number>;
}

/** One JSON text parameter, one object a report with one-letter keys, unpacked by json_to_recordset. */
const jsonParam = (rows: unknown[]): SQLWrapper => sql.param(JSON.stringify(rows));

async function placementsOfJson(db: Db, reports: readonly TimedStatus[]): Promise<number> {
  const keys = new Map(reports.map((r) => [statusKey(r.message), r.message]));
  const list = [...keys.values()].map((m) => ({ c: m.cluster, k: m.kind, s: m.namespace, n: m.name }));
  const res = await db.execute(sql`
    select d.cluster_name, d.kind, d.namespace, d.name, d.generation, d.workload_id
      from json_to_recordset(${jsonParam(list)}::json) as k(c text, k text, s text, n text)
      join desired_objects d on d.cluster_name = k.c and d.kind = k.k and d.namespace = k.s and d.name = k.n`);
  return res.rows.length;
}

/**
 * Free text would need its lone surrogates replaced before JSON.stringify (Postgres refuses the
 * escapes it writes for them; as text they become U+FFFD): not needed for this bench's reports.
 */
async function upsertJson(db: Db, reports: readonly TimedStatus[]): Promise<number> {
  // One literal per report (spreading parts into it tripled the client's CPU).
  const rows = reports.map((r) => {
    const m = r.message;
    const n = m.counts;
    // prettier-ignore
    return {
      c: m.cluster, k: m.kind, s: m.namespace, n: m.name, w: m.workloadId, r: m.revision, g: m.generation,
      o: m.observedGeneration, a: n.replicas, b: n.readyReplicas, u: n.updatedReplicas, v: n.updatedReadyReplicas,
      x: n.availableReplicas, h: m.health, m: m.message, t: new Date(r.reportedAtMs).toISOString(),
      z: isoMicros(r.storedAtMs), q: r.streamSequence,
    };
  });
  const res = await db.execute(sql`
    insert into ${objectStatus} ${STATUS_COLUMNS}
    select c, k, s, n, w, r, g, o, a, b, u, v, x, h, m, t, z, q
      from json_to_recordset(${jsonParam(rows)}::json) as j(c text, k text, s text, n text, w text, r int, g bigint,
        o bigint, a int, b int, u int, v int, x int, h text, m text, t timestamptz, z timestamptz, q bigint)
    ${NEWER_STATUS_WINS}`);
  return res.rowCount ?? 0;
}

const SHAPES: Shape[] = [
  { name: 'typed arrays, unnest (status-repo)', place: placementsOf, upsert: upsertStatuses },
  { name: 'JSON text, json_to_recordset', place: placementsOfJson, upsert: upsertJson },
];

const clusterName = (i: number): string => `bench-${String(i).padStart(4, '0')}`;

async function seed(pool: pg.Pool, workloadIds: string[]): Promise<void> {
  await pool.query(
    `insert into desired_objects (cluster_name, kind, namespace, name, workload_id, revision, generation, manifest_hash)
     select 'bench-' || lpad(c::text, 4, '0'), 'CloneSet', 'bench', 'obj-' || o, ($1::uuid[])[o + 1], 1, 3, 'h'
       from generate_series(0, $2 - 1) c, generate_series(0, $3 - 1) o`,
    [workloadIds, CLUSTERS, OBJECTS],
  );
}

let sequence = 0;
/** 20,000 reports, one per object, newer (stream sequence, stored time) than any before. */
function reports(workloadIds: string[]): TimedStatus[] {
  const out: TimedStatus[] = [];
  const now = Date.now();
  for (let c = 0; c < CLUSTERS; c++) {
    for (let o = 0; o < OBJECTS; o++) {
      sequence++;
      out.push({
        message: {
          v: PROTOCOL_VERSION,
          cluster: clusterName(c),
          kind: 'CloneSet',
          namespace: 'bench',
          name: `obj-${o}`,
          workloadId: workloadIds[o]!,
          revision: 1,
          generation: 3,
          observedGeneration: 3,
          counts: { replicas: 4, readyReplicas: 4, updatedReplicas: 4, updatedReadyReplicas: 4, availableReplicas: 4 },
          health: 'Healthy',
          message: '',
          reportedAt: new Date(now).toISOString(),
        },
        reportedAtMs: now,
        storedAtMs: now + sequence / 1000,
        streamSequence: sequence,
      });
    }
  }
  // Batches hold reports of many clusters, in the order the stream delivered them.
  return out.sort((a, b) => (a.message.name + a.message.cluster).localeCompare(b.message.name + b.message.cluster));
}

/** Stores 20,000 reports in batches; returns [ms, of it the placement reads, rows written]. */
async function store(db: Db, shape: Shape, all: TimedStatus[]): Promise<[number, number, number]> {
  const t0 = performance.now();
  let written = 0;
  let placeMs = 0;
  for (let i = 0; i < all.length; i += BATCH) {
    const batch = all.slice(i, i + BATCH);
    const p0 = performance.now();
    await shape.place(db, batch);
    placeMs += performance.now() - p0;
    written += await shape.upsert(db, batch);
  }
  return [performance.now() - t0, placeMs, written];
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const database = await createTestDatabase('flotilla_status_store');
// One connection, so that one backend does all the work and its CPU can be read.
const pool = new pg.Pool({ connectionString: database.url, max: 1 });
try {
  await runMigrations(pool);
  const db = createDb(pool);
  const workloadIds = Array.from({ length: OBJECTS }, () => randomUUID());
  await seed(pool, workloadIds);
  const backend = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const results: Record<
    string,
    { emptyMs: number[]; overMs: number[]; placeMs: number[]; pgCpuMs: number[]; clientCpuMs: number[] }
  > = {};
  const runs = (FILLFACTORS.length ? FILLFACTORS : [undefined]).flatMap((fillfactor) =>
    SHAPES.map((shape) => ({ shape, fillfactor, name: shape.name + (fillfactor ? `, fillfactor ${fillfactor}` : '') })),
  );
  for (const r of runs) results[r.name] = { emptyMs: [], overMs: [], placeMs: [], pgCpuMs: [], clientCpuMs: [] };
  // Warm-up: plans cached, the table and index in memory.
  for (const s of SHAPES) await store(db, s, reports(workloadIds));
  for (let round = 0; round < ROUNDS; round++) {
    // Rotated so no shape always runs first after a truncate or a vacuum.
    const order = runs.map((_, i) => runs[(i + round) % runs.length]!);
    for (const { shape: s, fillfactor, name } of order) {
      await pool.query(`alter table object_status set (fillfactor = ${fillfactor ?? 100})`);
      await pool.query('truncate object_status');
      await pool.query('vacuum analyze object_status');
      const [empty, over] = [reports(workloadIds), reports(workloadIds)];
      const pg0 = processCpuMs(backend)!;
      const client0 = process.cpuUsage();
      const [emptyMs, placeEmpty, inserted] = await store(db, s, empty);
      const [overMs, placeOver, updated] = await store(db, s, over);
      const client = process.cpuUsage(client0);
      results[name]!.pgCpuMs.push(processCpuMs(backend)! - pg0);
      results[name]!.clientCpuMs.push((client.user + client.system) / 1000);
      if (inserted !== CLUSTERS * OBJECTS || updated !== CLUSTERS * OBJECTS) {
        throw new Error(`${name}: wrote ${inserted} and ${updated} rows, not ${CLUSTERS * OBJECTS}`);
      }
      results[name]!.emptyMs.push(emptyMs);
      results[name]!.overMs.push(overMs);
      results[name]!.placeMs.push(placeEmpty, placeOver);
    }
  }
  const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
  console.log(`status store, ${CLUSTERS * OBJECTS} reports in batches of ${BATCH}, ${ROUNDS} rounds, load ${load}`);
  for (const [name, r] of Object.entries(results)) {
    const fmt = (xs: number[]): string =>
      `${Math.round(median(xs))} ms (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})`;
    console.log(
      `  ${name.padEnd(56)} empty table ${fmt(r.emptyMs)}, over stored rows ${fmt(r.overMs)}; placement reads ${fmt(r.placeMs)}; ` +
        `CPU for both: Postgres ${fmt(r.pgCpuMs)}, client ${fmt(r.clientCpuMs)}`,
    );
  }
} finally {
  await pool.end();
  await database.drop();
}
