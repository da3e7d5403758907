// Behaviour shared by the annotation editors: claim cards (add, remove, reorder), autosave
// bookkeeping, keyboard shortcuts, the date helper, the article timing beacon and the tour.
// Saving itself is htmx (hx-post on the form); this file only keeps the form consistent.
(function () {
  "use strict";

  const form = document.querySelector("form[data-editor]");
  let dirty = false;

  // htmx asks this before each autosave: only send when something changed and the page
  // has not learnt that another tab saved newer work.
  window.editorDirty = function () {
    return dirty && !document.querySelector("[data-conflict]");
  };

  if (form) {
    form.addEventListener("input", () => { dirty = true; });
    form.addEventListener("change", () => { dirty = true; });
    form.addEventListener("htmx:beforeRequest", (event) => {
      if (event.detail.elt === form) dirty = false;
    });
    form.addEventListener("htmx:responseError", (event) => {
      if (event.detail.elt === form && event.detail.xhr.status !== 409) dirty = true;
    });
    form.addEventListener("htmx:sendError", () => { dirty = true; });
    // A real submit must not race an autosave that would bump the version under it: wait
    // for the save in flight, then submit with the version it returned.
    form.addEventListener("submit", (event) => {
      if (form.classList.contains("htmx-request")) {
        event.preventDefault();
        const submitter = event.submitter;
        form.addEventListener("htmx:afterRequest", () => form.requestSubmit(submitter), { once: true });
        return;
      }
      dirty = false;
    });
  }

  // --- Claim cards -------------------------------------------------------------------------
  const cards = document.getElementById("claims");
  const template = document.getElementById("claim-template");
  const prefix = "claims";

  function renumber() {
    if (!cards) return;
    // Renaming a checked radio into a group another card still uses would uncheck that
    // card's radio (one checked radio per name): remember them all and re-check after.
    const checked = [...cards.querySelectorAll("input[type=radio]:checked")];
    const all = cards.querySelectorAll("[data-claim-card]");
    all.forEach((card, index) => {
      card.querySelectorAll("[name],[id],[for],[hx-get]").forEach((el) => {
        for (const attr of ["name", "id", "for", "hx-get"]) {
          const value = el.getAttribute(attr);
          if (value) {
            el.setAttribute(attr, value.replace(new RegExp(prefix + "-(\\d+|__prefix__)-"), `${prefix}-${index}-`));
          }
        }
        if (el.classList.contains("warnings")) el.id = `warnings-${index}`;
      });
      const number = card.querySelector("[data-claim-number]");
      if (number) number.textContent = index + 1;
      const remove = card.querySelector("[data-remove-claim]");
      if (remove) remove.disabled = all.length === 1;
    });
    checked.forEach((radio) => { radio.checked = true; });
    const total = document.getElementById(`id_${prefix}-TOTAL_FORMS`);
    if (total) total.value = all.length;
    dirty = true;
  }

  function addClaim() {
    if (!cards || !template) return;
    const fragment = template.content.cloneNode(true);
    cards.appendChild(fragment);
    const card = cards.lastElementChild;
    renumber();
    if (window.htmx) window.htmx.process(card);
    const text = card.querySelector("textarea");
    if (text) text.focus();
  }

  document.addEventListener("click", (event) => {
    const target = event.target.closest("button");
    if (!target) return;
    if (target.matches("[data-add-claim]")) {
      addClaim();
    } else if (target.matches("[data-remove-claim]")) {
      const card = target.closest("[data-claim-card]");
      if (card && cards.querySelectorAll("[data-claim-card]").length > 1) {
        card.remove();
        renumber();
      }
    } else if (target.matches("[data-move]")) {
      const card = target.closest("[data-claim-card]");
      const sibling = target.dataset.move === "up" ? card.previousElementSibling : card.nextElementSibling;
      if (sibling && sibling.matches("[data-claim-card]")) {
        if (target.dataset.move === "up") cards.insertBefore(card, sibling);
        else cards.insertBefore(sibling, card);
        renumber();
      }
    } else if (target.matches("[data-fill-date]")) {
      // The date picker of the card the helper belongs to (ids change when cards move).
      const card = target.closest("[data-claim-card]");
      const input = card && card.querySelector("input[name$='-claim_date']");
      if (input) {
        input.value = target.dataset.value;
        dirty = true;
        input.dispatchEvent(new Event("change", { bubbles: true }));
      }
    }
  });

  if (cards) {
    renumber();
    dirty = false; // numbering the cards on load is not a change worth saving
  }

  // --- Keyboard shortcuts ------------------------------------------------------------------
  document.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      const submit = document.querySelector("[data-shortcut-submit]");
      if (submit) {
        event.preventDefault();
        submit.click();
      }
    } else if (event.altKey && event.shiftKey && (event.key === "N" || event.key === "n")) {
      event.preventDefault();
      addClaim();
    }
  });

  // --- Article timing: when the frame first finishes loading --------------------------------
  const frame = document.getElementById("article-frame");
  if (frame && frame.dataset.loadedUrl) {
    frame.addEventListener("load", () => {
      const token = document.querySelector("[name=csrfmiddlewaretoken]");
      fetch(frame.dataset.loadedUrl, {
        method: "POST",
        headers: { "X-CSRFToken": token ? token.value : "" },
        credentials: "same-origin",
      });
    }, { once: true });
  }

  // --- First-time tour ---------------------------------------------------------------------
  const tour = document.getElementById("tour");
  const stepsNode = document.getElementById("tour-steps");
  if (tour && stepsNode) {
    const steps = JSON.parse(stepsNode.textContent);
    const text = tour.querySelector("[data-tour-text]");
    let at = 0;
    let highlighted = null;
    const finish = () => {
      tour.hidden = true;
      if (highlighted) highlighted.classList.remove("tour-highlight");
      const token = document.querySelector("[name=csrfmiddlewaretoken]");
      fetch(tour.dataset.doneUrl, {
        method: "POST",
        headers: { "X-CSRFToken": token ? token.value : "" },
        credentials: "same-origin",
      });
    };
    const show = () => {
      if (highlighted) highlighted.classList.remove("tour-highlight");
      const [target, words] = steps[at];
      highlighted = document.querySelector(target);
      if (highlighted) {
        highlighted.classList.add("tour-highlight");
        highlighted.scrollIntoView({ block: "nearest" });
      }
      text.textContent = `${at + 1}/${steps.length} · ${words}`;
      tour.querySelector("[data-tour-next]").textContent = at === steps.length - 1 ? "Done" : "Next";
    };
    tour.querySelector("[data-tour-next]").addEventListener("click", () => {
      at += 1;
      if (at >= steps.length) finish();
      else show();
    });
    tour.querySelector("[data-tour-skip]").addEventListener("click", finish);
    tour.hidden = false;
    show();
  }
})();
