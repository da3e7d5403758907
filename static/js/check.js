// The quality-check screen: "unreadable" needs no verdict, so it clears and disables it.
(function () {
  "use strict";
  const unreadable = document.getElementById("unreadable");
  if (!unreadable) return;
  const verdicts = document.querySelectorAll("#verdict input[name=verdict]");
  const sync = () => {
    verdicts.forEach((radio) => {
      radio.disabled = unreadable.checked;
      if (unreadable.checked) radio.checked = false;
    });
  };
  unreadable.addEventListener("change", sync);
  sync();
})();
