/** The Hermes version, shared by `--version`, JSON-RPC `initialize` and ACP. */
export const VERSION = "0.1.0";
