/**
 * Store schema, one entry per version. Append only: a released migration is never edited.
 * Times are epoch milliseconds.
 */
export const migrations: readonly string[] = [
  // 1: everything the store contract needs.
  `
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    job TEXT NOT NULL,
    job_path TEXT,
    status TEXT NOT NULL,
    terminal_reason TEXT,
    parent_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    ended_at INTEGER,
    archived_at INTEGER,
    config_json TEXT NOT NULL DEFAULT '{}',
    model TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    turns INTEGER NOT NULL DEFAULT 0,
    owner_host TEXT,
    owner_pid INTEGER,
    owner_started TEXT
  );
  CREATE INDEX sessions_created ON sessions(created_at);
  CREATE INDEX sessions_job ON sessions(job, created_at);

  CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    pos REAL NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    tool_calls TEXT,
    tool_call_id TEXT,
    name TEXT,
    kind TEXT NOT NULL DEFAULT 'message',
    active INTEGER NOT NULL DEFAULT 1,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    created_at INTEGER NOT NULL,
    compaction_id INTEGER,
    UNIQUE (session_id, seq)
  );
  -- Full-text search is indexed lazily (Store.syncSearchIndex) so appends stay cheap: an FTS5 insert per
  -- transaction costs more than the append itself. meta.fts_upto is the highest message id indexed.
  CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
  INSERT INTO meta (key, value) VALUES ('fts_upto', 0);
  CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages', content_rowid='id');
  CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
  WHEN old.id <= (SELECT value FROM meta WHERE key = 'fts_upto') BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
  END;
  CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages
  WHEN old.id <= (SELECT value FROM meta WHERE key = 'fts_upto') BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
  END;

  CREATE TABLE session_kv (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, key)
  );

  CREATE TABLE compaction_leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    holder_host TEXT NOT NULL,
    holder_pid INTEGER NOT NULL,
    holder_started TEXT NOT NULL,
    holder_nonce TEXT NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );

  CREATE TABLE compaction_log (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    reason TEXT NOT NULL,
    before_tokens INTEGER NOT NULL,
    after_tokens INTEGER NOT NULL,
    messages_removed INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    detail TEXT
  );
  CREATE INDEX compaction_log_session ON compaction_log(session_id);

  CREATE TABLE schedule_runs (
    job TEXT NOT NULL,
    slot INTEGER NOT NULL,
    status TEXT NOT NULL,
    holder_host TEXT,
    holder_pid INTEGER,
    holder_started TEXT,
    holder_nonce TEXT,
    claimed_at INTEGER NOT NULL,
    lease_expires_at INTEGER,
    finished_at INTEGER,
    session_id TEXT,
    note TEXT,
    PRIMARY KEY (job, slot)
  );

  CREATE TABLE plugin_state (
    plugin TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (plugin, key)
  );
  `,
  // 2: live schedule claims (`running`/`rerunning` rows) are found without scanning the run history.
  `CREATE INDEX schedule_runs_active ON schedule_runs(job, slot) WHERE status IN ('running', 'rerunning');`,
  // 3: the active transcript is read without visiting the stored history (a session may keep 50 000 rows of
  // which 40 are active): in prompt order, and the two rows the compaction estimate starts from.
  `
  CREATE INDEX messages_active ON messages(session_id, pos, seq) WHERE active = 1;
  CREATE INDEX messages_readings ON messages(session_id, seq)
    WHERE active = 1 AND role = 'assistant' AND prompt_tokens IS NOT NULL;
  CREATE INDEX messages_compaction_rows ON messages(session_id, seq) WHERE active = 1 AND kind <> 'message';
  `,
  // 4: compaction telemetry: every pass is logged, committed or not, content-free, with what it
  // measured and the session's running totals. Rows from before this version were all committed passes.
  `
  ALTER TABLE compaction_log ADD COLUMN outcome TEXT NOT NULL DEFAULT 'committed';
  ALTER TABLE compaction_log ADD COLUMN threshold_tokens INTEGER;
  ALTER TABLE compaction_log ADD COLUMN window_tokens INTEGER;
  ALTER TABLE compaction_log ADD COLUMN occupancy REAL;
  ALTER TABLE compaction_log ADD COLUMN duration_ms INTEGER;
  ALTER TABLE compaction_log ADD COLUMN absorbed_messages INTEGER;
  ALTER TABLE compaction_log ADD COLUMN absorbed_tokens INTEGER;
  ALTER TABLE compaction_log ADD COLUMN summary_tokens INTEGER;
  ALTER TABLE compaction_log ADD COLUMN total_passes INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE compaction_log ADD COLUMN total_committed INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE compaction_log ADD COLUMN total_hard INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE compaction_log ADD COLUMN total_saved_tokens INTEGER NOT NULL DEFAULT 0;
  UPDATE compaction_log SET
    total_passes = (SELECT count(*) FROM compaction_log c
      WHERE c.session_id = compaction_log.session_id AND c.id <= compaction_log.id),
    total_committed = (SELECT count(*) FROM compaction_log c
      WHERE c.session_id = compaction_log.session_id AND c.id <= compaction_log.id),
    total_hard = (SELECT count(*) FROM compaction_log c
      WHERE c.session_id = compaction_log.session_id AND c.id <= compaction_log.id AND c.kind = 'summarize'),
    total_saved_tokens = (SELECT coalesce(sum(c.before_tokens - c.after_tokens), 0) FROM compaction_log c
      WHERE c.session_id = compaction_log.session_id AND c.id <= compaction_log.id);
  DROP INDEX compaction_log_session;
  CREATE INDEX compaction_log_session ON compaction_log(session_id, id);
  `,
  // 5: cached prompt tokens the provider reported, summed per session like prompt_tokens.
  `ALTER TABLE sessions ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;`,
  // 6: a durable record of each step a run sends, so that a resume after any number of kills
  // sends a step at most once. `message_seq` is the user row that sent it, stored in the same transaction.
  `
  CREATE TABLE session_steps (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    step INTEGER NOT NULL,
    input TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    message_seq INTEGER,
    status TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, step)
  );
  `,
  // 7: a session's ownership needs progress, not only a live pid: the owner renews this expiry while it is
  // healthy, and another process may claim the session once it has passed (a wedged owner).
  `ALTER TABLE sessions ADD COLUMN owner_expires_at INTEGER;`,
  // 8: the usage a run reports beyond prompt and completion (cache writes, reasoning), and its cost: summed
  // per session, plus one row per priced call with its job and time so a daemon can cap a job's daily spend
  // (kept when a session is deleted: money spent stays spent).
  `
  ALTER TABLE sessions ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN unpriced_calls INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE spend (
    id INTEGER PRIMARY KEY,
    job TEXT NOT NULL,
    session_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    cost_usd REAL NOT NULL
  );
  CREATE INDEX spend_job_at ON spend(job, at);
  `,
  // 9: provider-signed reasoning (Anthropic thinking blocks, JSON) stored with its assistant message: it is
  // sent back verbatim in later requests.
  `ALTER TABLE messages ADD COLUMN reasoning TEXT;`,
  // 10: the run queue: runs submitted to be worked by any worker (a job snapshot, scheduling, the claim of
  // the worker that runs it, its result), their events for `runs events`, and rate-limit holds per model.
  `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    job TEXT NOT NULL,
    job_path TEXT,
    job_snapshot TEXT NOT NULL,
    inputs TEXT NOT NULL DEFAULT '{}',
    key TEXT UNIQUE,
    priority INTEGER NOT NULL DEFAULT 0,
    not_before INTEGER,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    on_crash TEXT NOT NULL DEFAULT 'skip',
    group_key TEXT,
    group_limit INTEGER,
    model TEXT,
    labels TEXT NOT NULL DEFAULT '{}',
    holder_host TEXT,
    holder_pid INTEGER,
    holder_started TEXT,
    holder_nonce TEXT,
    lease_expires_at INTEGER,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    session_id TEXT,
    result TEXT,
    exit_code INTEGER,
    note TEXT,
    submitted_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER
  );
  CREATE INDEX runs_queued ON runs(priority DESC, submitted_at, id) WHERE status = 'queued';
  CREATE INDEX runs_running ON runs(group_key) WHERE status = 'running';
  CREATE INDEX runs_submitted ON runs(submitted_at);
  CREATE TABLE run_events (
    run_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
  );
  CREATE TABLE model_holds (model TEXT PRIMARY KEY, until INTEGER NOT NULL);
  `,
  // 11: a session's labels, and one row per model call (usage and cost, written right after the call's
  // response, so a run that fails, is cancelled or killed later still counts it) with the job and labels of
  // the session it is attributed to, indexed by time for `hermes cost`. Kept when a session is deleted, like
  // the per-call spend rows it replaces (copied over: priced calls without their tokens).
  `
  ALTER TABLE sessions ADD COLUMN labels TEXT NOT NULL DEFAULT '{}';
  CREATE TABLE model_calls (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    caller_id TEXT NOT NULL,
    job TEXT NOT NULL,
    labels TEXT NOT NULL DEFAULT '{}',
    at INTEGER NOT NULL,
    provider TEXT,
    model TEXT,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL
  );
  CREATE INDEX model_calls_at ON model_calls(at);
  CREATE INDEX model_calls_job_at ON model_calls(job, at);
  INSERT INTO model_calls (session_id, caller_id, job, at, cost_usd)
    SELECT session_id, session_id, job, at, cost_usd FROM spend ORDER BY id;
  DROP TABLE spend;
  `,
  // 12: one writer per working tree (docs/workspaces.md): the session holding a tree's real path, as a lease.
  `
  CREATE TABLE workspace_locks (
    path TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    holder_host TEXT NOT NULL,
    holder_pid INTEGER NOT NULL,
    holder_started TEXT NOT NULL,
    holder_nonce TEXT NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  // 13: completion notifications of queued runs, one row per delivery (its id is sent with every attempt).
  `
  CREATE TABLE run_deliveries (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    target TEXT NOT NULL,
    event TEXT NOT NULL,
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    response_status INTEGER,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX run_deliveries_run ON run_deliveries(run_id, created_at);
  `,
  // 14: API tokens for `hermes serve`: the id is public (a prefix of the token), the secret is kept only as
  // its SHA-256 hash. A revoked or expired row stays for `tokens list`.
  `
  CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    name TEXT,
    hash TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER
  );
  `,
  // 15: what started a queued run (cli, schedule, webhook, api), and the runs that ended without a worker (a
  // queued run cancelled) whose notifications a worker still owes.
  `
  ALTER TABLE runs ADD COLUMN triggered_by TEXT NOT NULL DEFAULT 'cli';
  ALTER TABLE runs ADD COLUMN notify_pending INTEGER NOT NULL DEFAULT 0;
  CREATE INDEX runs_notify_pending ON runs(id) WHERE notify_pending = 1;
  `,
  // 16: tool calls parked for a decision over the API (approval: {api: true}); a run with a pending one
  // shows waiting_approval. Decided once: the row is updated only while pending.
  `
  CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    run_id TEXT,
    session_id TEXT NOT NULL,
    job TEXT NOT NULL,
    tool TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    server TEXT,
    arguments TEXT NOT NULL,
    subject TEXT,
    reason TEXT NOT NULL,
    rule TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    decision_reason TEXT,
    decided_by TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decided_at INTEGER
  );
  CREATE INDEX approvals_status ON approvals(status, created_at);
  CREATE INDEX approvals_run ON approvals(run_id, status);
  `,
  // 17: a run only one worker may claim (a daemon's cron slot, run by the daemon holding the slot's claim).
  `ALTER TABLE runs ADD COLUMN pinned_to TEXT;`,
  // 18: secrets the servers sharing this store hold in common (the console's cookie signing key), made once.
  `
  CREATE TABLE server_secrets (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  `,
];
