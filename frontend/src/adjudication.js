// Keyboard help for the adjudication form: pick the final value by key, jump to the rationale, decide.
// The form itself is a plain POST, so the page works without this module.
const CODE_LETTERS = new Set(["a", "b", "c", "d"]);

function isTextField(element) {
  return element instanceof Element && element.matches("input[type=text], textarea, select");
}

export function initAdjudication(form) {
  const rationale = form.querySelector("[data-rationale]");
  let pendingLetter = "";

  function choose(key) {
    const radio = form.querySelector(`input[data-decision-key="${key}"]`);
    if (!radio) return false;
    radio.checked = true;
    radio.focus();
    return true;
  }

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.metaKey || event.altKey) return;
    if (event.target === rationale) {
      if (event.key === "Enter" && event.ctrlKey) {
        event.preventDefault();
        form.requestSubmit();
      } else if (event.key === "Escape") {
        rationale.blur();
      }
      return;
    }
    if (event.ctrlKey || isTextField(event.target)) return;
    const key = event.key.toLowerCase();
    if (key === "r") {
      event.preventDefault();
      rationale.focus();
    } else if (CODE_LETTERS.has(key) && form.querySelector("input[data-decision-key^='a']")) {
      pendingLetter = key;
      event.preventDefault();
    } else if (/^[0-9]$/.test(key) && pendingLetter) {
      if (choose(pendingLetter + key)) event.preventDefault();
      pendingLetter = "";
    } else if (choose(key)) {
      event.preventDefault();
    }
  });
  form.dataset.ready = "1";
}

function start() {
  const form = document.querySelector("[data-adjudication-form]");
  if (form) initAdjudication(form);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
