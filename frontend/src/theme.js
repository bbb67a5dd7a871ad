// Light or dark colours: the system preference (prefers-color-scheme) until the reader picks one with the header's
// toggle; the pick is remembered in localStorage and set as data-theme on <html>, which the styles follow.
const STORAGE_KEY = "mathlabel.theme";
const darkQuery = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

function storedTheme() {
  try {
    const value = localStorage.getItem(STORAGE_KEY);
    return value === "dark" || value === "light" ? value : "";
  } catch {
    return "";
  }
}

export function currentTheme() {
  return storedTheme() || (darkQuery && darkQuery.matches ? "dark" : "light");
}

function paintToggles() {
  const dark = currentTheme() === "dark";
  for (const button of document.querySelectorAll("[data-theme-toggle]")) {
    button.setAttribute("aria-pressed", String(dark));
  }
}

function apply() {
  const chosen = storedTheme();
  if (chosen) document.documentElement.dataset.theme = chosen;
  else delete document.documentElement.dataset.theme;
  paintToggles();
}

export function setTheme(theme) {
  try {
    localStorage.setItem(STORAGE_KEY, theme);
  } catch {
    // Storage can be off (private windows); the choice then lasts for this page only.
  }
  document.documentElement.dataset.theme = theme;
  paintToggles();
}

apply();
darkQuery?.addEventListener?.("change", paintToggles);
document.addEventListener("click", (event) => {
  const toggle = event.target instanceof Element ? event.target.closest("[data-theme-toggle]") : null;
  if (toggle) setTheme(currentTheme() === "dark" ? "light" : "dark");
});
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", paintToggles, { once: true });
