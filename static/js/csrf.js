// The CSRF token for scripts' own fetch() calls, read in one place: the body's hx-headers,
// which base.html renders for htmx (django-htmx's way), so fetch() sends what htmx sends.
(function () {
  "use strict";

  window.averitec = window.averitec || {};
  window.averitec.csrfToken = function () {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (error) {
      return "";
    }
  };
})();
