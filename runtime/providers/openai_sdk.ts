/**
 * The openai SDK (npm:openai, pinned in deno.json) for the providers: its ES modules bundled into one file
 * (_openai.generated.js, made by scripts/npm_modules.ts), typed by the package. Import the SDK from here,
 * not from "openai": that loads some 115 modules one by one before the first model request.
 */
// @ts-types="openai"
export * from "./_openai.generated.js";
// @ts-types="openai"
export { default } from "./_openai.generated.js";
