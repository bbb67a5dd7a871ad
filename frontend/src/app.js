// Entry point of the browser bundle. Pages get their data from data-* attributes or
// <script type="application/json"> blocks; nothing here is inline, so the CSP can forbid inline script.
import { typeset } from "./math.js";
import "./theme.js";
import "./plain-text.js";
import "./labeling.js";
import "./adjudication.js";
import "./grading.js";
import "./jobs.js";
import "./imports.js";
import "./guidelines.js";
import "./items.js";
import "./copy-link.js";

export { typeset };

// Code that replaces part of a page dispatches this event on the new fragment to have its math typeset.
export const FRAGMENT_SWAPPED_EVENT = "mathlabel:swapped";

export function readJsonBlock(id) {
  const element = document.getElementById(id);
  return element ? JSON.parse(element.textContent) : null;
}

function start() {
  typeset(document.body);
  document.documentElement.dataset.mathReady = "1";
}

document.addEventListener(FRAGMENT_SWAPPED_EVENT, (event) => {
  typeset(event.target instanceof Element ? event.target : document.body);
});

window.mathlabel = Object.freeze({ typeset, readJsonBlock, FRAGMENT_SWAPPED_EVENT });

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
