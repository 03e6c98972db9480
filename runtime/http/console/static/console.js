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
