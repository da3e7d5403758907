// The question-answer editor of Phase 2 and Phase 4: question and answer cards, answer kinds,
// the side panel's tabs, "use this result", "use selection as answer" and the task timer.
// Field names carry positions ("q-0-a-1-source_url"); they are renumbered after every move
// so the order on screen is the order saved.
(function () {
  "use strict";

  const form = document.querySelector("form[data-qa-editor]");
  if (!form) return;
  const questions = document.getElementById("questions");
  const questionTemplate = document.getElementById("question-template");
  const answerTemplate = document.getElementById("answer-template");
  // Rules the server owns (annotation/evidence.py), rendered onto the form as data attributes
  // so this script never keeps a copy that could drift from them.
  const MAX_ANSWERS = Number(form.dataset.maxAnswers);
  const METADATA_MEDIUM = form.dataset.metadataMedium;
  const METADATA_URL = form.dataset.metadataUrl;
  // The answer types and media written out below ("Extractive", "Web text") are the AVeriTeC
  // format's own words (annotation/vocabulary.py), which the dataset fixes; no rule is in them.
  let lastAnswer = null; // the answer card the annotator last worked in

  const changed = () => form.dispatchEvent(new Event("change", { bubbles: true }));

  function renumber() {
    // Renaming a checked radio into a group another card still uses would uncheck that
    // card's radio (one checked radio per name): remember them all and re-check after.
    const checked = [...questions.querySelectorAll("input[type=radio]:checked")];
    questions.querySelectorAll("[data-question]").forEach((card, qi) => {
      card.querySelector("[data-question-number]").textContent = qi + 1;
      const answers = card.querySelectorAll("[data-answer]");
      card.querySelectorAll("[name],[id],[for]").forEach((el) => {
        for (const attr of ["name", "id", "for"]) {
          const value = el.getAttribute(attr);
          if (value && value.startsWith("q-")) {
            el.setAttribute(attr, value.replace(/^q-(\d+|__q__)/, `q-${qi}`));
          }
        }
      });
      answers.forEach((answer, ai) => {
        answer.querySelector("[data-answer-number]").textContent = ai + 1;
        answer.querySelectorAll("[name],[id],[for]").forEach((el) => {
          for (const attr of ["name", "id", "for"]) {
            const value = el.getAttribute(attr);
            if (value && value.startsWith("q-")) {
              el.setAttribute(attr, value.replace(/^q-(\d+)-a-(\d+|__a__)/, `q-${qi}-a-${ai}`));
            }
          }
        });
      });
      const addAnswer = card.querySelector("[data-add-answer]");
      addAnswer.disabled = answers.length >= MAX_ANSWERS;
      card.querySelectorAll("[data-remove-answer]").forEach((b) => { b.disabled = answers.length === 1; });
    });
    const all = questions.querySelectorAll("[data-question]");
    all.forEach((card) => { card.querySelector("[data-remove-question]").disabled = all.length === 1; });
    checked.forEach((radio) => { radio.checked = true; });
  }

  function showKind(answer) {
    const checked = answer.querySelector("[data-answer-type]:checked");
    const kind = checked ? checked.value : "Extractive";
    answer.dataset.type = kind;
    const medium = answer.querySelector("[data-source-medium]");
    const url = answer.querySelector("[data-source-url]");
    if (medium && url && medium.value === METADATA_MEDIUM) url.value = METADATA_URL;
  }

  function fromTemplate(template) {
    const fragment = template.content.cloneNode(true);
    return fragment.firstElementChild;
  }

  function addQuestion() {
    const card = fromTemplate(questionTemplate);
    questions.appendChild(card);
    renumber();
    card.querySelectorAll("[data-answer]").forEach(showKind);
    if (window.htmx) window.htmx.process(card); // the source check on its address field
    card.querySelector("[data-question-text]").focus();
    changed();
  }

  function addAnswer(card) {
    const list = card.querySelector("[data-answers]");
    if (list.querySelectorAll("[data-answer]").length >= MAX_ANSWERS) return;
    const answer = fromTemplate(answerTemplate);
    list.appendChild(answer);
    renumber();
    showKind(answer);
    if (window.htmx) window.htmx.process(answer);
    lastAnswer = answer;
    changed();
  }

  form.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) return;
    const card = button.closest("[data-question]");
    if (button.matches("[data-add-question]")) addQuestion();
    else if (button.matches("[data-add-answer]")) addAnswer(card);
    else if (button.matches("[data-remove-question]") && questions.children.length > 1) {
      card.remove();
      renumber();
      changed();
    } else if (button.matches("[data-remove-answer]")) {
      const answers = card.querySelectorAll("[data-answer]");
      if (answers.length > 1) {
        button.closest("[data-answer]").remove();
        renumber();
        changed();
      }
    } else if (button.matches("[data-move-question]")) {
      const up = button.dataset.moveQuestion === "up";
      const sibling = up ? card.previousElementSibling : card.nextElementSibling;
      if (sibling) {
        if (up) questions.insertBefore(card, sibling);
        else questions.insertBefore(sibling, card);
        renumber();
        changed();
      }
    }
  });

  form.addEventListener("change", (event) => {
    const answer = event.target.closest("[data-answer]");
    if (answer && (event.target.matches("[data-answer-type]") || event.target.matches("[data-source-medium]"))) {
      showKind(answer);
    }
  });
  form.addEventListener("focusin", (event) => {
    const answer = event.target.closest("[data-answer]");
    if (answer) lastAnswer = answer;
  });

  function targetAnswer() {
    if (lastAnswer && document.body.contains(lastAnswer)) return lastAnswer;
    return questions.querySelector("[data-answer]:last-of-type");
  }

  function setKind(answer, kind) {
    const radio = answer.querySelector(`[data-answer-type][value="${kind}"]`);
    if (radio) radio.checked = true;
    showKind(answer);
  }

  // --- Phone: editor or search, one tap apart ---------------------------------------------
  const split = document.getElementById("editor-split");
  function showView(view) {
    if (!split) return;
    split.dataset.phoneView = view;
    document.querySelectorAll("[data-phone-view]").forEach((link) => {
      link.classList.toggle("active", link.dataset.phoneView === view);
    });
  }
  // Without JavaScript both panes stay on the page and the links are plain anchors.
  showView("form");
  document.querySelectorAll("a[data-phone-view]").forEach((link) => {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      showView(link.dataset.phoneView);
      split.scrollIntoView({ block: "start" });
    });
  });
  // After a result fills an answer, bring that answer into view and make the change plain.
  function reveal(answer) {
    showView("form");
    answer.scrollIntoView({ block: "center" });
    answer.classList.add("filled");
    setTimeout(() => answer.classList.remove("filled"), 2500);
  }

  // --- Side panel -----------------------------------------------------------------------
  document.addEventListener("click", (event) => {
    const tab = event.target.closest("[data-tab]");
    if (tab) {
      document.querySelectorAll("[data-tab]").forEach((t) => t.classList.toggle("active", t === tab));
      document.querySelectorAll(".tab-body").forEach((body) => { body.hidden = body.id !== tab.dataset.tab; });
      const frame = document.getElementById("article-frame");
      if (tab.dataset.tab === "article-tab" && frame && !frame.src) frame.src = frame.dataset.src;
      return;
    }
    const use = event.target.closest("[data-use-result]");
    if (use) {
      const answer = targetAnswer();
      if (!answer) return;
      const address = answer.querySelector("[data-source-url]");
      address.value = use.dataset.useResult;
      address.dispatchEvent(new Event("change", { bubbles: true })); // runs the source check
      const medium = answer.querySelector("[data-source-medium]");
      if (!medium.value || medium.value === METADATA_MEDIUM) medium.value = "Web text";
      if (answer.dataset.type === "Unanswerable") setKind(answer, "Extractive");
      reveal(answer);
      changed();
      return;
    }
    const selection = event.target.closest("[data-use-selection]");
    if (selection) {
      const text = window.getSelection().toString().trim();
      const answer = targetAnswer();
      const page = document.getElementById("opened-page");
      if (!text || !answer) return;
      setKind(answer, "Extractive");
      answer.querySelector("[data-answer-text]").value = text;
      const address = answer.querySelector("[data-source-url]");
      address.value = page.dataset.openedUrl;
      address.dispatchEvent(new Event("change", { bubbles: true })); // runs the source check
      const medium = answer.querySelector("[data-source-medium]");
      if (!medium.value) medium.value = "Web text";
      changed();
    }
  });

  // Opening a result shows it in its tab.
  document.body.addEventListener("htmx:afterSwap", (event) => {
    if (event.detail.target && event.detail.target.id === "opened-page") {
      document.querySelector('[data-tab="page-tab"]').click();
    }
  });
  document.addEventListener("selectionchange", () => {
    const button = document.querySelector("[data-use-selection]");
    if (!button) return;
    const selection = window.getSelection();
    const inside = selection.rangeCount && document.getElementById("opened-page").contains(selection.anchorNode);
    button.disabled = !(inside && selection.toString().trim());
  });

  // --- Shortcut and timer ---------------------------------------------------------------
  document.addEventListener("keydown", (event) => {
    if (event.altKey && event.shiftKey && (event.key === "Q" || event.key === "q")) {
      event.preventDefault();
      addQuestion();
    }
  });
  const timer = document.getElementById("timer");
  if (timer && timer.dataset.started) {
    const started = new Date(timer.dataset.started);
    const text = timer.querySelector("[data-timer-text]");
    const tick = () => {
      const seconds = Math.max(0, Math.floor((Date.now() - started) / 1000));
      text.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
      // The guidelines suggest deciding after about ten minutes without enough evidence.
      timer.classList.toggle("long", seconds >= 600);
      timer.title = seconds >= 600 ? "Ten minutes: consider giving a verdict with what you have." : "Time on this task";
    };
    tick();
    setInterval(tick, 1000);
  }

  renumber();
  questions.querySelectorAll("[data-answer]").forEach(showKind);
})();
