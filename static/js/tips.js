// Hints behind the "?" marks open on a tap or click, not only on a mouse hover: touch
// screens never show a title attribute. The hint text stays in the title it came from.
(function () {
  "use strict";
  let open = null;
  const close = () => {
    if (open) open.remove();
    open = null;
  };
  document.addEventListener("click", (event) => {
    const tip = event.target.closest(".tip");
    if (!tip) {
      if (open && !open.contains(event.target)) close();
      return;
    }
    // A tip sits inside a label: a tap must not also tick or focus what the label names.
    event.preventDefault();
    const holder = tip.closest("[title]");
    const shown = open && open.previousElementSibling === tip;
    close();
    if (shown || !holder || !holder.title) return;
    open = document.createElement("span");
    open.className = "tip-popup";
    open.setAttribute("role", "tooltip");
    open.textContent = holder.title;
    tip.after(open);
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close();
  });
})();
