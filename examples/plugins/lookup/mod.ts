/**
 * The lookup plugin: a tool the model can call, running inside the plugin's sandbox. Its only network
 * access is what the job grants (one host:port), so it cannot reach anything but its service.
 */
interface Context {
  config: { url: string };
  registerTool(name: string, definition: {
    description: string;
    parameters: Record<string, unknown>;
    handler(args: { term: string }): Promise<string>;
  }): void;
}

export function register(ctx: Context): void {
  ctx.registerTool("lookup", {
    description: "Look up a term in the project glossary and return its definition",
    parameters: {
      type: "object",
      required: ["term"],
      additionalProperties: false,
      properties: { term: { type: "string", description: "The term to define", minLength: 1 } },
    },
    handler: async ({ term }) => {
      const response = await fetch(new URL(encodeURIComponent(term), ctx.config.url));
      const text = await response.text();
      if (!response.ok) {
        throw new Error(`the glossary answered HTTP ${response.status}: ${text.slice(0, 200)}`);
      }
      return text;
    },
  });
}
