// Behaviour shared by the annotation editors: claim cards (add, remove, reorder), autosave
// bookkeeping, keyboard shortcuts, the date helper, the article timing beacon and the tour.
// Saving itself is htmx (hx-post on the form); this file only keeps the form consistent.
(function () {
  "use strict";

  const form = document.querySelector("form[data-editor]");
  let dirty = false;

  // One id per page load: the server keeps every hand-in as a revision of the tab it came
  // from, so two tabs of one task are told apart in the list of revisions.
  const tabField = document.getElementById("tab-id");
  if (tabField) {
    tabField.value = (window.crypto && window.crypto.randomUUID)
      ? window.crypto.randomUUID()
      : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  }

  // Whether an autosave is due: something changed and the page has not learnt that another
  // tab saved newer work.
  window.editorDirty = function () {
    return dirty && !document.querySelector("[data-conflict]");
  };

  // htmx posts the form on an "autosave" event (hx-trigger="autosave"); this file decides
  // when: 400 ms after focus leaves a field and every 5 s, whenever a save is due. The
  // decision lives here because htmx trigger filters need eval, which the CSP refuses.
  function requestSave() {
    if (form && !leaving && window.editorDirty()) form.dispatchEvent(new CustomEvent("autosave"));
  }

  // Autosave state for leaving the page: a save in flight or one that failed means the
  // server does not have what is on screen yet.
  let saveFailed = false;
  let leaving = false; // a submit or an explicit choice is navigating away on purpose

  // What the form holds, as the autosave would post it (without the csrf token).
  function serialised() {
    const data = new URLSearchParams(new FormData(form));
    data.delete("csrfmiddlewaretoken");
    return data;
  }
  // The typing itself, without what says where and when it was sent.
  function content(data) {
    const copy = new URLSearchParams(data);
    ["draft_version", "keep_version", "tab_id", "closing"].forEach((name) => copy.delete(name));
    return copy.toString();
  }

  // --- This tab's journal (static/js/journal.js) -------------------------------------------
  // Every change is written at once to this tab's own record; it goes only when the server
  // said it stored exactly that content. Other tabs' records are never touched here except
  // by the annotator's choice, or when they hold what the server already shows.
  const journal = window.averitecJournal;
  const journalPrefix = form && form.dataset.draftKey;
  const tabId = tabField ? tabField.value : "";
  const journalKey = journalPrefix ? `${journalPrefix}#${tabId}` : null;
  let sentContent = null;

  function keepLocally() {
    if (!journal || !journalKey) return;
    const record = { key: journalKey, prefix: journalPrefix, tab: tabId, at: Date.now(), body: serialised().toString() };
    journal.put(record).catch(() => { /* storage refused: the server copy still works */ });
  }
  function acknowledged(sent) {
    if (journal && journalKey && sent !== null && content(serialised()) === sent) {
      journal.remove(journalKey).catch(() => {});
    }
  }
  function forgetLocally() {
    if (journal && journalKey) journal.remove(journalKey).catch(() => {});
  }

  // The status line says what is true: not saved while saves fail, saved only once the
  // server answered.
  function showNotSaved() {
    const status = document.getElementById("save-status");
    if (!status || status.hasAttribute("data-conflict")) return;
    status.textContent = navigator.onLine
      ? "Not saved: the server did not answer (kept in this browser)"
      : "Not saved: offline (kept in this browser)";
    status.classList.add("not-saved");
  }

  function saveUrl() { return form.getAttribute("hx-post"); }

  if (form) {
    let focusTimer = null;
    form.addEventListener("focusout", () => {
      clearTimeout(focusTimer);
      focusTimer = setTimeout(requestSave, 400);
    });
    window.setInterval(requestSave, 5000);
    const changed = () => {
      dirty = true;
      keepLocally();
      if (!navigator.onLine) showNotSaved();
    };
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    window.addEventListener("offline", () => { if (dirty || saveFailed) showNotSaved(); });
    window.addEventListener("online", requestSave);
    form.addEventListener("htmx:beforeRequest", (event) => {
      if (event.detail.elt !== form) return;
      // An autosave queued behind the one in flight must not go out after a submit has
      // started: it would bump the version under the submit, which then looks stale.
      if (leaving) { event.preventDefault(); return; }
      sentContent = content(serialised());
      dirty = false;
    });
    form.addEventListener("htmx:afterRequest", (event) => {
      if (event.detail.elt !== form) return;
      const xhr = event.detail.xhr;
      const status = xhr.status;
      saveFailed = !(status >= 200 && status < 300) && status !== 409;
      // Stored on the server (as the draft, or as a revision beside newer work).
      if (status === 200 || (status === 409 && xhr.getResponseHeader("X-Revision"))) acknowledged(sentContent);
      if (saveFailed) showNotSaved();
    });
    form.addEventListener("htmx:responseError", (event) => {
      if (event.detail.elt === form && event.detail.xhr.status !== 409) dirty = true;
    });
    form.addEventListener("htmx:sendError", () => { dirty = true; saveFailed = true; showNotSaved(); });
    // A real submit must not race an autosave that would bump the version under it: wait
    // for the save in flight, then submit with the version it returned.
    form.addEventListener("submit", (event) => {
      if (form.classList.contains("htmx-request")) {
        event.preventDefault();
        const submitter = event.submitter;
        form.addEventListener("htmx:afterRequest", () => form.requestSubmit(submitter), { once: true });
        return;
      }
      // Keeping this tab's version with JavaScript: adopt the newest version and save now,
      // instead of submitting (without JavaScript the button submits and the server decides).
      if (event.submitter && event.submitter.hasAttribute("data-keep-mine")) {
        event.preventDefault();
        keepMine(event.submitter.dataset.keepMine);
        return;
      }
      const choice = event.submitter && form.querySelector("[data-discards]:checked");
      if (choice && !window.confirm(choice.dataset.discards)) {
        event.preventDefault();
        return;
      }
      // The journal keeps what is submitted until a page of this task (the editor again
      // after a refusal, or the read-only page) finds the server has it.
      keepLocally();
      dirty = false;
      leaving = true;
    });

    // Leaving the page: send what is unsaved with a request that outlives the page, and
    // warn while the server does not have it. The journal keeps it either way.
    window.addEventListener("pagehide", () => {
      if (!dirty || leaving || document.querySelector("[data-conflict]")) return;
      const data = new FormData(form);
      data.set("closing", "1");
      if (navigator.sendBeacon && navigator.sendBeacon(saveUrl(), data)) dirty = false;
    });
    window.addEventListener("beforeunload", (event) => {
      if (leaving) return;
      if (dirty || saveFailed || form.classList.contains("htmx-request") || document.querySelector("#conflict-panel [data-conflict]")) {
        event.preventDefault();
        event.returnValue = "";
      }
    });

    // Text that other tabs, or this task's pages before a crash or a closed window, kept
    // and the server never confirmed: offer each back, with when it was typed. A record
    // that holds what the page shows is already on the server: nothing to say.
    if (journal && journalPrefix) {
      const here = content(serialised());
      journal.ofTask(journalPrefix).then((rows) => {
        const offered = rows.filter((row) => {
          if (row.key === journalKey) return false;
          if (content(row.body) === here) { journal.remove(row.key).catch(() => {}); return false; }
          return true;
        });
        offerBack(offered, here);
      }).catch(() => {});
    }
  }

  // The texts of a journal record that differ from the page, for the offer's preview.
  function differences(body, here) {
    const mine = new URLSearchParams(here);
    const words = [];
    new URLSearchParams(body).forEach((value, name) => {
      if (value.trim() && mine.getAll(name).indexOf(value) === -1 && !/^\d+$/.test(value)) words.push(value.trim());
    });
    const text = words.join(" · ");
    return text.length > 160 ? `${text.slice(0, 160)}…` : text;
  }

  function offerBack(rows, here) {
    const banner = document.getElementById("local-draft");
    const list = banner && banner.querySelector("[data-local-list]");
    if (!banner || !list || !rows.length) return;
    list.innerHTML = "";
    rows.forEach((row) => {
      const item = document.createElement("li");
      item.dataset.localKey = row.key;
      const when = document.createElement("strong");
      when.textContent = new Date(row.at).toLocaleTimeString();
      const words = document.createElement("span");
      words.className = "muted";
      words.textContent = ` ${differences(row.body, here) || "(the same words, in another order or with other choices)"} `;
      const restore = document.createElement("button");
      restore.type = "button";
      restore.className = "small";
      restore.dataset.restoreLocal = row.key;
      restore.textContent = "Put it back";
      const discard = document.createElement("button");
      discard.type = "button";
      discard.className = "small secondary";
      discard.dataset.discardLocal = row.key;
      discard.textContent = "Discard it";
      item.append(when, words, restore, " ", discard);
      list.appendChild(item);
    });
    banner.hidden = false;
  }

  function keepMine(version) {
    document.getElementById("draft-version").value = version;
    const panel = document.getElementById("conflict-panel");
    if (panel) panel.innerHTML = "";
    const status = document.getElementById("save-status");
    if (status) { status.removeAttribute("data-conflict"); status.classList.remove("conflict"); }
    dirty = true;
    requestSave();
  }

  // Replace elements by id with those of an HTML answer (the autosave fragment and its
  // out-of-band parts), for requests made outside htmx.
  function swapIn(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    [...template.content.children].forEach((node) => {
      const old = node.id && document.getElementById(node.id);
      if (old) {
        node.removeAttribute("hx-swap-oob");
        old.replaceWith(node);
        if (window.htmx) window.htmx.process(node);
      }
    });
  }

  function dropOffer(key) {
    const item = document.querySelector(`[data-local-key="${CSS.escape(key)}"]`);
    if (item) item.remove();
    const banner = document.getElementById("local-draft");
    if (banner && !banner.querySelector("[data-local-key]")) banner.hidden = true;
  }

  document.addEventListener("click", (event) => {
    const copy = event.target.closest("[data-copy-theirs]");
    if (copy && form) {
      const field = form.elements[copy.dataset.copyTheirs];
      if (field) {
        field.value = copy.dataset.value;
        field.dispatchEvent(new Event("input", { bubbles: true }));
        copy.textContent = "Copied";
      }
      return;
    }
    if (event.target.closest("[data-take-theirs]")) {
      // The annotator chose the saved version; this tab's text is kept on the server as the
      // revision the conflict screen names.
      forgetLocally();
      dirty = false;
      saveFailed = false;
      leaving = true;
      return;
    }
    const restore = event.target.closest("[data-restore-local]");
    if (restore && form && journal) {
      const key = restore.dataset.restoreLocal;
      journal.ofTask(journalPrefix).then((rows) => {
        const row = rows.find((r) => r.key === key);
        if (!row) return;
        const body = new URLSearchParams(row.body);
        body.set("tab_id", tabId);
        // Saved like any autosave, with the version the copy was built on: if another tab
        // saved since, the conflict screen lets the annotator choose.
        return fetch(saveUrl(), {
          method: "POST",
          body,
          headers: { "X-CSRFToken": window.averitec.csrfToken(), "HX-Request": "true" },
          credentials: "same-origin",
        }).then(async (response) => {
          if (response.headers.get("X-Revision")) {
            // Stored: as the draft, or (when another tab saved since) as a revision that
            // the reloaded editor names, to open and make the draft again by choice.
            await journal.remove(key).catch(() => {});
            leaving = true;
            window.location.reload();
          } else {
            swapIn(await response.text());
            dropOffer(key);
          }
        });
      }).catch(showNotSaved);
      return;
    }
    const discard = event.target.closest("[data-discard-local]");
    if (discard && journal) {
      journal.remove(discard.dataset.discardLocal).catch(() => {});
      dropOffer(discard.dataset.discardLocal);
    }
  });

  // A refused submit: bring the list of what to fix into view (its links lead to each field).
  const summary = document.getElementById("error-summary");
  if (summary) {
    summary.scrollIntoView({ block: "start" });
    summary.focus({ preventScroll: true });
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
      fetch(frame.dataset.loadedUrl, {
        method: "POST",
        headers: { "X-CSRFToken": window.averitec.csrfToken() },
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
      fetch(tour.dataset.doneUrl, {
        method: "POST",
        headers: { "X-CSRFToken": window.averitec.csrfToken() },
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
        if (highlighted.getBoundingClientRect().top < 0) highlighted.scrollIntoView({ block: "start" });
      }
      text.textContent = `${at + 1}/${steps.length} · ${words}`;
      tour.querySelector("[data-tour-next]").textContent = at === steps.length - 1 ? "Done" : "Next";
      place();
    };
    // The box sits in a corner; move it to the other end of the screen whenever it would
    // hide what it points at or the Submit button.
    const overlaps = (a, b) =>
      a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    const spots = ["", "tour--top", "tour--left", "tour--top tour--left", "tour--middle"];
    // A target taller than much of the screen (a whole claim card on a phone) cannot stay
    // uncovered: keep its top lines, where it starts, in sight.
    const guardedRect = (el) => {
      const r = el.getBoundingClientRect();
      if (r.height <= window.innerHeight * 0.4) return r;
      return { left: r.left, right: r.right, top: r.top, bottom: r.top + 80 };
    };
    const place = () => {
      const guarded = [highlighted, document.querySelector("#submit")].filter(Boolean);
      for (const spot of spots) {
        tour.classList.remove("tour--top", "tour--left", "tour--middle");
        if (spot) tour.classList.add(...spot.split(" "));
        const box = tour.getBoundingClientRect();
        if (!guarded.some((el) => overlaps(box, guardedRect(el)))) return;
      }
    };
    window.addEventListener("resize", () => { if (!tour.hidden) place(); });
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
