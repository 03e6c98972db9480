/**
 * Per-turn cost on the real path: `hermes run --resume` — openSession with its compactor on,
 * the openai provider over HTTP to the OpenAI-compatible test server — doing one `read_file` tool round after
 * another. Timing is taken at the server, so it covers everything the process does between two requests.
 *
 * - turn overhead: time per tool round minus the raw HTTP round trip of the same request (a bare fetch from
 *   a process of its own, bench/_raw_client.ts); target ≤ 2 ms.
 * - per-turn gap (reply to a tool call → next model request) on sessions of 100 stored rows, 10 000 active
 *   rows (compaction enabled, window too large to fire, so the check itself is measured) and 50 000 stored
 *   rows of which 43 are active, as ratios to the gap at 100; targets ≤ 1.5× and ≤ 1.2×. The raw client's
 *   gap on the 100-row and the 10 000-row request shows what sending 10 000 messages costs any client.
 *
 * Every case runs once per round, interleaved. Usage: deno run -A bench/turn_bench.ts [--rounds N]
 */
import { DatabaseSync } from "node:sqlite";
import { parseArgs } from "node:util";
import { interleave, ratio, report, spread } from "./_stats.ts";
import { roundSamples, SKIP, TOOL_ROUNDS, toolRounds } from "./_tool_rounds.ts";

interface Shape {
  label: string;
  stored: number;
  active: number;
}
const SHAPES = {
  small: { label: "100 stored rows", stored: 100, active: 100 },
  wide: { label: "10 000 active rows, compaction enabled", stored: 10_000, active: 10_000 },
  deep: { label: "50 000 stored rows, 43 active", stored: 50_000, active: 43 },
} satisfies Record<string, Shape>;
type ShapeName = keyof typeof SHAPES;

const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "8" } } });
const rounds = Number(values.rounds);
await using bench = await toolRounds("hermes-turn-bench-");
const { dir } = bench;

// One real run (one tool round, then an answer) creates the session every shape starts from.
const seeded = await bench.seed(["run", bench.job, "--db", `${dir}/seed.db`, "--output", "json", "--quiet"]);
const sessionId = (JSON.parse(seeded) as { session_id: string }).session_id;
for (const [name, shape] of Object.entries(SHAPES)) {
  await Deno.copyFile(`${dir}/seed.db`, `${dir}/${name}.db`);
  seedRows(`${dir}/${name}.db`, sessionId, shape);
}
const bodies = { small: `${dir}/body-small.json`, wide: `${dir}/body-wide.json` };
const samples = roundSamples(["raw", "rawWide", "small", "wide", "deep"] as const);
const { perRound, gaps } = samples;
const resumed = (name: ShapeName) => async () => {
  const exchanges = await bench.timedRun(
    ["run", "--resume", sessionId, "-p", "go", "--db", await freshCopy(name), "--quiet"],
  );
  if (name === "small" || name === "wide") await bench.saveMiddleRequest(bodies[name]);
  samples.record(name, exchanges);
  return 0;
};
const raw = (name: "raw" | "rawWide", body: string) => async () => {
  samples.record(name, await bench.timedRaw(body));
  return 0;
};
await interleave({
  small: resumed("small"),
  raw: raw("raw", bodies.small),
  wide: resumed("wide"),
  rawWide: raw("rawWide", bodies.wide),
  deep: resumed("deep"),
}, { rounds, warmup: 1 });
samples.dropWarmup();

console.log(`(median of tool rounds ${SKIP + 1}–${TOOL_ROUNDS} per process; ${rounds} processes per case)`);
report("raw HTTP round trip (bare fetch, same request)", spread(perRound.raw));
report("hermes: time per tool round (100 stored rows)", spread(perRound.small));
const overhead = perRound.small.map((ms, i) => ms - perRound.raw[i]!);
report("turn overhead = tool round − raw round trip", spread(overhead), "≤ 2 ms median");
for (const [name, shape] of Object.entries(SHAPES) as [ShapeName, Shape][]) {
  report(`per-turn gap, ${shape.label}`, spread(gaps[name]));
}
report("  10 000 active / 100 stored", ratio(gaps.wide, gaps.small), "≤ 1.5×");
report("  50 000 stored, 43 active / 100 stored", ratio(gaps.deep, gaps.small), "≤ 1.2×");
report("for reference: raw client's gap, 100-row request", spread(gaps.raw));
report("for reference: raw client's gap, 10 000-row request", spread(gaps.rawWide));

/** Each run works on a copy, so every run of a shape starts from the same rows. */
async function freshCopy(name: ShapeName): Promise<string> {
  const path = `${dir}/run-${name}.db`;
  for (const suffix of ["-wal", "-shm"]) await Deno.remove(path + suffix).catch(() => {});
  await Deno.copyFile(`${dir}/${name}.db`, path);
  return path;
}

/**
 * Grows the seeded session to `stored` rows: user / assistant tool call / tool result rounds written straight
 * into the messages table (bench-only SQL; growing it through real runs would take hours). When `active` is
 * smaller, every row but the first and the last `active - 1` is marked inactive, as compaction leaves them.
 * Assistant rows carry the prompt_tokens a server would have reported for the active rows before them.
 */
function seedRows(path: string, sessionId: string, shape: Shape): void {
  const db = new DatabaseSync(path);
  const last = db.prepare("SELECT max(seq) AS seq, count(*) AS n FROM messages WHERE session_id = ?")
    .get(sessionId) as { seq: number; n: number };
  const missing = shape.stored - last.n;
  if (missing < 0 || (shape.active < shape.stored && (shape.active - 1) % 3 !== 0)) {
    throw new Error(`Cannot seed ${shape.label}: the seed session has ${last.n} rows`);
  }
  const firstActiveTail = last.seq + missing - (shape.active - 1) + 1;
  const insert = db.prepare(
    `INSERT INTO messages (session_id, seq, pos, role, content, tool_calls, tool_call_id, kind, active,
       prompt_tokens, completion_tokens, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'message', 1, ?, ?, ?)`,
  );
  const now = Date.now();
  let tokens = 0;
  db.exec("BEGIN");
  // Extra user rows first, so the rounds that follow end on a tool result.
  const lead = missing % 3;
  for (let i = 0; i < missing; i++) {
    const seq = last.seq + 1 + i;
    const round = Math.floor((i - lead) / 3);
    const kind = i < lead ? 0 : (i - lead) % 3;
    const counts = shape.active === shape.stored || seq >= firstActiveTail;
    const row: [string, string, string | null, string | null, number | null, number | null] = kind === 0
      ? ["user", `question ${i}: what does the note say now?`, null, null, null, null]
      : kind === 1
      ? [
        "assistant",
        "",
        JSON.stringify([{ id: `seed_${round}`, name: "read_file", arguments: '{"path":"note.txt"}' }]),
        null,
        tokens,
        12,
      ]
      : ["tool", `a short note, read for round ${round}`, null, `seed_${round}`, null, null];
    insert.run(sessionId, seq, seq, row[0], row[1], row[2], row[3], row[4], row[5], now + i);
    if (counts) tokens += Math.ceil((row[1].length + (row[2]?.length ?? 0)) / 4) + 4;
  }
  if (shape.active < shape.stored) {
    db.prepare("UPDATE messages SET active = 0 WHERE session_id = ? AND seq > 1 AND seq < ?")
      .run(sessionId, firstActiveTail);
  }
  db.exec("COMMIT");
  const { n } = db.prepare("SELECT count(*) AS n FROM messages WHERE session_id = ? AND active = 1")
    .get(sessionId) as { n: number };
  db.close();
  if (n !== shape.active) {
    throw new Error(`Seeded ${shape.label}: ${n} active rows, expected ${shape.active}`);
  }
}
