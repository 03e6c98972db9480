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
// element's HTML again, merged into the page node by node so that what the reader has stays theirs: an element
// the server renders again is kept (the same node, so a <details> they opened stays open, and the focus and the
// place on the page stay with it), new transcript items are inserted, and nothing is moved that did not move.
// Only when the stream cannot be opened does the page poll its data-fallback fragment every data-poll-ms.
//
// Elements are matched by their key (data-key, else id; unique in the part) wherever they were in it, so a
// part that comes, goes or changes size before them (the timing chart replacing its sentence, a tool call's
// result arriving before its subagent's transcript, a compaction folding messages) cannot make the merge pair
// them with another element. Unkeyed nodes match in order among the unkeyed of the same name.
function keyOf(node) {
  return node.nodeType === Node.ELEMENT_NODE ? node.getAttribute("data-key") || node.id || "" : "";
}

/** The keyed elements of `root`, by key: the old nodes fresh keyed nodes may claim (each once). */
function keyedIn(root) {
  const pool = new Map();
  for (const element of root.querySelectorAll("[data-key], [id]")) {
    const key = keyOf(element);
    if (!pool.has(key)) pool.set(key, element);
  }
  return pool;
}

/** The old element keyed as `fresh` is, if it can stand for it under the old element `parent`; taken from the pool. */
function claim(fresh, pool, parent) {
  const key = keyOf(fresh);
  const old = key ? pool.get(key) : undefined;
  // An element cannot move into itself (keys nested the other way round than before): it is made again.
  if (!old || old.nodeName !== fresh.nodeName || old.contains(parent)) return undefined;
  pool.delete(key);
  return old;
}

/**
 * Puts into `fresh` (a new node, going under the old element `parent`) the old elements its keyed descendants
 * stand for, merged.
 */
function adopt(fresh, pool, parent) {
  for (const child of [...fresh.childNodes]) {
    const old = claim(child, pool, parent);
    if (old) fresh.replaceChild(merge(old, child, pool), child);
    else if (child.nodeType === Node.ELEMENT_NODE) adopt(child, pool, parent);
  }
}

/** Merges `fresh` into `old`; returns the node that now stands for it (`fresh` when `old` could not be kept). */
function merge(old, fresh, pool) {
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
  const olds = [...old.childNodes];
  const unkeyed = new Map();
  for (const node of olds) {
    if (keyOf(node)) continue;
    const same = unkeyed.get(node.nodeName) ?? [];
    same.push(node);
    unkeyed.set(node.nodeName, same);
  }
  const wanted = [...fresh.childNodes].map((node) => {
    const match = keyOf(node) ? claim(node, pool, old) : unkeyed.get(node.nodeName)?.shift();
    const kept = match ? merge(match, node, pool) : node;
    if (kept !== match && kept.nodeType === Node.ELEMENT_NODE) adopt(kept, pool, old);
    return kept;
  });
  // What is no longer wanted goes first, so that what stays is not moved (a moved node loses the focus and
  // the scroll anchor); then new nodes go in at their places.
  const keep = new Set(wanted);
  for (const node of olds) if (!keep.has(node) && node.parentNode === old) node.remove();
  let cursor = old.firstChild;
  for (const node of wanted) {
    if (node === cursor) cursor = cursor.nextSibling;
    else old.insertBefore(node, cursor);
  }
  while (cursor) {
    const next = cursor.nextSibling;
    cursor.remove();
    cursor = next;
  }
  return old;
}

/**
 * What the reader looks at in `part`: the focus if it is on screen, else the first keyed element on screen.
 * None at the top of the page: there the reader sees what arrives at the top (a new run on the list).
 */
function anchorIn(part) {
  if (scrollY === 0) return undefined;
  const topOf = (element) =>
    element.getClientRects().length > 0 ? element.getBoundingClientRect().top : undefined;
  const focused = document.activeElement;
  if (focused && focused !== document.body && part.contains(focused)) {
    const top = topOf(focused);
    if (top !== undefined && top >= 0 && top < innerHeight) return { element: focused, top };
  }
  for (const element of part.querySelectorAll("[data-key]")) {
    const top = topOf(element);
    if (top !== undefined && top >= 0) return top < innerHeight ? { element, top } : undefined;
  }
  return undefined;
}

function mergeHtml(element, html) {
  // Parsed as a template: nothing in it runs (and the server escaped every stored text).
  const template = document.createElement("template");
  template.innerHTML = html.trim();
  const fresh = template.content.firstElementChild;
  if (!fresh) return;
  const focused = document.activeElement;
  const anchor = anchorIn(element);
  if (merge(element, fresh, keyedIn(element)) !== element) element.replaceWith(fresh);
  // The merge leaves in place what it keeps; should the focused element have moved all the same, it gets the
  // focus back, and what the reader looked at stays where it was on the screen when parts above it grew or
  // shrank (the browser's own scroll anchoring does so where it can; then nothing is left to correct here).
  if (focused?.isConnected && document.activeElement !== focused) focused.focus({ preventScroll: true });
  if (anchor?.element.isConnected) {
    const moved = anchor.element.getBoundingClientRect().top - anchor.top;
    if (moved !== 0) scrollBy(0, moved);
  }
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
