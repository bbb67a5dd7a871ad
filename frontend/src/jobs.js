// Live progress of background jobs of every kind (verification runs, exports, imports). While any job row
// (tr[data-job]) on the page is queued or running, each such job's JSON endpoint is polled every 2 s with the session
// cookie; every endpoint carries the common job payload under "job", from which the bar, status and times are
// updated in place (and a run's verdict counts from its own payload). A job that has ended gets its row re-rendered
// by the server (buttons, results, times), taken from a fresh copy of the page. Polling stops once every job ended.
const POLL_MS = 2000;
const ACTIVE = new Set(["queued", "running"]);
const STATUS_LABELS = {
  queued: "Queued", running: "Running", succeeded: "Succeeded", failed: "Failed", cancelled: "Cancelled",
};

let timer = null;

function activeRows() {
  return [...document.querySelectorAll("tr[data-job]")].filter((row) => ACTIVE.has(row.dataset.status));
}

function setPollingState(state) {
  document.documentElement.dataset.jobsPolling = state;
}

function setText(row, selector, value) {
  const element = row.querySelector(selector);
  if (element) element.textContent = value;
}

function shownTime(iso) {
  return iso ? iso.slice(0, 19).replace("T", " ") : "—";
}

function progressOf(payload) {
  const progress = (payload.job || payload).progress || {};
  return { done: progress.done ?? 0, total: progress.total ?? 0 };
}

function update(row, payload) {
  const { done, total } = progressOf(payload);
  const bar = row.querySelector("[data-job-progress]");
  if (bar) {
    if (total > 0) {
      bar.max = total;
      bar.value = done;
    } else if (!ACTIVE.has(payload.status)) {
      bar.max = 1;
      bar.value = payload.status === "succeeded" ? 1 : 0;
    } else {
      bar.removeAttribute("value");
    }
  }
  setText(row, '[data-job-field="done"]', String(done));
  setText(row, '[data-job-field="total"]', String(total));
  setText(row, '[data-job-field="started_at"]', shownTime(payload.started_at));
  setText(row, '[data-job-field="finished_at"]', shownTime(payload.finished_at));
  const status = row.querySelector('[data-job-field="status"]');
  if (status) {
    status.textContent = STATUS_LABELS[payload.status] || payload.status;
    status.className = `job-status status-${payload.status}`;
  }
  for (const [name, count] of Object.entries(payload.counts || {})) {
    setText(row, `[data-job-count="${name}"]`, String(count));
  }
  const error = document.getElementById(`${row.id}-error`);
  if (error && payload.error) {
    error.hidden = false;
    setText(error, ".job-error", payload.error);
  }
  row.dataset.status = payload.status;
}

async function refreshRows(ids) {
  const response = await fetch(window.location.pathname + window.location.search, {
    credentials: "same-origin", headers: { Accept: "text/html" },
  });
  if (!response.ok) return;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  for (const id of ids) {
    for (const suffix of ["", "-error"]) {
      const replacement = fresh.getElementById(id + suffix);
      const current = document.getElementById(id + suffix);
      if (replacement && current) current.replaceWith(document.importNode(replacement, true));
    }
  }
}

async function pollOnce(row) {
  const response = await fetch(row.dataset.jobUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (response.status === 401 || response.status === 403 || response.status === 404) {
    row.dataset.status = "unknown";
    setText(row, '[data-job-field="status"]', "Progress unavailable: reload the page");
    return false;
  }
  if (!response.ok) return false;
  const payload = await response.json();
  update(row, payload);
  // A job whose page names where its result lives (a project's setup) moves there once it has succeeded.
  const follow = row.closest("[data-follow]");
  if (payload.status === "succeeded" && follow) window.location.assign(follow.dataset.follow);
  return !ACTIVE.has(payload.status);
}

async function poll() {
  timer = null;
  const rows = activeRows();
  const ended = [];
  await Promise.all(rows.map(async (row) => {
    try {
      if (await pollOnce(row)) ended.push(row.id);
    } catch {
      // A dropped request is tried again on the next round.
    }
  }));
  if (ended.length) {
    try {
      await refreshRows(ended);
    } catch {
      // The in-place update already shows the end; only the buttons wait for a reload.
    }
  }
  schedule();
}

function schedule() {
  if (timer === null && activeRows().length) {
    setPollingState("active");
    timer = window.setTimeout(poll, POLL_MS);
  } else if (timer === null) {
    setPollingState("idle");
  }
}

function start() {
  if (document.querySelector("tr[data-job]")) schedule();
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
