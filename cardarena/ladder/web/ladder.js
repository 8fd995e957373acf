/* The ladder's pages: the leaderboard follows the ladder live (GET /api/leaderboard every
   few seconds). Every text from the server goes into the page with textContent, never as
   HTML. Served as a file: the pages' Content-Security-Policy lets no inline script run. */
"use strict";
(function () {
  const REFRESH_MS = 3000;
  const $ = (id) => document.getElementById(id);

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function link(href, text) {
    const a = el("a", text);
    a.href = href;
    return a;
  }

  function interval(row) {
    const elo = row.elo;
    if (!elo || elo.value === null || elo.value === undefined) return "–";
    return Math.round(elo.value) + " [" + Math.round(elo.low) + ", " + Math.round(elo.high) + "]";
  }

  function statusCell(row) {
    const td = el("td", null, "status-cell");
    td.appendChild(el("span", row.status, "status status-" + row.status));
    if (row.reason && ["failed", "disabled", "retired"].includes(row.status)) {
      td.appendChild(document.createTextNode(" "));
      td.appendChild(el("span", row.reason, "reason"));
    }
    return td;
  }

  function boardRow(row) {
    const tr = el("tr");
    tr.dataset.bot = row.name;
    tr.dataset.status = row.status;
    tr.appendChild(el("td", row.rank === null || row.rank === undefined ? "" : row.rank, "rank"));
    const name = el("td", null, "name");
    name.appendChild(link("/bots/" + encodeURIComponent(row.name), row.name));
    tr.appendChild(name);
    const owner = el("td");
    owner.appendChild(link("/users/" + encodeURIComponent(row.owner), row.owner));
    tr.appendChild(owner);
    const rating = el("td", interval(row), "rating");
    if (row.tied_with && row.tied_with.length) {
      const tied = el("span", "≈", "tied");
      tied.title = "not significantly apart from " + row.tied_with.join(", ");
      rating.appendChild(document.createTextNode(" "));
      rating.appendChild(tied);
    }
    tr.appendChild(rating);
    tr.appendChild(el("td", row.rating ? row.rating.conservative.toFixed(1) : ""));
    tr.appendChild(el("td", row.games, "games"));
    const rate = row.win_rate;
    tr.appendChild(el("td", rate === null || rate === undefined ? "–" : Math.round(100 * rate) + "%"));
    tr.appendChild(statusCell(row));
    return tr;
  }

  function showState(data) {
    const banner = $("ladder-state");
    if (!banner) return;
    $("paused-note").hidden = !data.paused;
    $("frozen-note").hidden = !data.frozen;
    banner.hidden = !data.paused && !data.frozen;
  }

  async function refreshBoard() {
    const body = $("board-rows");
    try {
      const answer = await fetch("/api/leaderboard", { headers: { Accept: "application/json" } });
      if (!answer.ok) throw new Error("HTTP " + answer.status);
      const data = await answer.json();
      const rows = data.bots.map(boardRow);
      if (!rows.length) {
        const empty = el("tr", null, "empty");
        const cell = el("td", "No bots yet: log in and submit one.");
        cell.colSpan = 8;
        empty.appendChild(cell);
        rows.push(empty);
      }
      body.replaceChildren(...rows);
      showState(data);
      $("updated").textContent = "Updated " + new Date().toLocaleTimeString() + ".";
    } catch (error) {
      $("updated").textContent = "Could not reach the ladder (" + error.message + "); trying again.";
    }
    setTimeout(refreshBoard, REFRESH_MS);
  }

  /* A bot's page: reloaded when the bot's status changes (a build ends, a validation
     passes), so that its build log and games appear without the person asking. */
  async function watchBot(name, shown) {
    try {
      const answer = await fetch("/api/bots/" + encodeURIComponent(name),
                                 { headers: { Accept: "application/json" } });
      if (answer.ok) {
        const data = await answer.json();
        if (data.status !== shown) {
          window.location.reload();
          return;
        }
      }
    } catch (error) {
      /* the ladder is restarting: try again */
    }
    setTimeout(() => watchBot(name, shown), REFRESH_MS);
  }

  function start() {
    if ($("board-rows")) setTimeout(refreshBoard, REFRESH_MS);
    const bot = $("bot-name");
    if (bot && bot.dataset.status) {
      setTimeout(() => watchBot(bot.dataset.bot, bot.dataset.status), REFRESH_MS);
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
