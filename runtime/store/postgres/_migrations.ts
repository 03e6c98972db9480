/**
 * The PostgreSQL store's schema, one entry per version (`schema_version` records those applied). Append
 * only: a released migration is never edited. Times are epoch milliseconds (bigint). Ids and keys that are
 * compared by prefix or sorted are `COLLATE "C"` (byte order, as in SQLite), whatever the database's locale.
 */
export const migrations: readonly string[] = [
  // 1: everything the store contract needs.
  `
  CREATE TABLE sessions (
    id text COLLATE "C" PRIMARY KEY,
    -- Insertion order: breaks ties between sessions created in the same millisecond (SQLite's rowid).
    n bigint GENERATED ALWAYS AS IDENTITY,
    job text NOT NULL,
    job_path text,
    status text NOT NULL,
    terminal_reason text,
    parent_id text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    ended_at bigint,
    archived_at bigint,
    config_json text NOT NULL DEFAULT '{}',
    model text,
    prompt_tokens bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    turns integer NOT NULL DEFAULT 0,
    owner_host text,
    owner_pid integer,
    owner_started text,
    -- The highest seq given out: an append increments it, which also locks the row, so appends to one
    -- session are serialised and numbered without gaps across every connection.
    last_seq bigint NOT NULL DEFAULT 0
  );
  CREATE INDEX sessions_created ON sessions (created_at, n);
  CREATE INDEX sessions_job ON sessions (job, created_at);

  CREATE TABLE messages (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq bigint NOT NULL,
    pos double precision NOT NULL,
    role text NOT NULL,
    content text NOT NULL,
    tool_calls text,
    tool_call_id text,
    name text,
    kind text NOT NULL DEFAULT 'message',
    active boolean NOT NULL DEFAULT true,
    prompt_tokens integer,
    completion_tokens integer,
    created_at bigint NOT NULL,
    compaction_id bigint,
    -- Filled lazily by syncSearchIndex (appends stay one cheap insert); NULL until then.
    tsv tsvector,
    UNIQUE (session_id, seq)
  );
  CREATE INDEX messages_active ON messages (session_id, pos, seq) WHERE active;
  CREATE INDEX messages_readings ON messages (session_id, seq)
    WHERE active AND role = 'assistant' AND prompt_tokens IS NOT NULL;
  CREATE INDEX messages_compaction_rows ON messages (session_id, seq) WHERE active AND kind <> 'message';
  CREATE INDEX messages_unindexed ON messages (id) WHERE tsv IS NULL;
  CREATE INDEX messages_search ON messages USING gin (tsv);

  CREATE TABLE session_kv (
    session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key text COLLATE "C" NOT NULL,
    value text NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (session_id, key)
  );

  CREATE TABLE compaction_leases (
    session_id text COLLATE "C" PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    holder_host text NOT NULL,
    holder_pid integer NOT NULL,
    holder_started text NOT NULL,
    holder_nonce text NOT NULL,
    acquired_at bigint NOT NULL,
    expires_at bigint NOT NULL
  );

  -- Every compaction pass, committed or not, content-free, with the session's running totals.
  CREATE TABLE compaction_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    kind text NOT NULL,
    reason text NOT NULL,
    outcome text NOT NULL,
    before_tokens bigint NOT NULL,
    after_tokens bigint NOT NULL,
    messages_removed integer NOT NULL,
    created_at bigint NOT NULL,
    detail text,
    threshold_tokens bigint,
    window_tokens bigint,
    occupancy double precision,
    duration_ms bigint,
    absorbed_messages integer,
    absorbed_tokens bigint,
    summary_tokens bigint,
    total_passes integer NOT NULL,
    total_committed integer NOT NULL,
    total_hard integer NOT NULL,
    total_saved_tokens bigint NOT NULL
  );
  CREATE INDEX compaction_log_session ON compaction_log (session_id, id);

  CREATE TABLE schedule_runs (
    job text COLLATE "C" NOT NULL,
    slot bigint NOT NULL,
    status text NOT NULL,
    holder_host text,
    holder_pid integer,
    holder_started text,
    holder_nonce text,
    claimed_at bigint NOT NULL,
    lease_expires_at bigint,
    finished_at bigint,
    session_id text COLLATE "C",
    note text,
    PRIMARY KEY (job, slot)
  );
  CREATE INDEX schedule_runs_active ON schedule_runs (job, slot) WHERE status IN ('running', 'rerunning');
  CREATE INDEX schedule_runs_session ON schedule_runs (session_id) WHERE session_id IS NOT NULL;

  CREATE TABLE plugin_state (
    plugin text COLLATE "C" NOT NULL,
    key text COLLATE "C" NOT NULL,
    value text NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (plugin, key)
  );
  `,
  // 2: cached prompt tokens the provider reported, summed per session like prompt_tokens.
  `ALTER TABLE sessions ADD COLUMN cached_tokens bigint NOT NULL DEFAULT 0;`,
  // 3: a durable record of each step a run sends, so that a resume after any number of kills sends a
  // step at most once. `message_seq` is the user row that sent it, stored in the same transaction.
  `
  CREATE TABLE session_steps (
    session_id text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    step integer NOT NULL,
    input text NOT NULL,
    attempt integer NOT NULL,
    message_seq bigint,
    status text NOT NULL,
    started_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (session_id, step)
  );
  `,
  // 4: a session's ownership needs progress, not only a live pid: the owner renews this expiry while it is
  // healthy, and another process may claim the session once it has passed (a wedged owner).
  `ALTER TABLE sessions ADD COLUMN owner_expires_at bigint;`,
  // 5: the usage a run reports beyond prompt and completion (cache writes, reasoning), and its cost: summed
  // per session, plus one row per priced call with its job and time so a daemon can cap a job's daily spend
  // (kept when a session is deleted: money spent stays spent).
  `
  ALTER TABLE sessions ADD COLUMN cache_write_tokens bigint NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN reasoning_tokens bigint NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cost_usd double precision NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN unpriced_calls bigint NOT NULL DEFAULT 0;
  CREATE TABLE spend (
    id bigserial PRIMARY KEY,
    job text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    at bigint NOT NULL,
    cost_usd double precision NOT NULL
  );
  CREATE INDEX spend_job_at ON spend (job, at);
  `,
  // 6: provider-signed reasoning (Anthropic thinking blocks, JSON) stored with its assistant message: it is
  // sent back verbatim in later requests.
  `ALTER TABLE messages ADD COLUMN reasoning text;`,
  // 7: the run queue: runs submitted to be worked by any worker (a job snapshot, scheduling, the claim of
  // the worker that runs it, its result), their events for `runs events`, and rate-limit holds per model.
  `
  CREATE TABLE runs (
    id text COLLATE "C" PRIMARY KEY,
    job text NOT NULL,
    job_path text,
    job_snapshot text NOT NULL,
    inputs text NOT NULL DEFAULT '{}',
    key text UNIQUE,
    priority integer NOT NULL DEFAULT 0,
    not_before bigint,
    status text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    on_crash text NOT NULL DEFAULT 'skip',
    group_key text,
    group_limit integer,
    model text,
    labels text NOT NULL DEFAULT '{}',
    holder_host text,
    holder_pid integer,
    holder_started text,
    holder_nonce text,
    lease_expires_at bigint,
    cancel_requested boolean NOT NULL DEFAULT false,
    session_id text,
    result text,
    exit_code integer,
    note text,
    submitted_at bigint NOT NULL,
    started_at bigint,
    finished_at bigint
  );
  CREATE INDEX runs_queued ON runs (priority DESC, submitted_at, id) WHERE status = 'queued';
  CREATE INDEX runs_running ON runs (group_key) WHERE status = 'running';
  CREATE INDEX runs_submitted ON runs (submitted_at);
  CREATE TABLE run_events (
    run_id text COLLATE "C" NOT NULL,
    seq integer NOT NULL,
    event text NOT NULL,
    PRIMARY KEY (run_id, seq)
  );
  CREATE TABLE model_holds (model text PRIMARY KEY, until bigint NOT NULL);
  `,
  // 8: a session's labels, and one row per model call (usage and cost, written right after the call's
  // response, so a run that fails, is cancelled or killed later still counts it) with the job and labels of
  // the session it is attributed to, indexed by time for `hermes cost`. Kept when a session is deleted, like
  // the per-call spend rows it replaces (copied over: priced calls without their tokens).
  `
  ALTER TABLE sessions ADD COLUMN labels text NOT NULL DEFAULT '{}';
  CREATE TABLE model_calls (
    id bigserial PRIMARY KEY,
    session_id text COLLATE "C" NOT NULL,
    caller_id text COLLATE "C" NOT NULL,
    job text COLLATE "C" NOT NULL,
    labels jsonb NOT NULL DEFAULT '{}',
    at bigint NOT NULL,
    provider text,
    model text COLLATE "C",
    prompt_tokens bigint NOT NULL DEFAULT 0,
    cached_tokens bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    reasoning_tokens bigint NOT NULL DEFAULT 0,
    cost_usd double precision
  );
  CREATE INDEX model_calls_at ON model_calls (at);
  CREATE INDEX model_calls_job_at ON model_calls (job, at);
  INSERT INTO model_calls (session_id, caller_id, job, at, cost_usd)
    SELECT session_id, session_id, job, at, cost_usd FROM spend ORDER BY id;
  DROP TABLE spend;
  `,
  // 9: one writer per working tree (docs/workspaces.md): the session holding a tree's real path, as a lease.
  `
  CREATE TABLE workspace_locks (
    path text COLLATE "C" PRIMARY KEY,
    session_id text COLLATE "C" NOT NULL,
    holder_host text NOT NULL,
    holder_pid integer NOT NULL,
    holder_started text NOT NULL,
    holder_nonce text NOT NULL,
    acquired_at bigint NOT NULL,
    expires_at bigint NOT NULL
  );
  `,
  // 10: completion notifications of queued runs, one row per delivery (its id is sent with every attempt).
  `
  CREATE TABLE run_deliveries (
    id text COLLATE "C" PRIMARY KEY,
    run_id text COLLATE "C" NOT NULL,
    target text NOT NULL,
    event text NOT NULL,
    status text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    response_status integer,
    error text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );
  CREATE INDEX run_deliveries_run ON run_deliveries (run_id, created_at);
  `,
  // 11: API tokens for `hermes serve`: the id is public (a prefix of the token), the secret is kept only as
  // its SHA-256 hash. A revoked or expired row stays for `tokens list`.
  `
  CREATE TABLE api_tokens (
    id text COLLATE "C" PRIMARY KEY,
    name text,
    hash text NOT NULL,
    scopes text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint,
    revoked_at bigint
  );
  `,
  // 12: what started a queued run (cli, schedule, webhook, api), and the runs that ended without a worker (a
  // queued run cancelled) whose notifications a worker still owes.
  `
  ALTER TABLE runs ADD COLUMN triggered_by text NOT NULL DEFAULT 'cli';
  ALTER TABLE runs ADD COLUMN notify_pending boolean NOT NULL DEFAULT false;
  CREATE INDEX runs_notify_pending ON runs (id) WHERE notify_pending;
  `,
  // 13: tool calls parked for a decision over the API (approval: {api: true}); a run with a pending one
  // shows waiting_approval. Decided once: the row is updated only while pending.
  `
  CREATE TABLE approvals (
    id text COLLATE "C" PRIMARY KEY,
    run_id text COLLATE "C",
    session_id text COLLATE "C" NOT NULL,
    job text NOT NULL,
    tool text NOT NULL,
    tool_call_id text NOT NULL,
    server text,
    arguments text NOT NULL,
    subject text,
    reason text NOT NULL,
    rule text NOT NULL,
    status text NOT NULL DEFAULT 'pending',
    decision_reason text,
    decided_by text,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    decided_at bigint
  );
  CREATE INDEX approvals_status ON approvals (status, created_at);
  CREATE INDEX approvals_run ON approvals (run_id, status);
  `,
  // 14: a run only one worker may claim (a daemon's cron slot, run by the daemon holding the slot's claim).
  `ALTER TABLE runs ADD COLUMN pinned_to text;`,
  // 15: secrets the servers sharing this store hold in common (the console's cookie signing key), made once.
  `
  CREATE TABLE server_secrets (
    name text COLLATE "C" PRIMARY KEY,
    value text NOT NULL,
    created_at bigint NOT NULL
  );
  `,
];
