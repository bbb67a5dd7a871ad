// Typesets the inert math elements that the server renders:
//   <span class="math" data-display="inline">TeX</span>  and  <div class="math" data-display="block">TeX</div>
// The TeX arrives as text (never as HTML), so a formula KaTeX cannot parse stays readable as its source.
import katex from "katex";

export const KATEX_OPTIONS = Object.freeze({
  throwOnError: false,
  trust: false,
  strict: "ignore",
  maxExpand: 1000,
  maxSize: 40,
});

const PENDING_MATH = ".math:not([data-typeset])";

function showSource(element, tex, reason) {
  element.textContent = tex;
  element.classList.add("math-error");
  if (reason) element.title = reason;
}

export function typesetElement(element) {
  const tex = element.textContent;
  const displayMode = element.dataset.display === "block";
  element.dataset.typeset = "1";
  try {
    katex.render(tex, element, { ...KATEX_OPTIONS, displayMode });
  } catch (error) {
    showSource(element, tex, error && error.message);
    return false;
  }
  // With throwOnError:false KaTeX draws a parse error as a .katex-error span holding the source.
  const parseError = element.querySelector(".katex-error");
  if (parseError) {
    showSource(element, tex, parseError.getAttribute("title"));
    return false;
  }
  return true;
}

// The math elements inside `root` (the root itself included) not yet typeset, in document order.
export function pendingMath(root) {
  const elements = [];
  if (root.matches && root.matches(PENDING_MATH)) elements.push(root);
  if (root.querySelectorAll) elements.push(...root.querySelectorAll(PENDING_MATH));
  return elements;
}

// Renders every not yet typeset math element inside `root` (the root itself included).
export function typeset(root = document.body) {
  if (!root) return { rendered: 0, failed: 0 };
  let rendered = 0;
  let failed = 0;
  for (const element of pendingMath(root)) {
    if (typesetElement(element)) rendered += 1;
    else failed += 1;
  }
  return { rendered, failed };
}
