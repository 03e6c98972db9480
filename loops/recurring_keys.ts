/**
 * The session_kv keys of a session's `/loop` and `/heartbeat` states, in a module of their own: a session
 * checks whether recurring work is active (recurring_active.ts) at each start, without loading the states'
 * modules, which only a session with a loop or heartbeat needs.
 */
export const LOOP_KEY = "loop";
export const HEARTBEAT_KEY = "heartbeat";
