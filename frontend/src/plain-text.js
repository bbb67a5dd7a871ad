// "Plain text" on review pages: shows the source of answers and explanations (what the file holds, TeX and all)
// instead of their typeset form, for checking what a formula really says. Both are rendered by the server.
function setPlain(plain) {
  for (const element of document.querySelectorAll("[data-tex-rendered]")) element.hidden = plain;
  for (const element of document.querySelectorAll("[data-tex-source]")) element.hidden = !plain;
  for (const button of document.querySelectorAll("[data-plain-toggle]")) button.setAttribute("aria-pressed", String(plain));
}

document.addEventListener("click", (event) => {
  const toggle = event.target instanceof Element ? event.target.closest("[data-plain-toggle]") : null;
  if (toggle) setPlain(toggle.getAttribute("aria-pressed") !== "true");
});
