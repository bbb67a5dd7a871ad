// The item browser: a box that ticks every item on the page, and a count of the ticked ones.
// The bulk form is a plain POST that works without this module; it only saves clicks.
export function initItemBulk(form) {
  const pageBox = form.querySelector("[data-select-page]");
  const boxes = () => Array.from(form.querySelectorAll("input[name=items]"));
  const count = form.querySelector("[data-selected-count]");

  function update() {
    const ticked = boxes().filter((box) => box.checked).length;
    if (count) count.textContent = ticked ? `(${ticked} ticked)` : "";
    if (pageBox) {
      pageBox.checked = ticked > 0 && ticked === boxes().length;
      pageBox.indeterminate = ticked > 0 && ticked < boxes().length;
    }
  }

  if (pageBox) {
    pageBox.hidden = false;
    pageBox.addEventListener("change", () => {
      for (const box of boxes()) box.checked = pageBox.checked;
      update();
    });
  }
  form.addEventListener("change", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.name === "items") update();
  });
  update();
  form.dataset.ready = "1";
}

function start() {
  const form = document.querySelector("[data-item-bulk]");
  if (form) initItemBulk(form);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
