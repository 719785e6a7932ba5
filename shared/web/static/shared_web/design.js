/* The design system's behaviour, shared by both consoles (same-origin file: the Content-Security-
   Policy forbids inline scripts).
   - Tables stack on a phone; each cell then shows its column's name, taken from the table's own
     header (data-label), so every table, whoever wrote its template, keeps its labels.
   - Times written by the browser (live announcements) use the user's language and zone, named on
     <html lang> and <html data-time-zone>, not the browser's. */
(function () {
  "use strict";

  function labelTables(root) {
    var tables = root.querySelectorAll ? root.querySelectorAll("table") : [];
    if (root.tagName === "TABLE") tables = [root];
    Array.prototype.forEach.call(tables, function (table) {
      var head = table.tHead && table.tHead.rows[0];
      if (!head) return;
      var names = Array.prototype.map.call(head.cells, function (cell) { return cell.textContent.trim(); });
      Array.prototype.forEach.call(table.tBodies, function (body) {
        Array.prototype.forEach.call(body.rows, function (row) {
          var column = 0;
          Array.prototype.forEach.call(row.cells, function (cell) {
            if (!cell.hasAttribute("data-label") && cell.colSpan === 1) cell.setAttribute("data-label", names[column] || "");
            column += cell.colSpan || 1;
          });
        });
      });
    });
  }

  function formatTime(date) {
    var html = document.documentElement;
    var options = { hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short" };
    if (html.dataset.timeZone) options.timeZone = html.dataset.timeZone;
    try {
      return date.toLocaleTimeString(html.lang || undefined, options);
    } catch (e) {  // an unknown zone or language: the browser's own
      return date.toLocaleTimeString();
    }
  }

  window.designSystem = { labelTables: labelTables, formatTime: formatTime };
  document.addEventListener("htmx:load", function (event) {
    var el = event.target;
    labelTables((el.closest && el.closest("table")) || el);
  });
  document.addEventListener("DOMContentLoaded", function () { labelTables(document); });
})();
