// The guidelines panel of the work pages. It opens by itself while the reader has not acknowledged the current
// version (the server decides); otherwise it is as the reader left it, remembered in localStorage. `g` (outside
// a text field) or the Guidelines button shows or hides it. Acknowledging a version sends the same POST the form
// sends without JavaScript, then folds the panel away in place instead of reloading the page.
const TEXT_FIELDS = "input:not([type=button]):not([type=submit]):not([type=radio]):not([type=checkbox]), textarea, select, [contenteditable='true']";

function storageKey(panel) {
  return `mathlabel.guidelines:${panel.dataset.guidelinesKey || location.pathname}`;
}

function remember(panel, open) {
  try {
    localStorage.setItem(storageKey(panel), open ? "open" : "closed");
  } catch {
    // storage off: the panel simply starts as the server renders it
  }
}

function remembered(panel) {
  try {
    return localStorage.getItem(storageKey(panel));
  } catch {
    return null;
  }
}

function syncButtons(details) {
  for (const button of document.querySelectorAll("[data-action=guidelines]")) {
    button.setAttribute("aria-expanded", String(details.open));
  }
  document.documentElement.toggleAttribute("data-guidelines-open", details.open);
}

export function initGuidelines(panel) {
  const form = panel.querySelector("[data-guidelines-ack]");
  const details = panel.querySelector("[data-guidelines-details]");
  if (!details) return;
  if (panel.dataset.guidelinesUnseen !== "1") {
    const stored = remembered(panel);
    if (stored) details.open = stored === "open";
  }
  syncButtons(details);
  details.addEventListener("toggle", () => {
    syncButtons(details);
    if (panel.dataset.guidelinesUnseen !== "1") remember(panel, details.open);
  });
  const toggle = () => {
    details.open = !details.open;
    if (details.open) details.querySelector("summary")?.focus({ preventScroll: false });
  };
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (event.key !== "g" && event.key !== "G") return;
    if (event.target instanceof Element && event.target.matches(TEXT_FIELDS)) return;
    if (document.querySelector("dialog[open]")) return;
    event.preventDefault();
    toggle();
  });
  document.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest("[data-action=guidelines]")) toggle();
  });
  if (!form) return;

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    if (button) button.disabled = true;
    try {
      const response = await fetch(form.action, {
        method: "POST",
        credentials: "same-origin",
        headers: { Accept: "application/json" },
        body: new FormData(form),
      });
      if (!response.ok) throw new Error(String(response.status));
      const data = await response.json();
      panel.dataset.guidelinesSeen = String(data.seen_version);
      panel.dataset.guidelinesUnseen = "0";
      remember(panel, false);
      panel.querySelector("[data-guidelines-new]")?.remove();
      form.remove();
      details.open = false;
      details.querySelector("summary")?.focus();
    } catch {
      form.submit(); // the server redirects back here
    }
  });
}

function start() {
  for (const panel of document.querySelectorAll("[data-guidelines-panel]")) initGuidelines(panel);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
