// The printable report's Print button (a script file: the CSP refuses onclick attributes).
(function () {
  "use strict";
  document.addEventListener("click", (event) => {
    if (event.target.closest("[data-print]")) window.print();
  });
})();
