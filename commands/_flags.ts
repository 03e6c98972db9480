/**
 * Every command and flag, each defined once: the parser's options (`parseCommandArgs`), the text of
 * `hermes help CMD` / `hermes CMD --help` (`_help.ts`), the names "did you mean" matches against, and the
 * CLI reference (docs/cli.md, written by `deno task docs`) all come from these definitions. No imports (the global
 * flags live in _global_flags.ts, which main.ts reads alone), so
 * help costs no start-up. A new flag is one entry here; the command reads it from `parseCommandArgs`.
 */

/** One flag: a switch when it has no `value`, else a string option whose placeholder `value` names. */
export interface FlagDef {
  readonly short?: string;
  /** The value's placeholder in help (`--model NAME`); absent for a boolean switch. */
  readonly value?: string;
  /** May be given several times; the command gets every value, in order. */
  readonly multiple?: boolean;
  /** One line: what the flag does, its default and what it overrides. */
  readonly text: string;
}

export interface CommandDef {
  readonly usage: readonly string[];
  readonly flags: Readonly<Record<string, FlagDef>>;
  readonly notes?: string;
}

export { GLOBAL_FLAGS, GLOBAL_WITH_VALUE, splitSubcommand } from "./_global_flags.ts";

const JSON_FLAG = { text: "print JSON instead of text" } as const;
const SESSIONS_NOTE = 'ID is a session id, a unique prefix of one, or "latest". Several ids are all-or-none.';

export const COMMANDS = {
  run: {
    usage: [
      "hermes run JOB.yaml [--input k=v]... [--output text|json|stream-json] [--resume SESSION] [--model NAME]",
      'hermes run -p "prompt" [--tools read_file,list_dir] [--allow "git *"]   (prompt from stdin with -p -)',
    ],
    flags: {
      prompt: {
        short: "p",
        value: "PROMPT",
        text: "one-shot prompt (- reads stdin); with a job file, replaces its prompt and steps",
      },
      input: { short: "i", value: "k=v", multiple: true, text: "set a job input" },
      output: {
        short: "o",
        value: "FORMAT",
        text: "text (default), json (one result object) or stream-json (NDJSON events)",
      },
      resume: {
        short: "r",
        value: "SESSION",
        text: "continue a stored session (id, unique prefix or latest)",
      },
      model: { short: "m", value: "NAME", text: "model name, overriding the job's and config.yaml's" },
      "max-turns": {
        value: "N",
        text: "stop a turn after N steps (model calls; exit 3), overriding limits.max_turns",
      },
      "max-budget-usd": {
        value: "USD",
        text: "stop before a model call that would spend more than USD on this run (exit 3), overriding " +
          "limits.max_cost_usd",
      },
      timeout: {
        value: "DURATION",
        text: "stop after this long, e.g. 90s or 15m (exit 3), overriding limits.timeout",
      },
      tools: {
        value: "LIST",
        text:
          "offer these built-in tools, comma-separated (read_file,list_dir,write_file,http_fetch,shell), rooted at the current directory",
      },
      allow: {
        value: "PATTERN",
        multiple: true,
        text: "offer shell, allowing commands matching PATTERN, e.g. 'git *'",
      },
      record: {
        value: "FILE",
        text: "record every model exchange and tool execution into a cassette FILE for hermes replay and " +
          "hermes test (written when the run ends; secrets replaced)",
      },
      args: {
        value: "LINE",
        multiple: true,
        text:
          "more run flags as one line, split into words without a shell: '…' and \"…\" quote, \\ escapes, " +
          "# comments, nothing expanded (the GitHub Action's args input)",
      },
      label: {
        value: "K=V",
        multiple: true,
        text: "label the new session (added to the job's labels: and the CI's; hermes cost --by label:K)",
      },
      worktree: {
        text: "work in a new git worktree on its own branch (hermes/SESSION), as workspace: {isolation: " +
          "worktree} does; the result's workspace names it",
      },
      untrusted: {
        text:
          "hold the job file (or the --resume session's stored job) to the strict built-in policy: sandbox " +
          "on, writes only in its directory (its .git and job files read-only), no network, env templates, " +
          "env: names that steer programs, plugins or MCP servers of its own, endpoint from config.yaml",
      },
    },
    notes: "Exit codes: 0 success, 1 failed, 2 invalid input, 3 limit reached, 130 SIGINT, 143 SIGTERM.",
  },
  validate: {
    usage: ["hermes validate JOB.yaml|DIR... [--json] [--deep]"],
    flags: {
      json: { text: "print one JSON array of {file, valid, job, errors}" },
      deep: { text: "also start the job's plugins and MCP servers (as run does) and stop them" },
    },
    notes: "Checks this machine too (the OS sandbox a shell tool, plugin or MCP server needs). A directory " +
      "means the job files in it: *.yaml with a top-level name: and prompt:, steps:, schedule:, model: or " +
      "tools: (or the job.schema.json modeline); the other YAML files are named as skipped. Exit 0 or 2.",
  },
  replay: {
    usage: [
      "hermes replay CASSETTE [--job JOB.yaml] [--tools recorded|live] [--output text|json|stream-json]",
    ],
    flags: {
      job: {
        value: "JOB.yaml",
        text: "run this job file (with the recorded inputs) instead of the job the cassette holds",
      },
      tools: {
        value: "MODE",
        text: "recorded (default: tool results from the cassette, nothing runs) or live (run the tools; a " +
          "different result is a divergence)",
      },
      input: { short: "i", value: "k=v", multiple: true, text: "set a job input, over the recorded ones" },
      output: {
        short: "o",
        value: "FORMAT",
        text: "text (default), json (one result object) or stream-json (NDJSON events)",
      },
    },
    notes: "Every model answer comes from the cassette: no model server is contacted, whatever the job " +
      "says. A request that differs from the recorded one stops the run: exit 1, terminal_reason " +
      "replay_diverged, and the error names the model call, the message and the field.",
  },
  test: {
    usage: [
      "hermes test [PATH...] [--reporter text|junit|json|tap] [--jobs N] [--report-file FILE]",
      "hermes test [PATH...] --update [--max-budget-usd USD]     (re-record cassettes against the job's model)",
      "hermes test [PATH...] --live [--repeat N]                 (against the job's model; pass rates)",
    ],
    flags: {
      reporter: { value: "FORMAT", text: "text (default; a table on a terminal), junit, json or tap" },
      "report-file": {
        value: "FILE",
        text: "write the report (of --reporter's format) to FILE and a text summary to stdout",
      },
      jobs: { short: "j", value: "N", text: "run N cases at a time (default 1)" },
      update: { text: "run cases that have a cassette against the job's real model and record it anew" },
      live: { text: "run every case against the job's real model instead of its cassette or replies" },
      repeat: { value: "N", text: "with --live: run each case N times and report its pass rate" },
      "max-budget-usd": {
        value: "USD",
        text: "with --update or --live: stop starting cases once the runs have spent this much",
      },
    },
    notes: "PATH is a *.test.yaml case file or a folder searched for them (default: the current folder). " +
      "Exit 0 when every case passes, 1 when one fails, 2 when a case file is invalid (file:line:col).",
  },
  schema: {
    usage: ["hermes schema [job|result|events|cassette|openapi]"],
    flags: {},
    notes:
      "Prints a JSON Schema: job (the default) of job files, result of the --output json result object, " +
      "events of the --output stream-json lines and RPC event notifications, cassette of a recorded run " +
      "(schemas/ in the repository holds these three), openapi the OpenAPI 3.1 document of `hermes serve`'s API.",
  },
  sessions: {
    usage: [
      "hermes sessions list|show|export|search|delete|archive|unarchive|prune|compact|compactions … [--json]",
    ],
    flags: {},
    notes: "Run `hermes help sessions COMMAND` for one command's flags.",
  },
  "sessions list": {
    usage: [
      "hermes sessions list [--json] [--job NAME] [--status S] [--since 7d|DATE] [--archived] [--limit N]",
    ],
    flags: {
      json: { text: "print a JSON array (the default when stdout is not a terminal)" },
      job: { value: "NAME", text: "only sessions of this job" },
      status: {
        value: "STATUS",
        text: "only sessions with this status (running, success, failed, limit, interrupted, …)",
      },
      since: { value: "AGE|DATE", text: "only sessions created since, e.g. 7d or 2026-01-31" },
      archived: { text: "list archived sessions instead" },
      limit: { value: "N", text: "at most N sessions" },
    },
    notes: "Newest first; a table on a terminal, a JSON array otherwise.",
  },
  "sessions show": {
    usage: ["hermes sessions show ID [--all] [--json]"],
    flags: { all: { text: "also rows replaced by compaction ([compacted])" }, json: JSON_FLAG },
    notes: SESSIONS_NOTE,
  },
  "sessions export": {
    usage: ["hermes sessions export ID [--format jsonl|md] [-o FILE]"],
    flags: {
      format: { value: "FORMAT", text: "jsonl (default: a session line, then one per message) or md" },
      output: { short: "o", value: "FILE", text: "write to FILE instead of stdout" },
    },
    notes: SESSIONS_NOTE,
  },
  "sessions search": {
    usage: ["hermes sessions search QUERY... [--json] [--job NAME] [--limit N] [--sort newest|relevance]"],
    flags: {
      json: JSON_FLAG,
      job: { value: "NAME", text: "only sessions of this job" },
      limit: { value: "N", text: "at most N hits" },
      sort: { value: "ORDER", text: "newest (default) or relevance" },
    },
    notes:
      'Full-text search over all messages, compacted ones included; words are ANDed, "quoted phrase", prefix*.',
  },
  "sessions delete": {
    usage: ["hermes sessions delete ID... [--force] [--json] [--remove-worktree]"],
    flags: {
      "remove-worktree": {
        text:
          "also remove the sessions' own worktrees (workspace.isolation: worktree) without asking; a branch " +
          "with commits stays",
      },
      force: { text: "also sessions held by a live process" },
      json: JSON_FLAG,
    },
    notes: SESSIONS_NOTE,
  },
  "sessions archive": {
    usage: ["hermes sessions archive ID... [--force] [--json]"],
    flags: { force: { text: "also sessions held by a live process" }, json: JSON_FLAG },
    notes: "Hides sessions from list and keeps everything (list --archived shows them). " + SESSIONS_NOTE,
  },
  "sessions unarchive": {
    usage: ["hermes sessions unarchive ID... [--json]"],
    flags: { json: JSON_FLAG },
    notes: SESSIONS_NOTE,
  },
  "sessions prune": {
    usage: ["hermes sessions prune --older-than 30d [--job NAME] [--dry-run] [--yes] [--json]"],
    flags: {
      "older-than": {
        value: "AGE",
        text: "delete sessions not updated for this long (a unit is required: 30d, 12h)",
      },
      job: { value: "NAME", text: "only sessions of this job" },
      "dry-run": { text: "list what would be deleted, delete nothing" },
      yes: { short: "y", text: "do not ask (required when stdin is not a terminal)" },
      json: JSON_FLAG,
    },
  },
  "sessions compact": {
    usage: ["hermes sessions compact ID [--focus TEXT] [--json]"],
    flags: { focus: { value: "TEXT", text: "what the summary should keep" }, json: JSON_FLAG },
    notes: "Compacts now (like /compress) with the session's own model and settings.",
  },
  "sessions compactions": {
    usage: ["hermes sessions compactions ID [--json]"],
    flags: { json: JSON_FLAG },
    notes:
      "The compaction report: passes, outcomes, hard compactions and fallbacks, context occupancy, prompt cache. " +
      SESSIONS_NOTE,
  },
  submit: {
    usage: [
      "hermes submit JOB.yaml [--input k=v]... [--key KEY] [--priority N] [--not-before TIME] [--output text|json]",
    ],
    flags: {
      input: { short: "i", value: "k=v", multiple: true, text: "set a job input" },
      label: {
        value: "K=V",
        multiple: true,
        text:
          "label the run and its session (added to the job's labels: and the CI's; hermes cost --by label:K)",
      },
      key: {
        value: "KEY",
        text: "idempotency key: submitting the same key again returns the run it first submitted",
      },
      priority: { value: "N", text: "higher runs first (an integer, default 0)" },
      "not-before": {
        value: "TIME",
        text: "not started before this time: an ISO time (2026-01-31T09:00:00Z) or a delay from now (10m)",
      },
      output: {
        short: "o",
        value: "FORMAT",
        text: "text (the run id, default) or json ({run_id, status, deduplicated})",
      },
    },
    notes: "Validates the job exactly as run does (exit 2, nothing queued) and returns at once; a worker " +
      "(hermes daemon) runs it. See hermes runs.",
  },
  runs: {
    usage: ["hermes runs list|show|wait|cancel|events … [--json]"],
    flags: {},
    notes:
      "Run `hermes help runs COMMAND` for one command's flags. RUN is a run id or a unique prefix of one.",
  },
  "runs list": {
    usage: ["hermes runs list [--json] [--status S] [--job NAME] [--limit N]"],
    flags: {
      json: { text: "print a JSON array of run records" },
      status: {
        value: "STATUS",
        text: "only runs with this status (queued, running, success, cancelled, …)",
      },
      job: { value: "NAME", text: "only runs of this job" },
      limit: { value: "N", text: "at most N runs (default 50)" },
    },
    notes: "Newest first.",
  },
  "runs show": {
    usage: ["hermes runs show RUN [--json]"],
    flags: { json: { text: "print the run record as JSON" } },
    notes: "The run, its worker, its session and result; a queued run waiting for its group or a " +
      "rate-limited model says so.",
  },
  "runs wait": {
    usage: ["hermes runs wait RUN [--output text|json] [--timeout DURATION]"],
    flags: {
      output: {
        short: "o",
        value: "FORMAT",
        text: "text (the final answer, default) or json (the result object)",
      },
      timeout: {
        value: "DURATION",
        text: "give up after this long (exit 3); default: wait as long as it takes",
      },
    },
    notes: "Waits for the run to end and exits with its exit code.",
  },
  "runs cancel": {
    usage: ["hermes runs cancel RUN [--json]"],
    flags: { json: { text: "print the run record as JSON" } },
    notes: "A queued run is cancelled at once; a running one is stopped by its worker within a second.",
  },
  "runs events": {
    usage: ["hermes runs events RUN [--follow]"],
    flags: { follow: { short: "f", text: "keep streaming until the run ends" } },
    notes: "The run's events as NDJSON, the lines of run --output stream-json.",
  },
  daemon: {
    usage: [
      "hermes daemon [JOB.yaml | DIR]... [--grace DURATION] [--concurrency N]",
      "hermes daemon status [JOB.yaml | DIR]... [--json]",
    ],
    flags: {
      grace: { value: "DURATION", text: "on SIGTERM, let running work finish for this long" },
      concurrency: { value: "N", text: "queued runs this process runs at once (default 1)" },
      json: { text: "with status: print JSON" },
    },
  },
  plugins: {
    usage: ["hermes plugins list|check PATH [--json]"],
    flags: { json: { text: "with list: print JSON" } },
  },
  mcp: {
    usage: ["hermes mcp list [JOB.yaml] [--json]"],
    flags: { json: JSON_FLAG },
    notes: "The MCP servers of a job (or of config.yaml), their status and tools.",
  },
  store: {
    usage: ["hermes store info [--json]", "hermes store migrate --to postgres://… [--json]"],
    flags: {
      to: { value: "URL", text: "with migrate: the PostgreSQL store to copy this store into" },
      json: JSON_FLAG,
    },
    notes: "info: backend, schema version and row counts. migrate: copies every session (archived ones, " +
      "compacted rows, state and compaction log included), the schedule run history, plugin state and the " +
      "recorded model calls, then " +
      "verifies counts and a checksum per session and every other row; re-running copies only what is " +
      "missing, and exit 1 names what differs.",
  },
  cost: {
    usage: ["hermes cost [--since D] [--until D] [--by job|model|day|label:KEY]... [--json|--csv]"],
    flags: {
      since: {
        value: "D",
        text:
          "only model calls at or after D: a date (2026-01-31), a time (2026-01-31T09:00Z) or an age (7d, 12h)",
      },
      until: {
        value: "D",
        text:
          "only model calls before D (a date alone: up to the end of that day, UTC); same forms as --since",
      },
      by: {
        value: "GROUP",
        multiple: true,
        text: "group by job, model, day (UTC) or label:KEY (a session label, e.g. label:ci.repository); " +
          "several nest in the order given",
      },
      json: { text: "print one JSON object: the groups and the total" },
      csv: { text: "print CSV: a header line, then one line per group" },
    },
    notes:
      "Spend and tokens of every model call the store recorded (each is recorded as soon as it answered, " +
      "so failed, cancelled and killed runs count), summary calls and child sessions included under the " +
      "session they belong to. Without --by: one total.",
  },
  serve: {
    usage: [
      "hermes serve [--listen HOST:PORT] [--jobs DIR] [--no-worker] [--concurrency N] [--no-console] [--max-body SIZE] [--rate-limit N] [--max-streams N] [--body-timeout D] [--header-timeout D] [--idle-timeout D] [--stream-poll D] [--ping D] [--cert FILE --key FILE]",
    ],
    flags: {
      listen: { value: "HOST:PORT", text: "the address to listen on (default 127.0.0.1:8787); plain HTTP" },
      jobs: {
        value: "DIR",
        text: "the folder whose job files POST /v1/runs names by file name (without it, no job is named)",
      },
      "no-worker": { text: "only accept and serve: leave running queued runs to daemons and other servers" },
      "no-console": { text: "serve no web console at / (docs/console.md): only the API" },
      "max-body": { value: "SIZE", text: "largest request body, e.g. 1MiB (the default); larger is 413" },
      "rate-limit": {
        value: "N",
        text: "requests a minute per token (default 600); over it, 429 with Retry-After",
      },
      "max-streams": {
        value: "N",
        text: "event streams open at once per token (default 8); one more is 429",
      },
      "body-timeout": {
        value: "DURATION",
        text: "how long a client may take to send a request body (default 30s); slower is 408",
      },
      "stream-poll": {
        value: "DURATION",
        text:
          "how often an event stream looks at the store when nothing woke it (default 200ms; 5s on PostgreSQL, " +
          "whose notifications wake it)",
      },
      "header-timeout": {
        value: "DURATION",
        text: "how long a request's headers may take from their first byte (default 10s); slower is dropped",
      },
      "idle-timeout": {
        value: "DURATION",
        text: "how long a connection may stay open between requests (default 60s)",
      },
      ping: {
        value: "DURATION",
        text: "an event stream with nothing to send for this long sends a `: ping` comment (default 15s)",
      },
      cert: { value: "FILE", text: "PEM certificate chain: serve HTTPS (with --key); default plain HTTP" },
      key: { value: "FILE", text: "PEM private key of --cert" },
      concurrency: { value: "N", text: "queued runs this server's worker runs at once (default 1)" },
    },
    notes: "The HTTP API (docs/serve.md): runs, their events as Server-Sent Events, sessions, health and " +
      "metrics under /v1, each route behind a bearer token from `hermes tokens create`; a web console at / " +
      "(docs/console.md) signed in with such a token. Stops on SIGTERM or " +
      "SIGINT: it stops accepting, ends open event streams and lets running runs finish.",
  },
  tokens: {
    usage: [
      "hermes tokens create --scope SCOPE... [--name NAME] [--expires DURATION|DATE] [--json]",
      "hermes tokens list [--json]",
      "hermes tokens revoke ID",
    ],
    flags: {
      scope: {
        value: "SCOPE",
        multiple: true,
        text: "with create: runs:read, runs:write, sessions:read, sessions:write, approvals or admin",
      },
      name: { value: "NAME", text: "with create: a name to recognise the token by in `tokens list`" },
      expires: {
        value: "D",
        text: "with create: expire after a duration (30d, 12h) or at a date (2027-01-31)",
      },
      json: JSON_FLAG,
    },
    notes: "API tokens for `hermes serve`. create prints the token once; the store keeps only its hash. " +
      "revoke takes the id `tokens list` shows and holds for the next request on every server.",
  },
  doctor: {
    usage: ["hermes doctor [--json] [--full]"],
    flags: {
      json: JSON_FLAG,
      full: {
        text: "check the SQLite store with the full integrity_check (default: the faster quick_check)",
      },
    },
    notes:
      "Can this machine run the OS sandbox, plugins and the store? The store check reads without changing " +
      "anything: a SQLite file must be SQLite, intact and of a known schema version; a PostgreSQL store must " +
      "be reachable with a known schema version (pending migrations are named). One line per check; exit 1 " +
      "when one fails.",
  },
  rpc: {
    usage: ["hermes rpc [--max-line SIZE]"],
    flags: { "max-line": { value: "SIZE", text: "largest accepted request line, e.g. 16MiB" } },
    notes: "JSON-RPC 2.0 over stdin/stdout, one message per line.",
  },
  acp: { usage: ["hermes acp"], flags: {}, notes: "Agent Client Protocol over stdin/stdout." },
  help: { usage: ["hermes help [COMMAND]"], flags: {}, notes: "Same as `hermes COMMAND --help`." },
} as const satisfies Record<string, CommandDef>;

export type CommandName = keyof typeof COMMANDS;

/** The top-level command names, for "did you mean". */
export const COMMAND_NAMES = Object.keys(COMMANDS).filter((name) => !name.includes(" "));

/** The parseArgs option of each flag, typed so that a string flag's value is a string (or a list). */
export type ParseOptions<F extends Readonly<Record<string, FlagDef>>> = {
  -readonly [K in keyof F]: {
    type: F[K] extends { value: string } ? "string" : "boolean";
    multiple: F[K] extends { multiple: true } ? true : false;
    short?: string;
  };
};

export function parseOptions<F extends Readonly<Record<string, FlagDef>>>(flags: F): ParseOptions<F> {
  const options: Record<string, { type: "string" | "boolean"; multiple: boolean; short?: string }> = {};
  for (const [name, flag] of Object.entries(flags)) {
    options[name] = {
      type: flag.value === undefined ? "boolean" : "string",
      multiple: flag.multiple ?? false,
      ...(flag.short === undefined ? {} : { short: flag.short }),
    };
  }
  return options as ParseOptions<F>;
}
