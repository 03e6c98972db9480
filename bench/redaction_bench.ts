/**
 * Redaction throughput with the secret set of a typical CI environment: the name-rule secrets (API keys,
 * AWS secret key and session token) a baseline checkout finds, against this checkout's, which adds the
 * credentials providers, the exporter and the store declare (Bedrock API key, OTLP header values, the store
 * URL's password, a Google credentials file's private key and fields). Each redacts the same texts —
 * 1 MiB of tool output without a secret (the common case: plain substring searches), and the same with
 * secrets and escape characters in it (the pattern runs) — interleaved A B A B; MiB/s as median (min–max).
 * Run: `deno run -A bench/redaction_bench.ts [rounds] [BASELINE]` (BASELINE: another checkout's root).
 */
import { fmt, interleave, median, report, spread } from "./_stats.ts";

const rounds = Number(Deno.args[0] ?? 30);
const baseline = Deno.args[1];
const here = new URL("..", import.meta.url).pathname;

const dir = await Deno.makeTempDir({ prefix: "hermes-redaction-bench-" });
const pem =
  `-----BEGIN PRIVATE KEY-----\n${"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ".repeat(32)}\n` +
  "-----END PRIVATE KEY-----\n";
await Deno.writeTextFile(
  `${dir}/adc.json`,
  JSON.stringify({
    type: "service_account",
    private_key_id: "3f1c0e9a8b7d6c5e4f3a2b1c0d9e8f7a6b5c4d3e",
    private_key: pem,
  }),
);
const env: Record<string, string> = {
  PATH: "/usr/bin:/bin",
  HOME: "/home/runner",
  OPENAI_API_KEY: "sk-proj-0123456789abcdefghijklmnopqrstuvwxyz0123456789AB",
  ANTHROPIC_API_KEY: "sk-ant-api03-0123456789abcdefghijklmnopqrstuvwxyz-0123456789",
  GITHUB_TOKEN: "ghs_0123456789abcdefghijklmnopqrstuvwxyzAB",
  AWS_ACCESS_KEY_ID: "AKIAIOSFODNN7EXAMPLE",
  AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  AWS_SESSION_TOKEN: "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD".repeat(4),
  AWS_BEARER_TOKEN_BEDROCK: "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWtleS0xMjM0NTY3ODkw",
  OTEL_EXPORTER_OTLP_HEADERS:
    "x-honeycomb-team=hcaik_0123456789abcdef,authorization=Bearer%20otlp-token-0123",
  HERMES_DATABASE_URL: "postgres://hermes:s3cr%2Ft-db-pass@db.internal:5432/hermes",
  GOOGLE_APPLICATION_CREDENTIALS: `${dir}/adc.json`,
};

type Secrets = Map<string, string>;
interface Redaction {
  secrets: Secrets;
  redact: (text: string) => string;
}

async function redactionOf(root: string): Promise<Redaction> {
  const url = (path: string) => new URL(path, `file://${root.replace(/\/?$/, "/")}`).href;
  const { findSecrets, redactorOf } = await import(url("runtime/core/redact.ts"));
  const secretsModule = await import(url("runtime/session/secrets.ts"));
  // The process's secrets as each checkout finds them (before: the name rules only).
  const secrets: Secrets = secretsModule.processSecrets?.(env) ?? findSecrets(env);
  return { secrets, redact: redactorOf(secrets) };
}

/** ~1 MiB of build-log-like text; `withSecrets` puts a few secrets (raw, percent-encoded) and escapes in it. */
function text(secrets: readonly string[], withSecrets: boolean): string {
  const lines: string[] = [];
  for (let i = 0; lines.join("\n").length < 1024 * 1024; i++) {
    const line = `[${i}] compiling module ${i % 97}/src/file_${i}.ts ok in ${i % 13} ms (cache hit)`;
    lines.push(
      withSecrets && i % 2000 === 0
        ? `${line} token=${secrets[i % secrets.length]} url=${
          encodeURIComponent(secrets[(i + 1) % secrets.length]!)
        }`
        : withSecrets && i % 500 === 0
        ? `${line} path C:\\\\temp\\\\x 50%`
        : line,
    );
  }
  return lines.join("\n");
}

try {
  const after = await redactionOf(here);
  const before = baseline ? await redactionOf(baseline) : null;
  console.log(
    `secrets: ${before ? `baseline ${before.secrets.size}, ` : ""}this checkout ${after.secrets.size} ` +
      `(${[...new Set(after.secrets.values())].join(", ")})`,
  );
  const values = [...after.secrets.keys()];
  for (const withSecrets of [false, true]) {
    const sample = text(values, withSecrets);
    const mib = sample.length / (1024 * 1024);
    const time = (r: Redaction) => () => {
      const started = performance.now();
      const out = r.redact(sample);
      if (withSecrets && out === sample && r === after) throw new Error("nothing was redacted");
      return Promise.resolve(performance.now() - started);
    };
    const cases = before ? { before: time(before), after: time(after) } : { after: time(after) };
    const samples = await interleave(cases as Record<"before" | "after", () => Promise<number>>, {
      rounds,
      warmup: 3,
    });
    const throughput = (ms: number[]) => ms.map((t) => mib / (t / 1000));
    const mibs = (n: number) => `${n.toFixed(0)} MiB/s`;
    const what = withSecrets ? "1 MiB with secrets and escapes" : "1 MiB without a secret";
    if (samples.before) {
      report(
        `${what}, baseline set`,
        `${spread(throughput(samples.before), mibs)} ${fmt(median(samples.before))}`,
      );
    }
    report(`${what}, larger set`, `${spread(throughput(samples.after), mibs)} ${fmt(median(samples.after))}`);
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
