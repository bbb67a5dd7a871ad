// The proof-grading page: point steppers per checkpoint, chains as tabs, deductions, a live running total and
// keyboard shortcuts. The total shown here is a preview; the server recomputes it from the choices on submit.

const TYPING_TAGS = new Set(["TEXTAREA", "SELECT"]);

export function computeTotal(rubric, chainKey, awarded, deductionKeys) {
  const chain = (rubric.chains || []).find((c) => c.key === chainKey);
  if (!chain) return { total: 0, chainTotal: 0 };
  const chainTotal = chain.checkpoints.reduce((sum, cp) => sum + (awarded[cp.key] || 0), 0);
  const applied = (rubric.deductions || []).filter((d) => deductionKeys.includes(d.key));
  let total = chainTotal - applied.filter((d) => d.kind === "penalty").reduce((s, d) => s + d.amount, 0);
  const caps = applied.filter((d) => d.kind === "cap").map((d) => d.amount);
  if (caps.length) total = Math.min(total, ...caps);
  return { total: Math.max(0, Math.min(rubric.max_points, total)), chainTotal };
}

function clampPoints(checkpoint, value) {
  const max = Number(checkpoint.dataset.max);
  const partial = checkpoint.dataset.partial === "1";
  let points = Math.max(0, Math.min(max, Math.round(value)));
  if (!partial && points > 0 && points < max) points = value > 0 ? max : 0;
  return points;
}

function setupGrading(form) {
  const rubric = JSON.parse(document.getElementById("proof-rubric").textContent);
  const chainInput = form.querySelector("#chain-input");
  const output = form.querySelector("#running-total");
  const subtotal = form.querySelector("#chain-subtotal");
  const tabs = Array.from(form.querySelectorAll("[data-chain-tab]"));
  const panels = Array.from(form.querySelectorAll(".chain-panel"));
  let current = null;

  const activePanel = () => panels.find((panel) => panel.dataset.chain === chainInput.value) || panels[0];
  const checkpoints = () => Array.from(activePanel().querySelectorAll("[data-checkpoint]"));
  const input = (checkpoint) => checkpoint.querySelector("[data-points-input]");
  const pointsOf = (checkpoint) => Number(input(checkpoint).value || 0);

  function markJustifications() {
    for (const checkpoint of checkpoints()) {
      const points = pointsOf(checkpoint);
      const partial = points > 0 && points < Number(checkpoint.dataset.max);
      form.querySelector(`[data-justifies="${checkpoint.dataset.checkpoint}"]`)
        .classList.toggle("needs-justification", partial);
    }
    for (const box of form.querySelectorAll("input[name='deduction']")) {
      form.querySelector(`[data-justifies="${box.value}"]`).classList.toggle("needs-justification", box.checked);
    }
  }

  function refresh() {
    const awarded = {};
    for (const checkpoint of checkpoints()) awarded[checkpoint.dataset.checkpoint] = pointsOf(checkpoint);
    const deductions = Array.from(form.querySelectorAll("input[name='deduction']:checked")).map((box) => box.value);
    const { total, chainTotal } = computeTotal(rubric, chainInput.value, awarded, deductions);
    output.value = String(total);
    output.textContent = String(total);
    subtotal.textContent = deductions.length ? `(checkpoints ${chainTotal}, after deductions ${total})` : "";
    form.querySelector("#justification-overall").classList.toggle("needs-justification", total === 0);
    markJustifications();
  }

  function setPoints(checkpoint, value) {
    input(checkpoint).value = String(clampPoints(checkpoint, value));
    refresh();
  }

  function step(checkpoint, direction) {
    const partial = checkpoint.dataset.partial === "1";
    const max = Number(checkpoint.dataset.max);
    const target = partial ? pointsOf(checkpoint) + direction : direction > 0 ? max : 0;
    setPoints(checkpoint, target);
  }

  function focusCheckpoint(checkpoint) {
    if (!checkpoint) return;
    if (current) current.classList.remove("is-current");
    current = checkpoint;
    current.classList.add("is-current");
    current.focus();
  }

  function selectChain(key) {
    chainInput.value = key;
    for (const tab of tabs) tab.setAttribute("aria-selected", String(tab.dataset.chainTab === key));
    for (const panel of panels) panel.hidden = panel.dataset.chain !== key;
    current = null;
    refresh();
  }

  for (const tab of tabs) tab.addEventListener("click", () => selectChain(tab.dataset.chainTab));
  form.addEventListener("click", (event) => {
    const button = event.target.closest("[data-step]");
    if (!button) return;
    const checkpoint = button.closest("[data-checkpoint]");
    step(checkpoint, Number(button.dataset.step));
    focusCheckpoint(checkpoint);
  });
  form.addEventListener("change", (event) => {
    const checkpoint = event.target.closest("[data-checkpoint]");
    if (checkpoint && event.target.matches("[data-points-input]")) setPoints(checkpoint, Number(event.target.value || 0));
    else refresh();
  });
  form.addEventListener("input", refresh);
  form.addEventListener("focusin", (event) => {
    const checkpoint = event.target.closest("[data-checkpoint]");
    if (checkpoint && checkpoint !== current) {
      if (current) current.classList.remove("is-current");
      current = checkpoint;
      current.classList.add("is-current");
    }
  });

  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && !event.altKey) {
      event.preventDefault();
      form.requestSubmit(document.getElementById("save-grade"));
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (TYPING_TAGS.has(target.tagName)) return;
    if (target.tagName === "INPUT" && target.type !== "checkbox" && target.type !== "number") return;
    const list = checkpoints();
    const index = current ? list.indexOf(current) : -1;
    const onNumber = target.tagName === "INPUT" && target.type === "number";
    let handled = true;
    if (event.key === "j" || (event.key === "ArrowDown" && !onNumber)) {
      focusCheckpoint(list[Math.min(list.length - 1, index + 1)]);
    } else if (event.key === "k" || (event.key === "ArrowUp" && !onNumber)) {
      focusCheckpoint(list[Math.max(0, index - 1)]);
    } else if ((event.key === "+" || event.key === "=") && current) {
      step(current, 1);
    } else if ((event.key === "-" || event.key === "_") && current) {
      step(current, -1);
    } else if (event.key === "a" && current) {
      setPoints(current, Number(current.dataset.max));
    } else if (event.key === "0" && current && !onNumber) {
      setPoints(current, 0);
    } else if (event.key === "s" && document.getElementById("skip-proof")) {
      form.requestSubmit(document.getElementById("skip-proof"));
    } else {
      handled = false;
    }
    if (handled) event.preventDefault();
  });

  selectChain(chainInput.value || (tabs[0] && tabs[0].dataset.chainTab) || "");
  form.dataset.ready = "1";
}

function start() {
  const form = document.getElementById("proof-grading");
  if (form) setupGrading(form);
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
