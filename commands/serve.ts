/**
 * `hermes serve [--listen HOST:PORT] [--jobs DIR] [--no-worker]`: the HTTP API (runtime/http/) over one App
 * until SIGTERM/SIGINT, with a queue worker (as `hermes daemon` has) unless --no-worker.
 */
import { resolve } from "../runtime/core/path.ts";
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { parseDuration, parseSize } from "../runtime/core/duration.ts";
import { VERSION } from "../runtime/core/version.ts";
import { loadUserConfig } from "../runtime/config/job_file.ts";
import { Notifier } from "../loops/daemon/notify.ts";
import { startTelemetry, telemetrySettings } from "../runtime/telemetry/mod.ts";
import { cliApp } from "./_app.ts";
import { queueWorker } from "./daemon.ts";
import { createApi } from "../runtime/http/server.ts";
import { parseListen, serveApi } from "../runtime/http/serve.ts";
import { OpenStreams } from "../runtime/http/streams.ts";
import { ANY_RUN, Wakeups } from "../runtime/core/wakeups.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("serve", cli.args);
  if (positionals.length > 0) {
    throw new ValidationError(`hermes serve: unexpected argument "${positionals[0]}"`);
  }
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  // config.yaml's serve: stands in for a flag that is not given.
  const listenFrom = values.listen !== undefined ? "--listen" : "config.yaml: serve.listen";
  const listenText = values.listen ?? config?.serve?.listen ?? "127.0.0.1:8787";
  const listen = parseListen(listenText);
  if (!listen) {
    throw new ValidationError(
      `${listenFrom}: cannot read "${listenText}": expected HOST:PORT, e.g. 127.0.0.1:8787`,
    );
  }
  let maxBodyBytes: number | undefined;
  if (values["max-body"] !== undefined) {
    try {
      maxBodyBytes = parseSize(values["max-body"]);
    } catch {
      throw new ValidationError(`--max-body: cannot read "${values["max-body"]}": expected a size like 1MiB`);
    }
  }
  const bodyTimeoutMs = duration("--body-timeout", values["body-timeout"]);
  const streamPollMs = duration("--stream-poll", values["stream-poll"]);
  const pingMs = duration("--ping", values.ping);
  const headerTimeoutMs = duration("--header-timeout", values["header-timeout"]);
  const idleTimeoutMs = duration("--idle-timeout", values["idle-timeout"]);
  if (pingMs === 0) {
    throw new ValidationError("--ping: 0s would send pings without end: expected a duration above 0");
  }
  const rateLimit = positive("--rate-limit", values["rate-limit"]);
  const maxStreams = positive("--max-streams", values["max-streams"]);
  const concurrency = positive("--concurrency", values.concurrency) ?? 1;
  if (values["no-worker"] && values.concurrency !== undefined) {
    throw new ValidationError("--concurrency: this server runs no queued run (--no-worker)");
  }
  let jobsDir: string | undefined;
  // --jobs is relative to the working directory; config.yaml's serve.jobs to HERMES_HOME, where the file is.
  const jobs = values.jobs !== undefined
    ? { path: resolve(values.jobs), from: "--jobs", text: values.jobs }
    : config?.serve?.jobs !== undefined
    ? { path: resolve(cli.home, config.serve.jobs), from: "config.yaml: serve.jobs", text: config.serve.jobs }
    : undefined;
  if (jobs) {
    const info = await Deno.stat(jobs.path).catch(() => undefined);
    if (!info?.isDirectory) throw new ValidationError(`${jobs.from}: "${jobs.text}" is not a folder`);
    jobsDir = jobs.path;
  }
  if ((values.cert === undefined) !== (values.key === undefined)) {
    throw new ValidationError(
      `${values.cert === undefined ? "--key" : "--cert"}: HTTPS needs both --cert and --key`,
    );
  }
  const tls = values.cert !== undefined && values.key !== undefined
    ? { cert: await readPem("--cert", values.cert), key: await readPem("--key", values.key) }
    : undefined;
  const telemetry = values["no-worker"] ? undefined : await startTelemetry(
    telemetrySettings(cli.env, config?.telemetry),
    { version: VERSION, warn: (message) => cli.log.warn(message) },
  );
  const store = await cli.openStore();
  // This server's event streams look at once when its own worker stores a run's events; the console's runs
  // list listens to every run's news.
  const runEvents = new Wakeups();
  const notifyRun = (runId: string) => {
    runEvents.notify(runId);
    runEvents.notify(ANY_RUN);
  };
  // Ended runs are notified as a daemon notifies them (their `notify:` entries).
  const notifier = new Notifier({ store, clock: cli.clock, log: cli.log, env: cli.env });
  const worker = values["no-worker"] ? undefined : queueWorker(cli, store, {
    notifier,
    concurrency,
    maxRunning: config?.queue?.max_running ?? null,
    telemetry,
    onStored: (runId) => notifyRun(runId),
  });
  // A run submitted here starts at once on this server's worker; the poll is for runs queued elsewhere.
  const app = cliApp(cli, store, {
    config,
    source: "http",
    onSubmitted: (run) => {
      worker?.wake();
      notifyRun(run.id);
    },
  });
  const streams = new OpenStreams();
  let stopWatching: (() => Promise<void>) | undefined;
  try {
    // Loaded here only: no other command pays for the console's modules at start-up.
    const web = values["no-console"]
      ? undefined
      : (await import("../runtime/http/console/mod.tsx")).createConsole({
        app,
        clock: cli.clock,
        log: cli.log,
        version: VERSION,
        streams,
        runEvents,
        signal: cli.signal,
        ...(maxStreams !== undefined ? { maxStreams } : {}),
        ...(pingMs !== undefined ? { pingMs } : {}),
        ...(jobsDir !== undefined ? { jobsDir } : {}),
      });
    const api = createApi({
      app,
      clock: cli.clock,
      log: cli.log,
      version: VERSION,
      signal: cli.signal,
      streams,
      runEvents,
      ...(web ? { console: web } : {}),
      ...(jobsDir !== undefined ? { jobsDir } : {}),
      ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
      ...(rateLimit !== undefined ? { rateLimit } : {}),
      ...(maxStreams !== undefined ? { maxStreams } : {}),
      ...(bodyTimeoutMs !== undefined ? { bodyTimeoutMs } : {}),
      ...(streamPollMs !== undefined ? { streamPollMs } : {}),
      ...(pingMs !== undefined ? { pingMs } : {}),
    });
    // Runs worked by other servers: on PostgreSQL their appended events and ends wake this server's
    // streams at once (LISTEN/NOTIFY), as its own worker's do.
    stopWatching = await app.watchRunChanges(notifyRun);
    await Promise.all([
      serveApi(api, {
        listen,
        signal: cli.signal,
        log: cli.log,
        drain: () => streams.idle(5_000),
        ...(headerTimeoutMs !== undefined ? { headerTimeoutMs } : {}),
        ...(idleTimeoutMs !== undefined ? { idleTimeoutMs } : {}),
        ...(tls ? { tls } : {}),
        onListen: ({ hostname, port }) => {
          const host = hostname.includes(":") ? `[${hostname}]` : hostname;
          cli.log.info(`hermes serve: listening on ${tls ? "https" : "http"}://${host}:${port}`);
        },
      }),
      worker?.run(cli.signal),
    ]);
  } finally {
    await stopWatching?.();
    await app.close();
    await notifier.close();
    await telemetry?.shutdown(new Date(cli.clock.now()));
    await store.close();
  }
  return 0;
}

function duration(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  try {
    return parseDuration(text);
  } catch {
    throw new ValidationError(`${flag}: cannot read "${text}": expected a duration like 30s`);
  }
}

function positive(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    throw new ValidationError(`${flag}: "${text}" is not a whole number above 0`);
  }
  return Number(text);
}

async function readPem(flag: string, path: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new ValidationError(
      `${flag}: cannot read "${path}": ${error instanceof Error ? error.message : error}`,
    );
  }
  if (!text.includes("-----BEGIN ")) throw new ValidationError(`${flag}: "${path}" is not a PEM file`);
  return text;
}
