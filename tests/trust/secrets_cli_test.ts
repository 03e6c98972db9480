/**
 * Secrets are replaced (docs/secrets.md) before they are stored or printed, on values. The raw
 * database and its WAL hold none; `hermes sessions show/export/search` run without the variables print
 * none; a secret holding `"`, `\` and a tab is redacted in --output json and stream-json. Real CLI,
 * scripted model, the shell tool printing its environment.
 */
import assert from "node:assert/strict";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const TOKEN = "sk-live-4f9a8b7c6d5e";
const CRED = "plain-named-credential-77";
const LABEL = "visible-label-123";

const JOB = `name: secrets
model: { provider: scripted, script: ./r.yaml }
redact: [MY_CRED]
env:
  DEPLOY_TOKEN: "{{ env.DEPLOY_TOKEN }}"
  MY_CRED: "{{ env.MY_CRED }}"
  LABEL: ${LABEL}
tools:
  shell: { allow: ["printenv *"], timeout: 10s }
`;
const REPLIES =
  `- { match: show, tool_calls: [{ name: shell, arguments: { command: "printenv DEPLOY_TOKEN MY_CRED LABEL" } }] }
- { match: show, content: "the token is ${TOKEN} and the credential ${CRED}; label ${LABEL}" }
`;

async function storeBytes(dir: string): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("state.db")) {
      text += new TextDecoder().decode(await Deno.readFile(`${dir}/${entry.name}`));
    }
  }
  return text;
}

Deno.test({
  name: "secrets never reach the store (db and WAL); viewing it without the environment shows none",
  ignore: withoutSandbox,
}, async () => {
  const dir = await writeFiles(await tempDir(), { "job.yaml": JOB, "r.yaml": REPLIES });
  const run = await hermes(["run", "job.yaml", "-p", "show", "--output", "stream-json"], {
    cwd: dir,
    home: dir,
    env: { DEPLOY_TOKEN: TOKEN, MY_CRED: CRED },
  });
  assert.equal(run.code, 0, run.stderr);
  assert.ok(!run.stdout.includes(TOKEN) && !run.stdout.includes(CRED), run.stdout);
  const events = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
  const tool = events.find((e) => e.type === "tool.result");
  assert.equal(tool.content.trim(), `[REDACTED:DEPLOY_TOKEN]\n[REDACTED:MY_CRED]\n${LABEL}`);
  const id = events.at(-1).session_id;

  const raw = await storeBytes(dir);
  assert.ok(raw.includes("[REDACTED:DEPLOY_TOKEN]"), "the redacted form is what was stored");
  assert.ok(!raw.includes(TOKEN), "state.db and its WAL hold no *_TOKEN value");
  assert.ok(!raw.includes(CRED), "state.db and its WAL hold no value named in redact:");
  assert.ok(raw.includes(LABEL), "a value that is not secret is stored verbatim");

  // Viewed without the variables set: nothing to redact with, and nothing to hide.
  for (
    const args of [["sessions", "show", id], ["sessions", "show", id, "--json"], ["sessions", "export", id], [
      "sessions",
      "search",
      "token",
    ]]
  ) {
    const view = await hermes(args, { cwd: dir, home: dir });
    assert.equal(view.code, 0, `${args.join(" ")}: ${view.stderr}`);
    assert.ok(
      !view.stdout.includes(TOKEN) && !view.stdout.includes(CRED),
      `${args.join(" ")}: ${view.stdout}`,
    );
  }
  const shown = await hermes(["sessions", "show", id], { cwd: dir, home: dir });
  assert.match(shown.stdout, new RegExp(LABEL), "non-secret text is shown as it was");
});

const AWKWARD = 'pa"ss\\wo\trd-99';

Deno.test({
  name: 'a secret holding ", \\ and a tab is redacted in --output json and stream-json',
  ignore: withoutSandbox,
}, async () => {
  const replies =
    `- { match: show, tool_calls: [{ name: shell, arguments: { command: "printenv DB_PASSWORD" } }] }
- { match: show, content: ${JSON.stringify(`leaked ${AWKWARD} here`)} }
`;
  const job = `name: awkward
model: { provider: scripted, script: ./r.yaml }
env: { DB_PASSWORD: "{{ env.DB_PASSWORD }}" }
tools:
  shell: { allow: ["printenv *"], timeout: 10s }
`;
  const dir = await writeFiles(await tempDir(), { "job.yaml": job, "r.yaml": replies });
  const escaped = JSON.stringify(AWKWARD).slice(1, -1);
  for (const format of ["json", "stream-json"]) {
    const run = await hermes(["run", "job.yaml", "-p", "show", "--output", format], {
      cwd: dir,
      home: dir,
      env: { DB_PASSWORD: AWKWARD },
    });
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stdout.includes(escaped) && !run.stdout.includes(AWKWARD), `${format}: ${run.stdout}`);
    assert.match(run.stdout, /leaked \[REDACTED:DB_PASSWORD\] here/, format);
  }
  assert.ok(!(await storeBytes(dir)).includes(escaped));
});
