// The keyboard-first labeling page. Labels go to the JSON API; the next task arrives as an HTML fragment
// rendered by the server (the browser never renders Markdown) and is swapped in without a page load.
import { typeset } from "./math.js";

const TEXT_FIELDS = "input:not([type=button]):not([type=submit]):not([type=radio]):not([type=checkbox]), textarea, select, [contenteditable='true']";
const CODE_LETTERS = new Set(["a", "b", "c", "d"]);

function isTextField(element) {
  return element instanceof Element && element.matches(TEXT_FIELDS);
}

function formatRemaining(milliseconds) {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, "0")} left`;
}

export function initLabeling(root) {
  const slot = root.querySelector("[data-task-slot]");
  const message = root.querySelector("[data-label-message]");
  const messageText = root.querySelector("[data-label-message-text]");
  const messageNext = root.querySelector("[data-label-message-next]");
  const help = root.querySelector("[data-label-help]");
  const isAnswerType = root.dataset.kind === "answer_type";
  const state = { startedAt: performance.now(), pendingLetter: "", selectedCode: "", busy: false, leaseTimer: 0 };

  const task = () => slot.querySelector("[data-task]");
  const taskId = () => task()?.dataset.taskId || "";
  const taskUrl = (template, id) => template.replace("/0/", `/${id}/`);

  async function post(url, body) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": root.dataset.csrfToken },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  async function detailOf(response) {
    try {
      const data = await response.json();
      if (typeof data.detail === "string") return data.detail;
      return Object.entries(data).map(([field, problems]) => `${field}: ${[].concat(problems).join(" ")}`).join("; ");
    } catch {
      return `the server answered ${response.status}`;
    }
  }

  function showMessage(text, { offerNext = false } = {}) {
    messageText.textContent = text;
    messageNext.hidden = !offerNext;
    message.hidden = false;
    if (offerNext) messageNext.focus();
  }

  function clearMessage() {
    message.hidden = true;
    messageText.textContent = "";
    messageNext.hidden = true;
  }

  function setBusy(busy) {
    state.busy = busy;
    root.toggleAttribute("aria-busy", busy);
    for (const button of slot.querySelectorAll("[data-label-form] button")) button.disabled = busy || (button.hasAttribute("data-submit-code") && !state.selectedCode);
  }

  function updateLease() {
    const lease = slot.querySelector("[data-lease]");
    const left = lease?.querySelector("[data-lease-left]");
    if (!lease || !left) return;
    const remaining = Date.parse(lease.dataset.leaseExpires) - Date.now();
    if (remaining > 0) {
      left.textContent = formatRemaining(remaining);
      lease.classList.toggle("lease-short", remaining < 2 * 60 * 1000);
    } else {
      left.textContent = "expired — your label is kept only if the item still has a free slot";
      lease.classList.add("lease-expired");
    }
  }

  function taskShown() {
    state.startedAt = performance.now();
    state.pendingLetter = "";
    state.selectedCode = "";
    clearInterval(state.leaseTimer);
    updateLease();
    state.leaseTimer = setInterval(updateLease, 1000);
    root.dataset.taskId = taskId();
    root.dataset.state = taskId() ? "task" : "done";
  }

  async function swapIn(url) {
    const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } });
    if (!response.ok) {
      showMessage(`Could not load the next item (the server answered ${response.status}). Reload the page to try again.`);
      return;
    }
    slot.innerHTML = await response.text();
    typeset(slot);
    taskShown();
    window.scrollTo(0, 0);
    (task() || slot.querySelector("[data-testid=all-done]"))?.focus({ preventScroll: true });
  }

  async function loadNext() {
    clearMessage();
    const response = await post(root.dataset.nextUrl);
    if (response.status === 204) {
      await swapIn(root.dataset.fragmentUrl);
    } else if (response.ok) {
      const payload = await response.json();
      await swapIn(`${root.dataset.fragmentUrl}?task=${encodeURIComponent(payload.task_id)}`);
    } else {
      showMessage(await detailOf(response));
    }
  }

  async function run(action) {
    if (state.busy) return;
    setBusy(true);
    try {
      await action();
    } catch (error) {
      showMessage(`The request failed (${error.message}); check your connection and try again.`);
    } finally {
      setBusy(false);
    }
  }

  function submit(body) {
    const id = taskId();
    if (!id) return;
    const note = slot.querySelector("[data-label-note]")?.value ?? "";
    const seconds = Math.round((performance.now() - state.startedAt) / 100) / 10;
    run(async () => {
      const response = await post(taskUrl(root.dataset.submitUrl, id), { note, seconds_spent: seconds, ...body });
      if (response.status === 200 || response.status === 201) {
        await loadNext();
      } else if (response.status === 409) {
        const detail = (await detailOf(response)).replace(/\.$/, "");
        const text = /not stored/.test(detail)
          ? detail.charAt(0).toUpperCase() + detail.slice(1)
          : `Your label was not stored: ${detail}`;
        showMessage(`${text}.`, { offerNext: true });
        root.dataset.state = "stale";
      } else {
        showMessage(await detailOf(response));
      }
    });
  }

  function skip() {
    const id = taskId();
    if (!id) return;
    run(async () => {
      const response = await post(taskUrl(root.dataset.skipUrl, id));
      if (response.ok || response.status === 409) await loadNext();
      else showMessage(await detailOf(response));
    });
  }

  function openUnsuitable() {
    const panel = slot.querySelector("[data-unsuitable-panel]");
    if (!panel) return;
    panel.hidden = false;
    slot.querySelector("[data-action=unsuitable]")?.setAttribute("aria-expanded", "true");
    panel.querySelector("[data-unsuitable-reason]").focus();
  }

  function submitUnsuitable() {
    const reason = slot.querySelector("[data-unsuitable-reason]");
    if (!reason.value.trim()) {
      showMessage("Say why the item is unsuitable before submitting it as unsuitable.");
      reason.focus();
      return;
    }
    submit({ unsuitable: true, unsuitable_reason: reason.value.trim() });
  }

  function selectCode(code) {
    const choice = slot.querySelector(`[data-code="${code}"]`);
    if (!choice) {
      showMessage(`${code} is not an answer type. Codes are A1–A8, B1–B5, C1–C3 and D1–D2.`);
      return;
    }
    clearMessage();
    state.selectedCode = code;
    for (const button of slot.querySelectorAll("[data-code]")) button.setAttribute("aria-pressed", String(button === choice));
    const submitButton = slot.querySelector("[data-submit-code]");
    submitButton.disabled = false;
    submitButton.querySelector("[data-selected-code]").textContent = code;
    const pending = slot.querySelector("[data-pending-code]");
    if (pending) pending.textContent = `Selected: ${code}`;
    submitButton.focus({ preventScroll: true });
  }

  function leaveField(field) {
    field.blur();
    task()?.focus({ preventScroll: true });
  }

  function toggleHelp() {
    if (help.open) help.close();
    else help.showModal();
  }

  function onKeyDown(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target;
    if (help.open) {
      if (event.key === "?") { event.preventDefault(); help.close(); }
      return;
    }
    if (isTextField(target)) {
      if (event.key === "Escape") {
        event.preventDefault();
        leaveField(target);
      } else if (event.key === "Enter" && target.matches("[data-unsuitable-reason]")) {
        event.preventDefault();
        submitUnsuitable();
      }
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key === "?") { event.preventDefault(); toggleHelp(); return; }
    if (!taskId() || state.busy) return;

    if (isAnswerType) {
      if (CODE_LETTERS.has(key)) {
        event.preventDefault();
        state.pendingLetter = key.toUpperCase();
        const pending = slot.querySelector("[data-pending-code]");
        if (pending) pending.textContent = `Typed: ${state.pendingLetter}…`;
        return;
      }
      if (/^[0-9]$/.test(key) && state.pendingLetter) {
        event.preventDefault();
        selectCode(state.pendingLetter + key);
        state.pendingLetter = "";
        return;
      }
      if (key === "Enter" && state.selectedCode && !target.closest?.("button, a, summary")) {
        event.preventDefault();
        submit({ value: state.selectedCode });
        return;
      }
    } else if (key === "1" || key === "y") {
      event.preventDefault();
      submit({ value: true });
      return;
    } else if (key === "0") {
      event.preventDefault();
      submit({ value: false });
      return;
    } else if (key === "j") {
      const answer = document.getElementById("final-answer");
      if (answer) { event.preventDefault(); answer.scrollIntoView({ block: "center" }); }
      return;
    }
    if (key === "u") { event.preventDefault(); openUnsuitable(); }
    else if (key === "s") { event.preventDefault(); skip(); }
    else if (key === "n") { event.preventDefault(); slot.querySelector("[data-label-note]")?.focus(); }
  }

  function onClick(event) {
    const control = event.target.closest("button, [data-action]");
    if (!control || !root.contains(control)) return;
    if (control.dataset.verdict) submit({ value: control.dataset.verdict === "correct" });
    else if (control.dataset.code) selectCode(control.dataset.code);
    else if (control.dataset.action === "submit-code" && state.selectedCode) submit({ value: state.selectedCode });
    else if (control.dataset.action === "unsuitable") openUnsuitable();
    else if (control.dataset.action === "submit-unsuitable") submitUnsuitable();
    else if (control.dataset.action === "skip") skip();
    else if (control.dataset.action === "next") run(loadNext);
    else if (control.dataset.action === "help") toggleHelp();
  }

  document.addEventListener("keydown", onKeyDown);
  root.addEventListener("click", onClick);
  taskShown();
  root.dataset.ready = "1";
}

function start() {
  const root = document.querySelector("[data-labeling]");
  if (root) initLabeling(root);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
