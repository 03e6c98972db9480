/**
 * A secret holding `"`, `\` and a tab, printed by a tool as JSON, URL-encoded (both kinds of
 * percent-encoding, either case of hex) and base64 (alone, url-safe, inside `user:secret`), is absent
 * from the raw SQLite file and its WAL, from `sessions export`, from stream-json, and from a PostgreSQL
 * store. Real CLI, scripted model, the shell tool in the sandbox.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { admin, scratchDatabase, URL_VARIABLE } from "../../runtime/store/postgres/_testing.ts";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const SECRET = 'pa"ss\\wo\trd 42&x=y';
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** Every rendering the tool prints (and the test then looks for in the bytes). */
const FORMS: Record<string, string> = {
  raw: SECRET,
  json: JSON.stringify(SECRET).slice(1, -1),
  "json in json": JSON.stringify(JSON.stringify(SECRET)).slice(1, -1),
  "\\u escapes": [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""),
  uri: encodeURIComponent(SECRET),
  "uri lower hex": encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()),
  form: new URLSearchParams({ v: SECRET }).toString().slice(2),
  base64: b64(SECRET),
  "base64 url-safe": Buffer.from(SECRET, "utf8").toString("base64url"),
  "basic auth": b64(`deploy:${SECRET}`),
};

const FILE = Object.entries(FORMS).map(([label, form]) => `${label}: ${form}`).join("\n") + "\n";

// printf turns the escaped variable into JSON the way a tool would: `"` → `\"`, `\` → `\\`, tab → `\t`.
const JSON_COMMAND = `printf '{"password":"%s"}\\n' "$(printenv DB_PASSWORD | sed -e 's/\\\\/\\\\\\\\/g' ` +
  `-e 's/"/\\\\"/g' -e 's/\\t/\\\\t/g')"`;

const REPLIES = `- { match: show, tool_calls: [{ name: shell, arguments: { command: ${
  JSON.stringify(JSON_COMMAND)
} } }] }
- { match: show, tool_calls: [{ name: shell, arguments: { command: "cat forms.txt" } }] }
- { match: show, tool_calls: [{ name: shell, arguments: { command: "printenv DB_PASSWORD | base64 -w0" } }] }
- { match: show, content: done }
`;

const JOB = `name: secret-forms
model: { provider: scripted, script: ./r.yaml }
env: { DB_PASSWORD: "{{ env.DB_PASSWORD }}" }
tools:
  shell: { timeout: 10s }
`;

async function project(): Promise<string> {
  return await writeFiles(await tempDir(), { "job.yaml": JOB, "r.yaml": REPLIES, "forms.txt": FILE });
}

function assertNoForm(text: string, where: string): void {
  for (const [label, form] of Object.entries(FORMS)) {
    assert.ok(!text.includes(form), `${where} holds the ${label} form of the secret`);
  }
}

async function storeFiles(dir: string): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("state.db")) {
      text += new TextDecoder().decode(await Deno.readFile(`${dir}/${entry.name}`));
    }
  }
  return text;
}

Deno.test({
  name: "encoded forms of a secret printed by a tool: absent from SQLite, its WAL, export and stream-json",
  ignore: withoutSandbox,
}, async () => {
  const dir = await project();
  const run = await hermes(["run", "job.yaml", "-p", "show", "--output", "stream-json"], {
    cwd: dir,
    home: dir,
    env: { DB_PASSWORD: SECRET },
  });
  assert.equal(run.code, 0, run.stderr);
  assertNoForm(run.stdout, "stream-json");
  const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const results = events.filter((e) => e.type === "tool.result").map((e) => e.content as string);
  assert.equal(results.length, 3);
  // The tool did print the JSON: its shape is there, the value is replaced.
  assert.equal(results[0]!.trim(), '{"password":"[REDACTED:DB_PASSWORD]"}');
  for (const label of Object.keys(FORMS)) {
    const line = results[1]!.split("\n").find((l) => l.startsWith(`${label}: `));
    assert.match(line ?? "", /\[REDACTED:DB_PASSWORD\]/, label);
  }
  // base64 of the value and its newline: the stable part is replaced, the last group (`Cg==`) is not secret.
  assert.match(results[2]!.trim(), /^\[REDACTED:DB_PASSWORD\]/);

  const raw = await storeFiles(dir);
  assert.ok(raw.includes("[REDACTED:DB_PASSWORD]"), "the redacted form is what was stored");
  assertNoForm(raw, "state.db or its WAL");
  const id = events.at(-1).session_id;
  for (const args of [["sessions", "export", id], ["sessions", "show", id, "--json"]]) {
    const view = await hermes(args, { cwd: dir, home: dir });
    assert.equal(view.code, 0, view.stderr);
    assertNoForm(view.stdout, args.join(" "));
    assert.match(view.stdout, /REDACTED:DB_PASSWORD/);
  }
});

const serverUrl = Deno.env.get(URL_VARIABLE);

Deno.test({
  name: "encoded forms of a secret printed by a tool: absent from every row of a PostgreSQL store" +
    (serverUrl ? "" : ` (skipped: ${URL_VARIABLE} is not set)`),
  ignore: withoutSandbox || (!serverUrl && Deno.env.get("CI") !== "true"),
}, async () => {
  assert.ok(serverUrl, `${URL_VARIABLE} is not set, so this PostgreSQL test did not run`);
  await using db = await scratchDatabase(serverUrl, "hermes_secret_forms");
  const dir = await project();
  const run = await hermes(["run", "job.yaml", "-p", "show", "--output", "json", "--db", db.url], {
    cwd: dir,
    home: dir,
    env: { DB_PASSWORD: SECRET },
  });
  assert.equal(run.code, 0, run.stderr);
  assertNoForm(run.stdout, "the json result");
  // Every row of every table, as PostgreSQL renders it.
  const rows = await admin(db.url, async (sql) => {
    const tables = await sql<{ name: string }[]>`
      SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name
      FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema')`;
    let text = "";
    for (const { name } of tables) {
      const found = await sql.unsafe(`SELECT t::text AS row FROM ${name} t`);
      text += found.map((r) => r.row).join("\n");
    }
    return text;
  });
  assert.ok(rows.includes("[REDACTED:DB_PASSWORD]"), "the redacted form is what was stored");
  assertNoForm(rows, "the PostgreSQL store");
});
