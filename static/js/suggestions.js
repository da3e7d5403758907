// Pre-suggestions: fill a field only when the annotator clicks, and log what they did with
// each suggestion (accepted, then edited if the text was changed, or ignored).
(function () {
  const box = document.querySelector("[data-suggestions-box]");
  if (!box) return;

  function log(item, outcome, finalText) {
    const body = new URLSearchParams({ outcome: outcome, final_text: finalText || "" });
    return fetch(item.dataset.logUrl, {
      method: "POST",
      headers: { "X-CSRFToken": window.averitec.csrfToken() },
      body: body,
      credentials: "same-origin",
    });
  }

  function textOf(item) {
    return item.querySelector("[data-suggestion-text]").textContent.trim();
  }

  // After a suggestion lands in a field, a later change of that field counts as an edit.
  function watchEdits(item, field, original) {
    field.addEventListener("change", function () {
      if (field.value.trim() !== original) log(item, "edited", field.value.trim());
    });
  }

  function used(item, button) {
    item.dataset.used = "1";
    item.classList.add("used");
    button.disabled = true;
  }

  function lastQuestionText() {
    const focused = box.dataset.lastQuestion && document.getElementById(box.dataset.lastQuestion);
    if (focused) return focused.value.trim();
    const all = document.querySelectorAll("[data-question-text]");
    return all.length ? all[all.length - 1].value.trim() : "";
  }

  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("[data-question-text]")) {
      box.dataset.lastQuestion = event.target.id;
    }
  });

  document.addEventListener("click", function (event) {
    const button = event.target.closest("button");
    if (!button || !box.contains(button)) return;
    const item = button.closest("[data-suggestion]");

    if (button.matches("[data-use-question]")) {
      const text = textOf(item);
      document.getElementById("add-question").click();
      const fields = document.querySelectorAll("#questions [data-question-text]");
      const field = fields[fields.length - 1];
      field.value = text;
      field.dispatchEvent(new Event("input", { bubbles: true }));
      used(item, button);
      log(item, "accepted", text);
      watchEdits(item, field, text);
    } else if (button.matches("[data-use-query]")) {
      const text = textOf(item);
      const field = document.querySelector(".search-form input[name=q]");
      field.value = text;
      field.focus();
      used(item, button);
      log(item, "accepted", text);
      watchEdits(item, field, text);
    } else if (button.matches("[data-use-label]")) {
      const card = document.activeClaimCard || document.querySelector("[data-claim-card]");
      const input = card && card.querySelector(
        'input[type=checkbox][value="' + CSS.escape(item.dataset.label) + '"]'
      );
      if (input && !input.checked) input.click();
      used(item, button);
      log(item, "accepted", item.dataset.label);
    } else if (button.matches("[data-mark-duplicate]")) {
      used(item, button);
      log(item, "accepted", textOf(item));
      const report = document.getElementById("report") || document.getElementById("skip");
      if (report) report.open = true;
    } else if (button.matches("[data-use-sentence]")) {
      const sentence = document.querySelectorAll("#opened-page [data-sentences] > p")[
        Number(item.dataset.sentence)
      ];
      if (sentence) {
        sentence.scrollIntoView({ block: "center" });
        const range = document.createRange();
        range.selectNodeContents(sentence);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        document.dispatchEvent(new Event("selectionchange"));
      }
      used(item, button);
      log(item, "accepted", textOf(item));
    } else if (button.matches("[data-dismiss-suggestions]")) {
      const panel = button.closest("[data-suggestions-panel]");
      panel.querySelectorAll("[data-suggestion]:not([data-used])").forEach(function (rest) {
        log(rest, "ignored");
      });
      panel.innerHTML = '<p class="muted">Suggestions hidden.</p>';
    } else if (button.matches("[data-suggest-sentences]")) {
      const page = document.getElementById("opened-page");
      const url = page ? page.dataset.openedUrl : "";
      const target = document.getElementById("sentence-suggestions");
      const question = lastQuestionText();
      if (!url || !question) {
        target.innerHTML = '<p class="warning">Open a page and write the question first.</p>';
        return;
      }
      const address = button.dataset.suggestSentences + "?" +
        new URLSearchParams({ url: url, question: question });
      htmx.ajax("GET", address, { target: "#sentence-suggestions", swap: "outerHTML" });
    }
  });

  // P1: the claim being written is what duplicates and labels are looked up for.
  document.addEventListener("focusin", function (event) {
    const card = event.target.closest && event.target.closest("[data-claim-card]");
    if (card) document.activeClaimCard = card;
  });
  document.body.addEventListener("htmx:configRequest", function (event) {
    if (!event.detail.elt.matches || !event.detail.elt.matches("[data-suggest]")) return;
    const card = document.activeClaimCard || document.querySelector("[data-claim-card]");
    const text = card && card.querySelector("textarea");
    if (text && text.value.trim()) event.detail.parameters.text = text.value.trim();
    // Suggestions only use claims made before this one: its date decides which.
    ["claim_date", "speaker", "reporting_source"].forEach(function (name) {
      const field = card && card.querySelector('[name$="-' + name + '"]');
      if (field && field.value.trim()) event.detail.parameters[name] = field.value.trim();
    });
  });
})();
