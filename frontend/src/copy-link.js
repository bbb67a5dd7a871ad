// "Copy link" buttons: <button data-copy-link="ID"> copies the value of the input #ID and says so in the
// element marked data-copy-status-for="ID" (a live region, so screen readers hear it). The buttons are rendered
// hidden and shown here, since without JavaScript they could do nothing.
const STATUS_SHOWN_MS = 2500;

const clearTimers = new WeakMap();

function announce(status, text) {
  if (!status) return;
  clearTimeout(clearTimers.get(status));
  status.textContent = text;
  clearTimers.set(
    status,
    setTimeout(() => {
      status.textContent = "";
    }, STATUS_SHOWN_MS),
  );
}

async function copyLink(button) {
  const id = button.dataset.copyLink;
  const input = document.getElementById(id);
  if (!(input instanceof HTMLInputElement)) return;
  const status = document.querySelector(`[data-copy-status-for="${CSS.escape(id)}"]`);
  try {
    // Only secure pages (https, localhost) have the clipboard API; it may also be refused by permission.
    if (!navigator.clipboard?.writeText) throw new Error("no clipboard API");
    await navigator.clipboard.writeText(input.value);
    announce(status, "Copied");
  } catch {
    input.focus();
    input.select();
    announce(status, "The link is selected: press Ctrl+C (⌘C on a Mac) to copy it.");
  }
}

function start() {
  for (const button of document.querySelectorAll("button[data-copy-link]")) {
    button.hidden = false;
    button.addEventListener("click", () => copyLink(button));
  }
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
