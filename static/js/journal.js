// The browser journal of the editors (issue 22): one record per tab and task, in IndexedDB.
//
// Every change a tab makes is written at once to its own record (key: the task's prefix and
// the tab's id, fresh on each page load), so tabs never overwrite or delete each other's
// copy. IndexedDB, unlike localStorage (which Chromium writes to disk in batches seconds
// later), has the record on disk once the write completes: a killed browser keeps it.
// A record is removed only when the server answered that it stored exactly that content
// (a 200, or a 409 naming the revision that keeps it).
//
// Pages without an editor that show a task (the read-only page after a hand-in) send what
// is left in the journal of that task to the server, where it is kept as a revision.
(function () {
  "use strict";

  const DB_NAME = "averitec-journal";
  const STORE = "journals";
  let opened = null;

  function database() {
    if (!window.indexedDB) return Promise.reject(new Error("this browser has no IndexedDB"));
    if (!opened) {
      opened = new Promise((resolve, reject) => {
        const request = window.indexedDB.open(DB_NAME, 1);
        request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: "key" });
        request.onsuccess = () => resolve(request.result);
        request.onerror = () => reject(request.error);
      });
    }
    return opened;
  }

  function run(mode, work) {
    return database().then((db) => new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode, { durability: "strict" });
      const request = work(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request ? request.result : undefined);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error);
    }));
  }

  // localStorage as well: it is handed to the browser at once, so a tab closed a moment
  // after a keystroke keeps it even if the IndexedDB write had not finished; IndexedDB is
  // what survives the whole browser being killed.
  function local(action) {
    try { return action(window.localStorage); } catch (error) { return null; }
  }

  const journal = {
    put(record) {
      local((storage) => storage.setItem(record.key, JSON.stringify(record)));
      return run("readwrite", (store) => {
        const request = store.put(record);
        if (store.transaction.commit) store.transaction.commit();
        return request;
      });
    },
    remove(key) {
      local((storage) => storage.removeItem(key));
      return run("readwrite", (store) => store.delete(key));
    },
    // Every record of one task (all tabs), oldest first; the newer copy of each wins.
    ofTask(prefix) {
      const found = {};
      local((storage) => {
        for (let i = 0; i < storage.length; i += 1) {
          const key = storage.key(i);
          if (key && key.startsWith(`${prefix}#`)) {
            try { found[key] = JSON.parse(storage.getItem(key)); } catch (error) { /* not ours */ }
          }
        }
      });
      const merge = (rows) => {
        (rows || []).filter((row) => row.prefix === prefix).forEach((row) => {
          if (!found[row.key] || found[row.key].at < row.at) found[row.key] = row;
        });
        return Object.values(found).filter(Boolean).sort((a, b) => a.at - b.at);
      };
      return run("readonly", (store) => store.getAll()).then(merge, () => merge([]));
    },
  };
  window.averitecJournal = journal;

  // --- A task page without an editor: send what the journal still holds ------------------
  const flush = document.querySelector("[data-journal-flush]");
  if (!flush) return;
  journal.ofTask(flush.dataset.draftKey).then((rows) => {
    rows.forEach((row) => {
      const body = new URLSearchParams(row.body);
      body.set("from_journal", "1");
      fetch(flush.dataset.saveUrl, {
        method: "POST",
        body,
        headers: { "X-CSRFToken": window.averitec.csrfToken(), "HX-Request": "true" },
        credentials: "same-origin",
      }).then((response) => {
        const revision = response.headers.get("X-Revision");
        if (!revision) return;
        journal.remove(row.key);
        if (response.headers.get("X-Handed-In")) return; // it is what was handed in
        const note = document.getElementById("journal-kept");
        if (note) {
          note.hidden = false;
          const list = note.querySelector("[data-kept-revisions]");
          const item = document.createElement("li");
          item.textContent = `typed at ${new Date(row.at).toLocaleTimeString()}: kept as revision ${revision}`;
          list.appendChild(item);
        }
      }).catch(() => { /* offline: it stays in the journal for the next visit */ });
    });
  }).catch(() => {});
})();
