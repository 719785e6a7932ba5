/* Console behaviour that htmx attributes cannot express: live updates over the WebSocket and the
   dashboard charts. Same-origin file (the Content-Security-Policy forbids inline scripts). */
(function () {
  "use strict";

  // --- live updates ----------------------------------------------------------------------------
  // While a signed-in page is open, one socket to /ws, opened with a one-use ticket from the
  // console (the socket never authenticates with the session cookie, and no token goes in its URL:
  // URLs end up in proxy logs). A ticket opens one socket only, so every reconnect asks for a new
  // one. Each message names a case; every element marked data-live="<case id>" (or "any") is a
  // live region: it reloads itself from data-live-url (the page's own URL, its part selected by id).
  //
  // Messages are hints to reload and are sent only after the change is committed; none may be lost
  // between the page's render and its next reload, so:
  // - a message that arrives while its region's reload is in flight asks for one more reload after
  //   it (the response in flight may have been read before the change). htmx's own queueing cannot
  //   do this: a request queued on an element is dropped once the element's outerHTML swap has
  //   replaced it, so regions are reloaded from here, found by id each time;
  // - when the socket opens (the first time, or again after a drop) every region reloads once: what
  //   happened between the page's render and the subscription was sent to nobody;
  // - a boosted navigation during which a message arrived, and a page restored from htmx's history
  //   cache, reload their regions once too (the page was rendered before the change).
  var socket = null;
  var connecting = false;  // a ticket request is under way: one socket per window, not one per event
  var retryMs = 1000;
  var retryTimer = null;
  var COALESCE_MS = 300;  // a burst of messages (one commit often sends several) becomes one reload
  var regions = {};  // region id -> {timer, busy, again}
  var received = 0;  // messages so far, to tell whether one arrived during a navigation
  var receivedAtNavigation = null;

  function liveConfig() {
    return document.getElementById("live");
  }

  function scheduleRetry() {
    if (retryTimer) return;
    retryTimer = setTimeout(function () { retryTimer = null; connect(); }, retryMs);
    retryMs = Math.min(retryMs * 2, 30000);
  }

  function announce(text) {
    var region = document.getElementById("live-announce");
    if (region) region.textContent = text;
  }

  // "Updated: task claimed, 16:43:07 CET": the words come from the page (its language), the time
  // is in the user's zone (design.js), not the browser's.
  function announcement(type) {
    var config = liveConfig();
    var label = (config && config.dataset.updated) || "Updated:";
    var when = window.designSystem ? window.designSystem.formatTime(new Date()) : new Date().toLocaleTimeString();
    return label + " " + type.replace(":", " ") + ", " + when;
  }

  function regionState(id) {
    return regions[id] || (regions[id] = { timer: null, busy: false, again: false });
  }

  function reload(id) {
    var state = regionState(id);
    if (state.busy) { state.again = true; return; }
    var el = document.getElementById(id);
    if (!el) { delete regions[id]; return; }  // the page changed meanwhile
    state.busy = true;
    var done = function () {
      state.busy = false;
      if (state.again) { state.again = false; scheduleReload(id); }
    };
    htmx.ajax("GET", el.getAttribute("data-live-url"), {
      source: el, target: el, select: "#" + id, swap: "outerHTML"
    }).then(done, done);
  }

  function scheduleReload(id) {
    var state = regionState(id);
    clearTimeout(state.timer);
    state.timer = setTimeout(function () { state.timer = null; reload(id); }, COALESCE_MS);
  }

  // The regions a message about `caseId` concerns (every region when caseId is null).
  function reloadRegions(caseId) {
    var found = false;
    document.querySelectorAll("[data-live]").forEach(function (el) {
      var wanted = el.getAttribute("data-live");
      if (el.id && (caseId === null || wanted === "any" || wanted === caseId)) {
        scheduleReload(el.id);
        found = true;
      }
    });
    return found;
  }

  function dispatch(message) {
    if (!message || !message.data || message.type === "pong") return;
    received += 1;
    if (reloadRegions(message.data.caseId || "")) {
      announce(announcement(message.type));
    }
  }

  function open(ticket) {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + "/ws?ticket=" + encodeURIComponent(ticket));
    socket.onopen = function () {
      retryMs = 1000;
      reloadRegions(null);
      document.documentElement.dataset.live = "open";
    };
    socket.onmessage = function (event) {
      try { dispatch(JSON.parse(event.data)); } catch (e) { /* not JSON: ignore */ }
    };
    socket.onclose = function () {
      socket = null;
      document.documentElement.dataset.live = "closed";
      if (liveConfig()) scheduleRetry();
    };
  }

  function connect() {
    var config = liveConfig();
    if (!config || socket || connecting) return;
    connecting = true;
    fetch(config.dataset.ticketUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": config.dataset.csrf, "Accept": "application/json" },
      redirect: "error"  // signed out meanwhile: the login redirect is not a ticket
    })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
      .then(function (body) { connecting = false; open(body.ticket); })
      .catch(function () { connecting = false; scheduleRetry(); });
  }

  // Boosted navigation keeps this window: connect once signed in, close once signed out.
  function sync() {
    if (liveConfig()) connect();
    else if (socket) socket.close();
  }

  // --- dashboard charts ------------------------------------------------------------------------
  function cssVariable(name, fallback) {
    var value = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return value || fallback;
  }

  function drawCharts(root) {
    var canvases = root.querySelectorAll ? root.querySelectorAll("canvas[data-chart]") : [];
    var source = document.getElementById("chart-data");
    if (!canvases.length || !source || typeof Chart === "undefined") return;
    var data = JSON.parse(source.textContent);
    var fg = cssVariable("--ds-fg", "#1a1a1a");
    var primary = cssVariable("--ds-primary", "#1f4e8c");
    var reduceMotion = window.matchMedia("(prefers-reduced-motion: reduce)").matches;
    canvases.forEach(function (canvas) {
      var chart = data[canvas.dataset.chart];
      if (!chart || Chart.getChart(canvas)) return;
      new Chart(canvas, {
        type: "bar",
        data: { labels: chart.labels, datasets: [{ label: chart.axis, data: chart.values, backgroundColor: primary, borderColor: fg, borderWidth: 1 }] },
        options: {
          animation: reduceMotion ? false : undefined,
          maintainAspectRatio: false,
          plugins: { legend: { display: false } },
          scales: {
            x: { ticks: { color: fg }, grid: { color: "transparent" } },
            y: { beginAtZero: true, ticks: { color: fg, precision: 0 } }
          }
        }
      });
    });
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.boosted) receivedAtNavigation = received;
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (!event.detail.boosted) return;
    if (receivedAtNavigation !== null && received !== receivedAtNavigation) reloadRegions(null);
    receivedAtNavigation = null;
  });
  document.addEventListener("htmx:historyRestore", function () { reloadRegions(null); });

  // --- keyboard shortcuts (listed on the page, in #shortcuts) ----------------------------------
  // j / k move between the inbox's rows (focus goes to the row's task link, so Enter opens it),
  // c claims (the focused row's task in the inbox, this task on a task page), r releases it, e goes to the first
  // field of the form, ? shows the list. Never while typing in a field or with a modifier key.
  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  function moveRow(step) {
    var rows = Array.prototype.slice.call(document.querySelectorAll("tr[data-row]"));
    if (!rows.length) return;
    var current = rows.findIndex(function (row) { return row.contains(document.activeElement); });
    var next = rows[Math.max(0, Math.min(rows.length - 1, current < 0 ? 0 : current + step))];
    var link = next.querySelector("a");
    if (link) link.focus();
  }

  function claim() {
    var row = document.activeElement && document.activeElement.closest ? document.activeElement.closest("tr[data-row]") : null;
    var button = (row || document).querySelector("[data-shortcut='c']");
    if (button) button.click();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var help = document.getElementById("shortcuts");
    if (!help) return;  // pages without shortcuts
    if (event.key === "j") moveRow(1);
    else if (event.key === "k") moveRow(-1);
    else if (event.key === "c") claim();
    else if (event.key === "r") {
      var release = document.querySelector("[data-shortcut='r']");
      if (release) release.click();
    }
    else if (event.key === "e") {
      var first = document.querySelector("#task-form input:not([type=hidden]), #task-form select, #task-form textarea");
      if (first) first.focus();
    } else if (event.key === "?") {
      help.open = !help.open;
      if (help.open) help.querySelector("summary").focus();
    } else return;
    event.preventDefault();
  });

  document.addEventListener("htmx:load", function (event) { drawCharts(event.target); sync(); });
  document.addEventListener("DOMContentLoaded", function () { drawCharts(document); sync(); });
})();
