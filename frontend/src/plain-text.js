// "Plain text": shows the source of a text (what the file holds, TeX and all) instead of its typeset form, for
// checking what a formula really says. Both are rendered by the server; a toggle switches the texts of its own
// section (`data-plain-scope`), or of the whole page when it has none.
function setPlain(scope, plain) {
  for (const element of scope.querySelectorAll("[data-tex-rendered]")) element.hidden = plain;
  for (const element of scope.querySelectorAll("[data-tex-source]")) element.hidden = !plain;
  for (const button of scope.querySelectorAll("[data-plain-toggle]")) button.setAttribute("aria-pressed", String(plain));
}

document.addEventListener("click", (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const toggle = target?.closest("[data-plain-toggle]");
  if (toggle) {
    setPlain(toggle.closest("[data-plain-scope]") || document, toggle.getAttribute("aria-pressed") !== "true");
    return;
  }
  // Outside the labeling page (which handles its own): an answer inside folded reasoning is unfolded first.
  const jump = target?.closest("a[href='#final-answer']");
  if (jump && !jump.closest("[data-labeling]")) {
    const answer = document.getElementById("final-answer");
    const fold = answer?.closest("details");
    if (fold) fold.open = true;
  }
});
