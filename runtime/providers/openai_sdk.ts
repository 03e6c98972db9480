/**
 * The openai SDK (npm:openai, pinned in deno.json) for the providers: its ES modules bundled into one file
 * (_generated/openai.js, made by scripts/npm_modules.ts), typed by the package. Import the SDK from here,
 * not from "openai": that loads some 115 modules one by one before the first model request.
 */
// @ts-types="openai"
export * from "./_generated/openai.js";
// @ts-types="openai"
export { default } from "./_generated/openai.js";
