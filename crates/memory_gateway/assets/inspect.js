// The inspector's only script (served from the binary), and optional: every page works
// without it. It asks before a destructive form is sent, and counts a block's characters
// against its limit while it is typed.
document.addEventListener("submit", (e) => {
  const msg = e.target.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) e.preventDefault();
});
for (const t of document.querySelectorAll("textarea[data-counter]")) {
  const out = document.createElement("p");
  out.className = "meta";
  out.setAttribute("aria-live", "polite");
  const show = () => { out.textContent = `${[...t.value].length} of ${t.maxLength} characters`; };
  t.after(out);
  t.addEventListener("input", show);
  show();
}
