// The keyboard-first labeling page. It keeps a small queue of items the server leased ahead, each already
// rendered by the server (the browser never renders Markdown) and typeset here while it waits, so a label key
// shows the next item at once while the label is saved in the background. One request per label: the save's
// answer brings the items that top the queue up. A save that fails is kept, shown and retried; one the server
// refuses is shown with the reason. `z` goes back to the item labeled before to change its label.
import { pendingMath, typesetElement } from "./math.js";
import { afterNextFrame, yieldToEventLoop } from "./yielding.js";

const TEXT_FIELDS = "input:not([type=button]):not([type=submit]):not([type=radio]):not([type=checkbox]), textarea, select, [contenteditable='true']";
const CODE_LETTERS = new Set(["a", "b", "c", "d"]);
const RETRY_DELAYS = [1000, 2000, 4000, 8000, 15000];
const HISTORY_LIMIT = 20;
const WAIT_FOR_FREE_ITEMS_MS = 30000;
const RECENT_PREVIEW_CHARACTERS = 60;
// Labeled items kept in the page, ready for `z`; older ones are rebuilt from their HTML when gone back to, which keeps
// the page (and the work of the browser's garbage collector) small.
const HISTORY_IN_PAGE = 3;
// How long a slice of an item's preparation may run before the page handles what is waiting: a key, a frame.
const PREPARATION_SLICE_MS = 4;

function isTextField(element) {
  return element instanceof Element && element.matches(TEXT_FIELDS);
}

function formatRemaining(milliseconds) {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  const minutes = Math.floor(seconds / 60);
  return `${minutes}:${String(seconds % 60).padStart(2, "0")} left`;
}

export function formatDuration(totalSeconds) {
  const minutes = Math.floor(Math.max(0, totalSeconds) / 60);
  if (minutes < 1) return "under a minute";
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

function labelText(isAnswerType, body) {
  if (body.unsuitable) return "unsuitable";
  if (isAnswerType) return String(body.value);
  return body.value ? "correct" : "incorrect";
}

export function initLabeling(root) {
  const slot = root.querySelector("[data-task-slot]");
  const allDone = root.querySelector("[data-all-done]");
  const message = root.querySelector("[data-label-message]");
  const messageText = root.querySelector("[data-label-message-text]");
  const messageNext = root.querySelector("[data-label-message-next]");
  const messageRetry = root.querySelector("[data-label-message-retry]");
  const saveStatus = root.querySelector("[data-save-status]");
  const revisit = root.querySelector("[data-revisit]");
  const undoButton = root.querySelector("[data-action=undo]");
  const help = root.querySelector("[data-label-help]");
  const lease = root.querySelector("[data-lease]");
  const recentList = root.querySelector("[data-recent-list]");
  const isAnswerType = root.dataset.kind === "answer_type";
  const state = {
    current: null, // the entry shown: {id, html, expires_at, my_label, node}
    queue: [], // entries leased ahead, in order
    history: [], // entries labeled on this page, newest last: {entry, body}
    outbox: [], // requests not yet answered, oldest first
    sending: false,
    retryTimer: 0,
    attempts: 0,
    exhausted: false,
    leftForMe: 0,
    waitTimer: 0,
    startedAt: performance.now(),
    pendingLetter: "",
    selectedCode: "",
    leaseTimer: 0,
  };

  const known = () => [state.current, ...state.queue].filter(Boolean).map((entry) => entry.id);

  async function post(body) {
    return fetch(root.dataset.queueUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": root.dataset.csrfToken },
      body: JSON.stringify(body),
    });
  }

  async function detailOf(response) {
    try {
      const data = await response.json();
      if (typeof data.detail === "string") return data.detail;
    } catch {
      // not JSON: fall through
    }
    return `the server answered ${response.status}`;
  }

  function showMessage(text, { offerNext = false, offerRetry = false } = {}) {
    messageText.textContent = text;
    messageNext.hidden = !offerNext;
    messageRetry.hidden = !offerRetry;
    message.hidden = false;
    root.dataset.message = offerRetry ? "retrying" : "shown";
    if (offerNext) messageNext.focus();
  }

  function clearMessage() {
    message.hidden = true;
    messageText.textContent = "";
    messageNext.hidden = true;
    messageRetry.hidden = true;
    delete root.dataset.message;
  }

  // Every item stays in the slot, laid out at the slot's width, all stacked at its top; the slot takes the height of
  // the one shown. The ones queued ahead are `waiting`: transparent, under the shown one, hidden from assistive
  // technology and inert, but laid out and painted (each on its own compositing layer), so the key that shows one
  // only swaps two layers' opacity instead of laying out and painting a page of formulas. Items already labeled
  // (kept for `z`) are `stowed`: their layout kept, but neither painted, focusable nor in the accessibility tree
  // (content-visibility: hidden). Making an item inert or not restyles every element in it, so that, stowing and
  // focusing the item shown wait until the swap is painted and the page is idle (`settle`); until then the click
  // handler ignores the controls of an item put away, the label keys act on the item shown, and a key that moves the
  // focus into it settles at once.
  // The key changes neither item's class nor style: Chrome follows what a key press changes into the next frame,
  // and walks every element of an item whose class or style changed, 5-6 ms for two long items. So `data-item` says at
  // once what an item is (current, waiting, stowed; no style hangs on it), the styles that stack the items hang on
  // `data-layer`, which only `settle` changes, and the key swaps the two items with finished animations of their
  // opacity and stacking order, which settling replaces by the layer they stand for.
  const SHOWN = [{ opacity: 1, zIndex: 1 }];
  const HIDDEN = [{ opacity: 0, zIndex: 0 }];

  function stopLayerAnimations(node) {
    for (const animation of node.getAnimations()) animation.cancel();
  }

  function swapLayer(node, keyframes) {
    stopLayerAnimations(node);
    node.animate(keyframes, { duration: 0, fill: "forwards" });
  }

  // Each item's height is measured while it waits, so the key sets the slot's height without a layout of its own,
  // and only when it differs.
  const heights = new WeakMap();

  function fitSlotTo(node) {
    let height = heights.get(node);
    if (!height) {
      // not measured yet (shown the moment it went in), or measured while stowed
      height = node.offsetHeight;
      heights.set(node, height);
    }
    const value = `${height}px`;
    if (slot.style.height !== value) slot.style.height = value;
  }

  const measureItems = new ResizeObserver((observed) => {
    for (const { target, borderBoxSize } of observed) heights.set(target, Math.round(borderBoxSize[0].blockSize));
    if (state.current && observed.some(({ target }) => target === state.current.node)) fitSlotTo(state.current.node);
  });

  function putInSlot(node) {
    slot.append(node);
    measureItems.observe(node);
  }

  function takeOutOfSlot(node) {
    if (!node) return;
    measureItems.unobserve(node);
    node.remove();
  }

  const whenIdle = window.requestIdleCallback
    ? (callback) => requestIdleCallback(callback, { timeout: 100 })
    : (callback) => setTimeout(callback, 50);
  let settling = false;

  function settle() {
    if (!settling) return;
    settling = false;
    const waiting = new Set(state.queue.map((entry) => entry.node));
    for (const node of slot.querySelectorAll(":scope > .task-holder")) {
      if (waiting.has(node)) {
        node.dataset.layer = "waiting";
        node.inert = true;
      } else if (node === state.current?.node) {
        node.dataset.layer = "shown";
        node.inert = false;
      } else {
        node.dataset.item = "stowed";
        node.dataset.layer = "stowed";
        node.inert = false;
      }
      stopLayerAnimations(node);
    }
    if (state.current && !state.current.node.contains(document.activeElement)) {
      state.current.node.querySelector("[data-task]")?.focus({ preventScroll: true });
    }
  }

  function settleWhenPainted() {
    if (settling) return;
    settling = true;
    requestAnimationFrame(() => whenIdle(settle));
  }

  function putAway(entry) {
    if (!entry) return;
    entry.node.dataset.item = "waiting";
    entry.node.setAttribute("aria-hidden", "true");
    if (entry.node.dataset.layer !== "stowed") swapLayer(entry.node, HIDDEN);
  }

  function reveal(node) {
    node.dataset.item = "current";
    node.removeAttribute("aria-hidden");
    if (node.dataset.layer === "stowed") {
      // going back to a labeled item: it has to be laid out and painted anyway
      stopLayerAnimations(node);
      node.dataset.layer = "shown";
    } else {
      swapLayer(node, SHOWN);
    }
  }

  // Typesetting a long completion takes a while, and so do laying it out and painting it: done at once when the
  // save's answer brings an item, they would hold up the key that follows. So an item leased ahead is prepared out of
  // the page, a few milliseconds at a time (`prepareQueued`): its HTML parsed, then its formulas typeset one by one,
  // the page handling whatever waits (a key, a frame) in between. Only then does it go into the page, laid out in
  // the task that puts it in, right after a frame, and painted in the frame that follows. An item shown before it is
  // ready is finished at once (`finish`).
  function* preparation(entry) {
    try {
      const node = document.createElement("div");
      node.className = "task-holder";
      node.dataset.item = "waiting";
      node.dataset.layer = "waiting";
      node.setAttribute("aria-hidden", "true");
      node.inert = true;
      node.innerHTML = entry.html;
      entry.node = node;
      yield;
      for (const element of pendingMath(node)) {
        typesetElement(element);
        yield;
      }
    } finally {
      entry.ready = true; // also when a step failed, so that the item is shown as it is rather than prepared again
    }
  }

  const entryOf = (task) => ({ ...task, node: null, steps: null, ready: false });

  function finish(entry) {
    if (!entry.ready) {
      entry.steps ||= preparation(entry);
      while (!entry.steps.next().done) continue;
    }
    if (entry.node.parentNode !== slot) putInSlot(entry.node);
  }

  let preparing = false;

  async function prepareQueued() {
    if (preparing) return;
    preparing = true;
    try {
      let entry;
      while ((entry = state.queue.find((queued) => queued.node?.parentNode !== slot))) {
        entry.steps ||= preparation(entry);
        let sliceStart = performance.now();
        while (!entry.steps.next().done) {
          if (performance.now() - sliceStart < PREPARATION_SLICE_MS) continue;
          await yieldToEventLoop();
          if (!state.queue.includes(entry)) break; // shown (and so finished) or given up meanwhile
          sliceStart = performance.now();
        }
        await afterNextFrame();
        if (!state.queue.includes(entry) || entry.node.parentNode === slot) continue;
        putInSlot(entry.node);
        void entry.node.offsetHeight; // laid out now, not in a frame that may follow a key
        await afterNextFrame();
      }
    } finally {
      preparing = false;
    }
  }

  const inUse = (entry) => entry === state.current || state.queue.includes(entry);

  // Taking a long item out of the page takes a while too, so it waits until the page is idle.
  function dropNode(entry) {
    if (!entry) return;
    whenIdle(() => {
      if (!inUse(entry) && !state.history.some((done) => done.entry === entry)) takeOutOfSlot(entry.node);
    });
  }

  function unload(entry) {
    whenIdle(() => {
      const recent = state.history.slice(-HISTORY_IN_PAGE).some((done) => done.entry === entry);
      if (!entry.node || inUse(entry) || recent) return;
      takeOutOfSlot(entry.node);
      Object.assign(entry, { node: null, steps: null, ready: false });
    });
  }

  const here = () => state.current?.node || slot;

  function updateLease() {
    const left = lease.querySelector("[data-lease-left]");
    if (!state.current?.expires_at) {
      lease.hidden = true;
      return;
    }
    lease.hidden = false;
    const remaining = Date.parse(state.current.expires_at) - Date.now();
    if (remaining > 0) {
      left.textContent = formatRemaining(remaining);
      lease.classList.toggle("lease-short", remaining < 2 * 60 * 1000);
      lease.classList.remove("lease-expired");
    } else {
      left.textContent = "expired — your label is kept only if the item still has a free slot";
      lease.classList.add("lease-expired");
    }
  }

  function resetControls(node) {
    for (const field of node.querySelectorAll("textarea, input[type=text]")) field.value = "";
    const panel = node.querySelector("[data-unsuitable-panel]");
    if (panel) panel.hidden = true;
    for (const button of node.querySelectorAll("[data-code]")) button.setAttribute("aria-pressed", "false");
    const submitButton = node.querySelector("[data-submit-code]");
    if (submitButton) submitButton.disabled = true;
  }

  function show(entry, { revisitOf = null } = {}) {
    putAway(state.current);
    state.current = entry;
    state.startedAt = performance.now();
    state.pendingLetter = "";
    state.selectedCode = "";
    allDone.hidden = true;
    clearInterval(state.waitTimer);
    state.waitTimer = 0;
    slot.querySelector("[data-testid=loading]")?.remove();
    if (entry) {
      finish(entry);
      resetControls(entry.node);
      reveal(entry.node);
      fitSlotTo(entry.node);
      root.dataset.taskId = String(entry.id);
      root.dataset.state = "task";
    } else {
      slot.style.height = "";
      root.dataset.taskId = "";
      root.dataset.state = state.exhausted ? "done" : "loading";
      if (state.exhausted) showDone();
    }
    const previous = revisitOf || (entry?.my_label ? { display: labelText(isAnswerType, entry.my_label) } : null);
    revisit.hidden = !previous;
    revisit.textContent = previous
      ? `You labeled this item ${previous.display}. Press a label key to change it (while the item is still open), or carry on with the next one.`
      : "";
    root.dataset.revisiting = previous ? "1" : "";
    undoButton.disabled = state.history.length === 0;
    clearInterval(state.leaseTimer);
    updateLease();
    state.leaseTimer = setInterval(updateLease, 1000);
    if (entry) window.scrollTo(0, 0);
    else if (state.exhausted) allDone.focus({ preventScroll: true });
    settleWhenPainted();
  }

  // "All done" only when nothing is left for this annotator; items left but held by others (or waiting for a
  // tie-break) are said so, and the page asks for them again every 30 s.
  function showDone() {
    const waiting = state.leftForMe > 0;
    allDone.hidden = false;
    allDone.querySelector("[data-all-done-finished]").hidden = waiting;
    allDone.querySelector("[data-all-done-waiting]").hidden = !waiting;
    allDone.querySelector("[data-waiting-count]").textContent = `${state.leftForMe} item${state.leftForMe === 1 ? "" : "s"}`;
    if (waiting && !state.waitTimer) state.waitTimer = setInterval(fill, WAIT_FOR_FREE_ITEMS_MS);
    if (!waiting && state.waitTimer) { clearInterval(state.waitTimer); state.waitTimer = 0; }
  }

  function showNext() {
    show(state.queue.shift() || null);
  }

  function updateProgress(progress) {
    if (!progress) return;
    const set = (selector, value) => { const element = root.querySelector(selector); if (element) element.textContent = String(value); };
    set("[data-done-total]", progress.done_total);
    set("[data-done-today]", progress.done_today);
    set("[data-left-for-me]", progress.left_for_me);
    state.leftForMe = Number(progress.left_for_me) || 0;
    if (root.dataset.state === "done") showDone();
    set("[data-left]", progress.left_in_project);
    set("[data-time-today]", formatDuration(progress.seconds_today));
    const bar = root.querySelector("[data-progress-bar]");
    if (bar) {
      bar.max = Math.max(1, progress.done_total + progress.left_for_me);
      bar.value = progress.done_total;
    }
  }

  function merge(data) {
    updateProgress(data.progress);
    const held = new Set(known());
    if (Array.isArray(data.queue)) {
      const live = new Set(data.queue);
      const gone = state.queue.filter((entry) => !live.has(entry.id));
      state.queue = state.queue.filter((entry) => live.has(entry.id));
      for (const entry of gone) dropNode(entry);
    }
    // A label or skip still waiting in the outbox keeps its lease on the server until it is sent; an answer that
    // was computed before it must not bring that item back.
    const settled = new Set(state.outbox.filter((job) => job.action === "label" || job.action === "skip").map((job) => job.task_id));
    for (const entry of data.tasks || []) {
      if (!held.has(entry.id) && !settled.has(entry.id)) state.queue.push(entryOf(entry));
    }
    const leasedAhead = (data.queue || []).filter((id) => !settled.has(id));
    state.exhausted = Array.isArray(data.tasks) && state.queue.length === 0 && leasedAhead.length <= held.size;
    if (!state.current) showNext();
    prepareQueued();
  }

  // A one-line preview of a shown question: its text, and its formulas as the page already typeset them (cloned,
  // so nothing is typeset again while a key is handled), cut after about `budget.left` visible characters.
  function appendPreview(target, node, budget) {
    for (const child of node.childNodes) {
      if (budget.left <= 0) return;
      if (child.nodeType === Node.TEXT_NODE) {
        const text = child.textContent.replace(/\s+/g, " ");
        target.append(text.length > budget.left ? `${text.slice(0, budget.left).trimEnd()}…` : text);
        budget.left -= text.length;
      } else if (child.nodeType === Node.ELEMENT_NODE && child.classList.contains("katex")) {
        target.append(child.cloneNode(true));
        budget.left -= (child.querySelector(".katex-html")?.textContent || "").length;
      } else if (child.nodeType === Node.ELEMENT_NODE) {
        appendPreview(target, child, budget);
      }
    }
  }

  function recordRecent(entry, body) {
    if (!recentList) return;
    recentList.querySelector("[data-recent-empty]")?.remove();
    let item = recentList.querySelector(`[data-recent-task="${entry.id}"]`);
    if (!item) {
      item = document.createElement("li");
      item.dataset.recentTask = String(entry.id);
      const button = document.createElement("button");
      button.type = "button";
      button.className = "link-button";
      button.dataset.action = "open";
      button.dataset.task = String(entry.id);
      const question = entry.node.querySelector("[data-testid=question]");
      if (question) appendPreview(button, question, { left: RECENT_PREVIEW_CHARACTERS });
      else button.textContent = `Task ${entry.id}`;
      const value = document.createElement("strong");
      value.dataset.recentValue = "";
      item.append(button, " → ", value);
    }
    const shown = labelText(isAnswerType, body);
    item.querySelector("[data-recent-value]").textContent = shown.charAt(0).toUpperCase() + shown.slice(1); // as the server lists it
    recentList.prepend(item);
    while (recentList.children.length > HISTORY_LIMIT) recentList.lastElementChild.remove();
  }

  function scheduleRetry(reason) {
    const delay = RETRY_DELAYS[Math.min(state.attempts, RETRY_DELAYS.length - 1)];
    state.attempts += 1;
    const waiting = state.outbox.filter((job) => job.action === "label").length;
    showMessage(`Saving failed (${reason}). ${waiting} label${waiting === 1 ? " is" : "s are"} kept here and will be sent again in ${Math.round(delay / 1000)} s.`, { offerRetry: true });
    clearTimeout(state.retryTimer);
    state.retryTimer = setTimeout(() => { state.retryTimer = 0; pump(); }, delay);
  }

  function updateSaveStatus() {
    const waiting = state.outbox.filter((job) => job.action === "label").length;
    saveStatus.textContent = waiting ? `Saving ${waiting} label${waiting === 1 ? "" : "s"}…` : "All labels saved.";
    root.dataset.unsaved = String(waiting);
  }

  async function pump() {
    if (state.sending || state.retryTimer || state.outbox.length === 0) return;
    state.sending = true;
    const job = state.outbox[0];
    let response;
    try {
      response = await post({ ...job, have: known() });
    } catch (error) {
      state.sending = false;
      scheduleRetry(error.message || "no connection");
      return;
    }
    state.sending = false;
    if (response.ok) {
      state.outbox.shift();
      state.attempts = 0;
      if (root.dataset.message === "retrying") clearMessage();
      merge(await response.json().catch(() => ({})));
      if (job.action === "label") root.dataset.saved = String(Number(root.dataset.saved || 0) + 1);
    } else if (response.status === 400 || response.status === 404 || response.status === 409) {
      state.outbox.shift();
      state.attempts = 0;
      const detail = (await detailOf(response)).replace(/\.$/, "");
      if (job.action === "label") {
        const text = /not stored/.test(detail) ? detail.charAt(0).toUpperCase() + detail.slice(1) : `Your label was not stored: ${detail}`;
        showMessage(`${text}.`, { offerNext: !state.current });
        root.dataset.state = state.current ? root.dataset.state : "stale";
      } else {
        showMessage(detail.charAt(0).toUpperCase() + detail.slice(1) + ".");
      }
    } else {
      scheduleRetry(`the server answered ${response.status}`);
      updateSaveStatus();
      return;
    }
    updateSaveStatus();
    pump();
  }

  function send(job) {
    state.outbox.push(job);
    updateSaveStatus();
    pump();
  }

  function submit(body) {
    const entry = state.current;
    if (!entry) return;
    const note = entry.node.querySelector("[data-label-note]")?.value ?? "";
    const seconds = Math.round((performance.now() - state.startedAt) / 100) / 10;
    const full = { note, seconds_spent: seconds, ...body };
    if (root.dataset.message !== "retrying") clearMessage();
    // A field of the item put away (the unsuitable reason, the note) would keep the focus until the next item
    // settles, and the keys typed meanwhile would go into it: they are for the next item.
    const focused = document.activeElement;
    if (focused && entry.node.contains(focused) && isTextField(focused)) focused.blur();
    state.history.push({ entry, body: full });
    if (state.history.length > HISTORY_LIMIT) dropNode(state.history.shift().entry);
    const older = state.history.at(-1 - HISTORY_IN_PAGE);
    if (older) unload(older.entry);
    recordRecent(entry, full);
    showNext();
    send({ action: "label", task_id: entry.id, ...full });
  }

  function skip() {
    const entry = state.current;
    if (!entry) return;
    clearMessage();
    showNext();
    dropNode(entry);
    send({ action: "skip", task_id: entry.id });
  }

  // Going back asks the server first: an item resolved (or sent to adjudication) since the label was given can no
  // longer change, and the page says so rather than inviting a change it would refuse.
  async function undo() {
    const previous = state.history[state.history.length - 1];
    if (!previous || state.undoing) return;
    state.undoing = true;
    const response = await post({ action: "open", task_id: previous.entry.id }).catch(() => null);
    state.undoing = false;
    if (!response || !response.ok) {
      showMessage(response ? await detailOf(response) : "Could not reach the server; try again.");
      return;
    }
    const data = await response.json();
    state.history.pop();
    if (data.task?.locked) {
      undoButton.disabled = state.history.length === 0;
      showMessage(`You can no longer change your label of the previous item: ${data.task.locked}.`);
      return;
    }
    if (state.current) state.queue.unshift(state.current);
    show(previous.entry, { revisitOf: { display: labelText(isAnswerType, previous.body) } });
  }

  async function openTask(id) {
    if (state.current?.id === id) return;
    const response = await post({ action: "open", task_id: id }).catch(() => null);
    if (!response || !response.ok) {
      showMessage(response ? await detailOf(response) : "Could not reach the server; try again.");
      return;
    }
    const data = await response.json();
    if (state.current) state.queue.unshift(state.current);
    for (const entry of state.queue.filter((queued) => queued.id === id)) takeOutOfSlot(entry.node);
    state.queue = state.queue.filter((entry) => entry.id !== id);
    show(entryOf(data.task));
  }

  function fill() {
    send({ action: "fill" });
  }

  function openUnsuitable() {
    settle();
    const panel = here().querySelector("[data-unsuitable-panel]");
    if (!panel) return;
    panel.hidden = false;
    here().querySelector("[data-action=unsuitable]")?.setAttribute("aria-expanded", "true");
    panel.querySelector("[data-unsuitable-reason]").focus();
  }

  function submitUnsuitable() {
    const reason = here().querySelector("[data-unsuitable-reason]");
    if (!reason.value.trim()) {
      showMessage("Say why the item is unsuitable before submitting it as unsuitable.");
      reason.focus();
      return;
    }
    submit({ unsuitable: true, unsuitable_reason: reason.value.trim() });
  }

  function selectCode(code) {
    settle();
    const choice = here().querySelector(`[data-code="${code}"]`);
    if (!choice) {
      showMessage(`${code} is not an answer type. Codes are A1–A8, B1–B5, C1–C3 and D1–D2.`);
      return;
    }
    clearMessage();
    state.selectedCode = code;
    for (const button of here().querySelectorAll("[data-code]")) button.setAttribute("aria-pressed", String(button === choice));
    const submitButton = here().querySelector("[data-submit-code]");
    submitButton.disabled = false;
    submitButton.querySelector("[data-selected-code]").textContent = code;
    const pending = here().querySelector("[data-pending-code]");
    if (pending) pending.textContent = `Selected: ${code}`;
    submitButton.focus({ preventScroll: true });
  }

  function leaveField(field) {
    field.blur();
    here().querySelector("[data-task]")?.focus({ preventScroll: true });
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
    if (key === "z") { event.preventDefault(); undo(); return; }
    if (!state.current) return;

    if (isAnswerType) {
      if (CODE_LETTERS.has(key)) {
        event.preventDefault();
        state.pendingLetter = key.toUpperCase();
        const pending = here().querySelector("[data-pending-code]");
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
      if (jumpToAnswer()) event.preventDefault();
      return;
    } else if (key === "r") {
      const reasoning = here().querySelector("[data-reasoning]");
      if (reasoning) { event.preventDefault(); reasoning.open = !reasoning.open; }
      return;
    } else if (key === "p") {
      const toggle = here().querySelector("[data-plain-toggle]");
      if (toggle) { event.preventDefault(); toggle.click(); }
      return;
    }
    if (key === "u") { event.preventDefault(); openUnsuitable(); }
    else if (key === "s") { event.preventDefault(); skip(); }
    else if (key === "n") { event.preventDefault(); settle(); here().querySelector("[data-label-note]")?.focus(); }
  }

  // The answer may sit in a folded reasoning section (the completion never left it): unfold that first.
  function jumpToAnswer() {
    const answer = here().querySelector("#final-answer");
    if (!answer) return false;
    const fold = answer.closest("details");
    if (fold) fold.open = true;
    answer.scrollIntoView({ block: "center" });
    return true;
  }

  function onClick(event) {
    const control = event.target.closest("button, [data-action]");
    const jump = event.target.closest("[data-jump-answer]");
    if (jump && root.contains(jump)) {
      event.preventDefault();
      jumpToAnswer();
      return;
    }
    if (!control || !root.contains(control)) return;
    const holder = control.closest(".task-holder");
    if (holder && holder !== state.current?.node) return;
    if (control.dataset.verdict) submit({ value: control.dataset.verdict === "correct" });
    else if (control.dataset.code) selectCode(control.dataset.code);
    else if (control.dataset.action === "submit-code" && state.selectedCode) submit({ value: state.selectedCode });
    else if (control.dataset.action === "unsuitable") openUnsuitable();
    else if (control.dataset.action === "submit-unsuitable") submitUnsuitable();
    else if (control.dataset.action === "skip") skip();
    else if (control.dataset.action === "undo") undo();
    else if (control.dataset.action === "open") openTask(Number(control.dataset.task));
    else if (control.dataset.action === "retry") { clearTimeout(state.retryTimer); state.retryTimer = 0; pump(); }
    else if (control.dataset.action === "next") { clearMessage(); fill(); }
    else if (control.dataset.action === "help") toggleHelp();
  }

  function release() {
    const ahead = state.queue.map((entry) => entry.id);
    if (!ahead.length || !navigator.sendBeacon) return;
    const form = new FormData();
    form.append("csrfmiddlewaretoken", root.dataset.csrfToken);
    for (const id of ahead) form.append("task", String(id));
    navigator.sendBeacon(root.dataset.releaseUrl, form);
    state.queue = [];
  }

  document.addEventListener("keydown", onKeyDown);
  root.addEventListener("click", onClick);
  window.addEventListener("pagehide", release);
  window.addEventListener("beforeunload", (event) => {
    if (state.outbox.some((job) => job.action === "label")) {
      event.preventDefault();
      event.returnValue = "";
    }
  });
  const today = root.querySelector("[data-time-today]");
  if (today) today.textContent = formatDuration(Number(today.textContent) || 0);
  root.dataset.state = "loading";
  fill();
  root.dataset.ready = "1";
  return state;
}

function start() {
  const root = document.querySelector("[data-labeling]");
  if (root) initLabeling(root);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
