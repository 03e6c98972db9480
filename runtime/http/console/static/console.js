// The console's own script (served from /assets/, never inline): keyboard shortcuts. Everything works
// without it; htmx adds the live parts.
"use strict";
document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  if (
    target instanceof HTMLElement &&
    (target.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName))
  ) {
    return;
  }
  if (event.key === "/") {
    // "/" focuses the first filter of the page.
    const filter = document.querySelector("form.filters input, form.filters select");
    if (filter instanceof HTMLElement) {
      event.preventDefault();
      filter.focus();
    }
  }
});

// Live parts: an element with data-live opens that Server-Sent Events stream; each `html` event is the
// element's HTML again, merged into the page node by node so that what the reader opened (a <details>) stays
// open and new transcript items are appended. Only when the stream cannot be opened does the page poll its
// data-fallback fragment every data-poll-ms.
function keyOf(node) {
  return node.nodeType === Node.ELEMENT_NODE ? node.getAttribute("data-key") || node.id || "" : "";
}

/** Merges `fresh` into `old`; returns the node that now stands for it (`fresh` when `old` could not be kept). */
function merge(old, fresh) {
  if (old.nodeType !== fresh.nodeType || old.nodeName !== fresh.nodeName) return fresh;
  if (old.nodeType === Node.TEXT_NODE || old.nodeType === Node.COMMENT_NODE) {
    if (old.data !== fresh.data) old.data = fresh.data;
    return old;
  }
  if (old.nodeType !== Node.ELEMENT_NODE) return fresh;
  for (const attribute of [...old.attributes]) {
    // The reader's own state: whether a <details> is open.
    if (old.nodeName === "DETAILS" && attribute.name === "open") continue;
    if (!fresh.hasAttribute(attribute.name)) old.removeAttribute(attribute.name);
  }
  for (const attribute of [...fresh.attributes]) {
    if (old.nodeName === "DETAILS" && attribute.name === "open") continue;
    if (old.getAttribute(attribute.name) !== attribute.value) {
      old.setAttribute(attribute.name, attribute.value);
    }
  }
  // Children with a key (data-key or id) match by it, the others by their order among the unkeyed: a part
  // that comes or goes (the cancel form) does not shift what follows it.
  const olds = [...old.childNodes];
  const keyed = new Map(olds.filter(keyOf).map((node) => [keyOf(node), node]));
  const unkeyed = olds.filter((node) => !keyOf(node));
  let next = 0;
  const wanted = [...fresh.childNodes].map((node) => {
    const key = keyOf(node);
    const match = key ? keyed.get(key) : unkeyed[next++];
    return match ? merge(match, node) : node;
  });
  wanted.forEach((node, i) => {
    if (old.childNodes[i] !== node) old.insertBefore(node, old.childNodes[i] ?? null);
  });
  while (old.childNodes.length > wanted.length) old.lastChild.remove();
  return old;
}

function mergeHtml(element, html) {
  // Parsed as a template: nothing in it runs (and the server escaped every stored text).
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  const fresh = template.content.firstElementChild;
  if (fresh && merge(element, fresh) !== element) element.replaceWith(fresh);
}

function poll(element) {
  const url = element.dataset.fallback;
  const ms = Number(element.dataset.pollMs) || 2000;
  if (!url) return;
  const look = async () => {
    const response = await fetch(url, { headers: { "hx-request": "true" }, credentials: "same-origin" });
    const redirect = response.headers.get("hx-redirect");
    if (redirect) {
      location.assign(redirect);
      return;
    }
    if (!response.ok) return;
    const html = await response.text();
    mergeHtml(element, html);
    // A part that stopped being live (its run ended) is not looked at again.
    if (element.dataset.fallback) setTimeout(() => look().catch(() => setTimeout(look, ms)), ms);
  };
  setTimeout(() => look().catch(() => setTimeout(look, ms)), ms);
}

function stream(element) {
  let source;
  let ended = false;
  const open = () => {
    let opened = false;
    source = new EventSource(element.dataset.live);
    source.addEventListener("open", () => {
      opened = true;
    });
    source.addEventListener("html", (event) => mergeHtml(element, event.data));
    source.addEventListener("end", () => {
      ended = true;
      source.close();
    });
    source.addEventListener("signout", (event) => {
      source.close();
      location.assign(event.data);
    });
    source.addEventListener("error", () => {
      // A stream that never opened (refused: too many streams, signed out, a proxy that buffers) falls back
      // to polling; one that dropped after it opened is reopened by the browser itself.
      if (!opened || source.readyState === EventSource.CLOSED) {
        ended = true;
        source.close();
        poll(element);
      }
    });
  };
  // A hidden tab gives its connection back (a browser holds only 6 HTTP/1.1 connections to one server, for
  // all its tabs); shown again, it reopens the stream, whose first event is the part as it is now.
  document.addEventListener("visibilitychange", () => {
    if (ended) return;
    if (document.hidden) source.close();
    else if (source.readyState === EventSource.CLOSED) open();
  });
  open();
}

for (const element of document.querySelectorAll("[data-live]")) stream(element);
