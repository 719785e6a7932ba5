// The orchestrator console's behaviour beyond htmx: following a task run's output (the API's log
// stream, server-sent events, resumed after the last line the page shows), searching it, jumping
// to its first error; holding a list's refresh while the operator works in it; counting the run
// page's polls. No inline script anywhere (the CSP forbids it).
(function () {
  "use strict";
  var open = [];
  var ERROR_LINE = /\b(error|errors|exception|traceback|fatal|failed|failure)\b/i;

  function closeAll() {
    open.forEach(function (source) { source.close(); });
    open = [];
  }

  function format(template, values) {
    return template.replace(/%\((\w+)\)s/g, function (_, name) { return values[name]; });
  }

  function appendLine(log, text) {
    var span = document.createElement("span");
    span.className = "line";
    span.textContent = text + "\n";
    log.appendChild(span);
    var query = document.getElementById("log-search");
    if (query && query.value) { highlight(span, query.value); }
  }

  function refreshFacts() {
    // The exit code and end time are known once the output ended: reload the facts in place.
    if (window.htmx && document.getElementById("task-facts")) {
      window.htmx.ajax("GET", window.location.pathname, {target: "#task-facts", select: "#task-facts", swap: "outerHTML"});
    }
  }

  function follow(log) {
    if (log.dataset.following || log.dataset.finished === "true") { return; }
    log.dataset.following = "yes";
    var state = document.getElementById("log-state");
    var source = new EventSource(log.dataset.stream + "?after=" + encodeURIComponent(log.dataset.after || "0"));
    open.push(source);
    source.onmessage = function (event) {
      var atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      appendLine(log, event.data);
      if (atBottom) { log.scrollTop = log.scrollHeight; }
    };
    source.addEventListener("end", function (event) {
      source.close();
      var status = JSON.parse(event.data).status;
      log.dataset.finished = "true";
      if (state) { state.textContent = format(state.dataset.finished, {status: status}); }
      refreshFacts();
    });
    source.addEventListener("truncated", function () {
      source.close();
      if (state) { state.textContent = state.dataset.tooLong; }
    });
    source.onerror = function () {
      // The browser reconnects by itself (resuming after the last line); a refused stream closes.
      if (source.readyState === EventSource.CLOSED && state) { state.textContent = state.dataset.lost; }
    };
  }

  // Search ------------------------------------------------------------------------------------

  function clearMarks(line) {
    if (line.querySelector("mark")) { line.textContent = line.textContent; }
  }

  function highlight(line, query) {
    var text = line.textContent, lower = text.toLowerCase(), needle = query.toLowerCase();
    var at = lower.indexOf(needle);
    if (at < 0) { return 0; }
    var found = 0, from = 0, parts = document.createDocumentFragment();
    while (at >= 0) {
      parts.appendChild(document.createTextNode(text.slice(from, at)));
      var mark = document.createElement("mark");
      mark.textContent = text.slice(at, at + needle.length);
      parts.appendChild(mark);
      found += 1;
      from = at + needle.length;
      at = lower.indexOf(needle, from);
    }
    parts.appendChild(document.createTextNode(text.slice(from)));
    line.textContent = "";
    line.appendChild(parts);
    return found;
  }

  function search(input, step) {
    var log = document.getElementById("log"), status = document.getElementById("log-matches");
    if (!log) { return; }
    var query = input.value;
    if (!step) {
      log.querySelectorAll(".line").forEach(function (line) { clearMarks(line); if (query) { highlight(line, query); } });
      input.dataset.at = "-1";
    }
    var marks = log.querySelectorAll("mark");
    if (!query) { status.textContent = ""; return; }
    if (!marks.length) { status.textContent = status.dataset.none; return; }
    var at = (parseInt(input.dataset.at || "-1", 10) + 1) % marks.length;
    input.dataset.at = String(at);
    marks.forEach(function (m) { m.classList.remove("current"); });
    marks[at].classList.add("current");
    marks[at].scrollIntoView({block: "nearest"});
    status.textContent = format(status.dataset.some, {at: at + 1, count: marks.length});
  }

  function firstError(button) {
    var log = document.getElementById("log"), status = document.getElementById("log-matches");
    var lines = log ? log.querySelectorAll(".line") : [];
    for (var i = 0; i < lines.length; i += 1) {
      if (ERROR_LINE.test(lines[i].textContent)) {
        log.querySelectorAll(".line.error-line").forEach(function (l) { l.classList.remove("error-line"); });
        lines[i].classList.add("error-line");
        lines[i].id = "log-first-error-line";
        lines[i].scrollIntoView({block: "center"});
        log.focus();
        return;
      }
    }
    if (status) { status.textContent = button.dataset.none; }
  }

  // Page wiring -------------------------------------------------------------------------------

  function start() {
    var log = document.getElementById("log");
    if (log) { follow(log); }
  }

  document.addEventListener("DOMContentLoaded", start);
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.target === document.body) { closeAll(); }  // leaving the page
  });
  document.addEventListener("htmx:afterSettle", start);
  document.addEventListener("input", function (event) {
    if (event.target.id === "log-search") { search(event.target, false); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.target.id === "log-search" && event.key === "Enter") {
      event.preventDefault();
      search(event.target, true);
    }
  });
  document.addEventListener("submit", function (event) {
    if (event.target.dataset && event.target.dataset.noSubmit) { event.preventDefault(); }
  }, true);
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("#log-first-error");
    if (button) { firstError(button); }
  });
  // A list that refreshes itself waits while the operator is in it: the pointer over it, the
  // focus in it, or rows selected. Nothing moves under the cursor; the next refresh catches up.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    if (!elt.dataset || !elt.dataset.holdWhenBusy) { return; }
    var busy = elt.matches(":hover") || elt.contains(document.activeElement) ||
      document.querySelector("input[form=bulk-form]:checked, #" + elt.id + " input[type=checkbox]:checked");
    if (busy) { event.preventDefault(); }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "run-live") {
      document.body.dataset.runPolls = String(parseInt(document.body.dataset.runPolls || "0", 10) + 1);
    }
  });
})();
