// The import form's drop zone: a file dropped on it goes into the form's file input, as if chosen with the picker.
// Without JavaScript the file input works on its own.
function setUp(zone) {
  const input = zone.querySelector('input[type="file"]');
  if (!input) return;
  const hint = zone.querySelector(".drop-hint");
  const show = () => {
    if (hint && input.files.length) hint.textContent = `Chosen: ${input.files[0].name}`;
  };
  for (const type of ["dragenter", "dragover"]) {
    zone.addEventListener(type, (event) => {
      event.preventDefault();
      zone.classList.add("drop-active");
    });
  }
  for (const type of ["dragleave", "drop"]) {
    zone.addEventListener(type, () => zone.classList.remove("drop-active"));
  }
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    const files = event.dataTransfer && event.dataTransfer.files;
    if (!files || !files.length) return;
    const chosen = new DataTransfer();
    chosen.items.add(files[0]);
    input.files = chosen.files;
    show();
  });
  input.addEventListener("change", show);
}

function start() {
  document.querySelectorAll("[data-drop-zone]").forEach(setUp);
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
