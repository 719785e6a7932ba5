// Follows a task run's output on its page: the API's log stream (server-sent events), resumed
// after the last line the page already shows. No inline script anywhere (the CSP forbids it).
(function () {
  "use strict";
  var open = [];

  function closeAll() {
    open.forEach(function (source) { source.close(); });
    open = [];
  }

  function follow(log) {
    if (log.dataset.following || log.dataset.finished === "true") { return; }
    log.dataset.following = "yes";
    var state = document.getElementById("log-state");
    var source = new EventSource(log.dataset.stream + "?after=" + encodeURIComponent(log.dataset.after || "0"));
    open.push(source);
    source.onmessage = function (event) {
      var atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      log.appendChild(document.createTextNode(event.data + "\n"));
      if (atBottom) { log.scrollTop = log.scrollHeight; }
    };
    source.addEventListener("end", function (event) {
      source.close();
      var status = JSON.parse(event.data).status;
      log.dataset.finished = "true";
      if (state) { state.textContent = "Finished (" + status + ")."; }
      var badge = document.getElementById("task-status");
      if (badge) { badge.textContent = status; badge.className = "badge status-" + status; }
    });
    source.addEventListener("truncated", function () {
      source.close();
      if (state) { state.textContent = "Output too long to follow here; the logs API has all of it."; }
    });
    source.onerror = function () {
      // The browser reconnects by itself (resuming after the last line); a refused stream closes.
      if (source.readyState === EventSource.CLOSED && state) { state.textContent = "Could not follow the output."; }
    };
  }

  function start() {
    var log = document.getElementById("log");
    if (log) { follow(log); }
  }

  document.addEventListener("DOMContentLoaded", start);
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target === document.body) { closeAll(); }  // leaving the page
  });
  document.addEventListener("htmx:afterSettle", start);
})();
