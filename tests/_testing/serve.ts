/** A real `hermes serve` subprocess for tests: started on a free port, stopped with SIGTERM. */
import { spawnHermes } from "./cli.ts";

export interface ServeProcess extends AsyncDisposable {
  url: string;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
  child: Deno.ChildProcess;
}

export async function startServe(
  home: string,
  args: string[] = [],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<ServeProcess> {
  const child = spawnHermes(["serve", "--listen", "127.0.0.1:0", ...args], {
    home,
    ...(options.env ? { env: options.env } : {}),
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let text = "";
  const { promise: listening, resolve: announce, reject: fail } = Promise.withResolvers<string>();
  const drained = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      text += decoder.decode(chunk, { stream: true });
      const url = /listening on (https?:\/\/\S+)/.exec(text)?.[1];
      if (url) announce(url);
    }
    fail(new Error(`hermes serve exited before listening:\n${text}`));
  })();
  const stdout = child.stdout.pipeTo(new WritableStream());
  const timer = setTimeout(() => fail(new Error(`hermes serve did not listen in 60 s:\n${text}`)), 60_000);
  let url: string;
  try {
    url = await listening;
  } catch (error) {
    child.kill("SIGKILL");
    await Promise.all([child.status, drained, stdout]);
    throw error;
  } finally {
    clearTimeout(timer);
  }
  let stopped: Promise<number> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const { code } = await child.status;
      await Promise.all([drained, stdout]);
      return code;
    })();
  return { url, child, stderr: () => text, stop, [Symbol.asyncDispose]: async () => void await stop() };
}

export interface Reply {
  status: number;
  headers: Headers;
  /** Parsed JSON (tests index into it freely), or the text of a non-JSON body. */
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A fetch that reads the body (JSON when it is JSON) so no response stays open. */
export async function call(
  url: string,
  options: { method?: string; token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const response = await fetch(url, {
    method: options.method ?? (options.body === undefined ? "GET" : "POST"),
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined
      ? { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) }
      : {}),
  });
  const text = await response.text();
  const type = response.headers.get("content-type") ?? "";
  return {
    status: response.status,
    headers: response.headers,
    body: /json/.test(type) ? JSON.parse(text) : text,
  };
}

export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

/**
 * Reads a Server-Sent Events stream until it ends, or until `max` events were read (then the connection is
 * dropped, as a client that goes away does).
 */
export async function readSse(
  url: string,
  options: { token: string; lastEventId?: string; max?: number },
): Promise<{ status: number; events: SseEvent[]; body?: unknown }> {
  const response = await fetch(url, {
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: "text/event-stream",
      ...(options.lastEventId !== undefined ? { "last-event-id": options.lastEventId } : {}),
    },
  });
  if (response.status !== 200) return { status: response.status, events: [], body: await response.json() };
  const events: SseEvent[] = [];
  if (options.max === 0) {
    await response.body!.cancel();
    return { status: 200, events };
  }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event: SseEvent = { data: "" };
        const data: string[] = [];
        for (const line of block.split("\n")) {
          const colon = line.indexOf(":");
          if (colon === 0) continue;
          const field = colon === -1 ? line : line.slice(0, colon);
          const text = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "data") data.push(text);
          else if (field === "id") event.id = text;
          else if (field === "event") event.event = text;
        }
        event.data = data.join("\n");
        events.push(event);
        if (options.max !== undefined && events.length >= options.max) return { status: 200, events };
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return { status: 200, events };
}
