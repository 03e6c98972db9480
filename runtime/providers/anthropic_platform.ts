/**
 * Claude on Amazon Bedrock and Google Vertex AI (`model.platform`), through Anthropic's own SDKs for them,
 * each imported only when a session uses it. Both clients take the Messages API's requests and rewrite them
 * for their cloud: Bedrock to `/model/{model}/invoke[-with-response-stream]`, signed with AWS SigV4 (or a
 * Bedrock API key as a bearer token); Vertex to `…/publishers/anthropic/models/{model}:[stream]rawPredict`
 * with a Google OAuth bearer token.
 *
 * Credentials come from the usual environment, as each cloud's own tools read it: AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN (else the AWS default chain: profile, SSO, instance role) or
 * AWS_BEARER_TOKEN_BEDROCK, and AWS_REGION / AWS_DEFAULT_REGION; for Vertex, CLOUD_ML_REGION,
 * ANTHROPIC_VERTEX_PROJECT_ID and Google Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS,
 * gcloud's, or the metadata server).
 */
import type Anthropic from "@anthropic-ai/sdk";
import { ValidationError } from "../core/errors.ts";
import { progressFetch } from "./anthropic_fetch.ts";

export type Platform = "bedrock" | "vertex";

export interface PlatformClientOptions {
  env: Readonly<Record<string, string>>;
  /** model.base_url: the platform's endpoint instead of the region's. */
  baseURL?: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** Checks what a platform needs from the environment before any request (a missing region is exit 2). */
export function checkPlatformEnv(platform: Platform, env: Readonly<Record<string, string>>): void {
  if (platform === "vertex") {
    if (!env.CLOUD_ML_REGION) {
      throw new ValidationError(
        "Cannot call Claude on Vertex AI: CLOUD_ML_REGION is not set (the region, e.g. us-east5, or global)",
      );
    }
    if (!env.ANTHROPIC_VERTEX_PROJECT_ID) {
      throw new ValidationError(
        "Cannot call Claude on Vertex AI: ANTHROPIC_VERTEX_PROJECT_ID is not set (the Google Cloud project)",
      );
    }
  }
}

export async function platformClient(platform: Platform, options: PlatformClientOptions): Promise<Anthropic> {
  const { env } = options;
  const common = {
    maxRetries: 0,
    logLevel: "off" as const,
    timeout: options.timeoutMs,
    fetch: progressFetch(options.fetch ?? globalThis.fetch),
  };
  if (platform === "bedrock") {
    const { AnthropicBedrock } = await import("@anthropic-ai/bedrock-sdk");
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION || "us-east-1";
    const keys = env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY
      ? {
        awsAccessKey: env.AWS_ACCESS_KEY_ID,
        awsSecretKey: env.AWS_SECRET_ACCESS_KEY,
        awsSessionToken: env.AWS_SESSION_TOKEN || null,
      }
      : {};
    // One options object for the SDK's overloads (keys given or not, a session token or not).
    type BedrockOptions = ConstructorParameters<typeof AnthropicBedrock>[0];
    return new AnthropicBedrock({
      ...common,
      awsRegion: region,
      // A Bedrock API key, when one is set, is sent as a bearer token instead of signing.
      apiKey: env.AWS_BEARER_TOKEN_BEDROCK || null,
      baseURL: options.baseURL ?? env.ANTHROPIC_BEDROCK_BASE_URL ??
        `https://bedrock-runtime.${region}.amazonaws.com`,
      ...keys,
    } as BedrockOptions) as unknown as Anthropic;
  }
  const { AnthropicVertex } = await import("@anthropic-ai/vertex-sdk");
  return new AnthropicVertex({
    ...common,
    region: env.CLOUD_ML_REGION!,
    projectId: env.ANTHROPIC_VERTEX_PROJECT_ID!,
    ...(options.baseURL ?? env.ANTHROPIC_VERTEX_BASE_URL
      ? { baseURL: options.baseURL ?? env.ANTHROPIC_VERTEX_BASE_URL }
      : {}),
  }) as unknown as Anthropic;
}
