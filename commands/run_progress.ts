/**
 * `hermes run` progress on stderr (stdout carries only the product). On a terminal, outside CI: a status
 * line redrawn in place — turn counter and the time spent waiting on the model — and one line per tool call.
 * Otherwise plain log lines. Colors only on a terminal and never with NO_COLOR. What a line quotes from
 * a tool call or its result is rendered with visible escapes for control characters (visible.ts).
 */
import type { Cli } from "./_cli.ts";
import type { HermesEvent } from "../runtime/core/events.ts";
import { visibleText } from "../runtime/core/visible.ts";

export interface Progress {
  onEvent(event: HermesEvent): void;
  /** Clears the status line and stops its timer. */
  stop(): void;
}

const TICK_MS = 250;

export function runProgress(cli: Cli): Progress {
  if (cli.quiet) return { onEvent: () => {}, stop: () => {} };
  if (!cli.isTTY || cli.env.CI === "true") {
    return { onEvent: (event) => plainLine(cli, event), stop: () => {} };
  }
  return liveProgress(cli, { color: !cli.env.NO_COLOR });
}

function liveProgress(cli: Cli, options: { color: boolean }): Progress {
  const paint = (code: string, text: string) => options.color ? `\x1b[${code}m${text}\x1b[0m` : text;
  let turn = 0;
  let waitingSince: number | null = null;
  let timer: ReturnType<typeof setInterval> | undefined;
  const draw = () => {
    const waiting = waitingSince === null
      ? "working"
      : `waiting on the model ${((cli.clock.now() - waitingSince) / 1000).toFixed(1)}s`;
    cli.status(paint("2", `hermes: turn ${turn} · ${waiting}`));
  };
  const stopTimer = () => {
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
  };
  return {
    onEvent(event) {
      switch (event.type) {
        case "turn.start":
          turn = event.turn;
          waitingSince = cli.clock.now();
          if (timer === undefined) {
            const id = setInterval(draw, TICK_MS);
            Deno.unrefTimer(id);
            timer = id;
          }
          draw();
          return;
        case "turn.end":
          waitingSince = null;
          draw();
          return;
        case "tool.call":
          cli.err(`  ${paint("36", visibleText(event.tool))} ${oneLine(JSON.stringify(event.args))}`);
          return;
        case "tool.result":
          if (event.status !== "ok") {
            cli.err(`  ${paint("33", visibleText(event.tool))} ${event.status}: ${oneLine(event.content)}`);
          }
          return;
        case "result":
          stopTimer();
          cli.status("");
          return;
        default:
          plainLine(cli, event);
      }
    },
    stop() {
      stopTimer();
      cli.status("");
    },
  };
}

function oneLine(text: string): string {
  const flat = visibleText(text.replace(/\s+/g, " "));
  return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}

/** The lines printed whether or not stderr is a terminal. */
function plainLine(cli: Cli, event: HermesEvent): void {
  switch (event.type) {
    case "tool.call":
      cli.log.info(`tool ${event.tool} ${JSON.stringify(event.args).slice(0, 200)}`);
      break;
    case "tool.denied":
      cli.log.warn(`tool ${event.tool} ${event.reason}`);
      break;
    case "provider.retry":
      cli.log.warn(`model call failed (${event.error}); retry ${event.attempt} in ${event.delay_ms} ms`);
      break;
    case "compaction":
      cli.log.info(`compacted: ${event.before_tokens} → ${event.after_tokens} tokens`);
      break;
    case "loop.tick":
    case "heartbeat.tick":
      cli.log.info(`${event.type} ${event.tick}`);
      break;
    case "plugin.error":
      cli.log.warn(`plugin ${event.plugin}: ${event.error}`);
      break;
  }
}
