// The guidelines panel of the work pages: acknowledging a version sends the same POST the form sends without
// JavaScript, then folds the panel away in place instead of reloading the page.
export function initGuidelines(panel) {
  const form = panel.querySelector("[data-guidelines-ack]");
  const details = panel.querySelector("[data-guidelines-details]");
  if (!form || !details) return;

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
