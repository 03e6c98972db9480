/** The recurring slash commands and what they say about themselves, known before their modules load. */
export const RECURRING_COMMANDS = {
  loop:
    "Repeat a prompt: /loop [every] [INTERVAL] PROMPT [--times N] [--until CONDITION] | status|pause|resume|stop",
  heartbeat: "Wake an idle session on a timer: /heartbeat every INTERVAL PROMPT | status|pause|resume|clear",
} as const;

export type RecurringCommandName = keyof typeof RECURRING_COMMANDS;
