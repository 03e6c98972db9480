/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The console's page frame: the stylesheet and scripts from /assets/ (never inline: the Content-Security-Policy
 * allows no inline script or style), the navigation bar, and the CSRF token htmx sends with each request.
 */
import type { Child } from "hono/jsx";
import { statusSymbol } from "./format.ts";

/** htmx without eval (hx-on, js: values) and without the style element it would add (both refused by the CSP). */
const HTMX_CONFIG = JSON.stringify({
  allowEval: false,
  allowScriptTags: false,
  includeIndicatorStyles: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
});

export interface LayoutProps {
  title: string;
  nav: readonly { label: string; href: string }[];
  /** The signed-in token's id and the session's CSRF token; absent on the sign-in page. */
  signedIn?: { tokenId: string; csrf: string };
  /** The path the page answers (its navigation entry is marked current). */
  path: string;
  version: string;
  children?: Child;
}

export function Layout(props: LayoutProps) {
  const { signedIn } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <title>{props.title} · Hermes</title>
        {/* No icon: a browser would otherwise ask for /favicon.ico on every page. */}
        <link rel="icon" href="data:," />
        {/* The version in the address: a browser's cached copy (an hour) is not used after an upgrade. */}
        <link rel="stylesheet" href={`/assets/console.css?v=${props.version}`} />
        <script src={`/assets/htmx.min.js?v=${props.version}`} defer></script>
        <script src={`/assets/console.js?v=${props.version}`} defer></script>
      </head>
      <body hx-headers={signedIn ? JSON.stringify({ "X-CSRF-Token": signedIn.csrf }) : undefined}>
        <a class="skip" href="#main">Skip to content</a>
        <header class="bar">
          <a class="brand" href="/">Hermes</a>
          {signedIn
            ? (
              <nav aria-label="Pages">
                <ul>
                  {props.nav.map((entry) => (
                    <li>
                      <a
                        href={entry.href}
                        aria-current={props.path === entry.href || props.path.startsWith(`${entry.href}/`)
                          ? "page"
                          : undefined}
                      >
                        {entry.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
            )
            : null}
          {signedIn
            ? (
              <form class="signout" method="post" action="/signout">
                <input type="hidden" name="_csrf" value={signedIn.csrf} />
                <span class="who">token {signedIn.tokenId}</span> <button type="submit">Sign out</button>
              </form>
            )
            : null}
        </header>
        <main id="main" tabindex={-1}>
          {props.children}
        </main>
        <footer class="foot">Hermes {props.version}</footer>
      </body>
    </html>
  );
}

/** A status as its word with a symbol (readable without colour; the class only adds colour). */
export function Status(props: { status: string }) {
  return (
    <span class={`status status-${props.status.replace(/[^a-z_]/g, "")}`}>
      <span aria-hidden="true">{statusSymbol(props.status)}</span> {props.status.replace(/_/g, " ")}
    </span>
  );
}
