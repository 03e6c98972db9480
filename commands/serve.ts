/**
 * `hermes serve [--listen HOST:PORT] [--jobs DIR] [--no-worker]`: the HTTP API (runtime/http/) over one App
 * until SIGTERM/SIGINT.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { parseSize } from "../runtime/core/duration.ts";
import { VERSION } from "../runtime/core/version.ts";
import { loadUserConfig } from "../runtime/config/job_file.ts";
import { cliApp } from "./_app.ts";
import { createApi } from "../runtime/http/server.ts";
import { parseListen, serveApi } from "../runtime/http/serve.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("serve", cli.args);
  if (positionals.length > 0) {
    throw new ValidationError(`hermes serve: unexpected argument "${positionals[0]}"`);
  }
  const listenText = values.listen ?? "127.0.0.1:8787";
  const listen = parseListen(listenText);
  if (!listen) {
    throw new ValidationError(
      `--listen: cannot read "${listenText}": expected HOST:PORT, e.g. 127.0.0.1:8787`,
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
  let rateLimit: number | undefined;
  if (values["rate-limit"] !== undefined) {
    rateLimit = Number(values["rate-limit"]);
    if (!Number.isInteger(rateLimit) || rateLimit < 1) {
      throw new ValidationError(
        `--rate-limit: "${values["rate-limit"]}" is not a whole number of requests above 0`,
      );
    }
  }
  if (values.jobs !== undefined) {
    const info = await Deno.stat(values.jobs).catch(() => undefined);
    if (!info?.isDirectory) throw new ValidationError(`--jobs: "${values.jobs}" is not a folder`);
  }
  const config = loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  const store = await cli.openStore();
  const app = cliApp(cli, store, { config, source: "http" });
  try {
    const api = createApi({
      app,
      clock: cli.clock,
      log: cli.log,
      version: VERSION,
      ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
      ...(rateLimit !== undefined ? { rateLimit } : {}),
    });
    await serveApi(api, {
      listen,
      signal: cli.signal,
      log: cli.log,
      onListen: ({ hostname, port }) => {
        const host = hostname.includes(":") ? `[${hostname}]` : hostname;
        cli.log.info(`hermes serve: listening on http://${host}:${port}`);
      },
    });
  } finally {
    await app.close();
    await store.close();
  }
  return 0;
}
