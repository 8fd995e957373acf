// The Shared Deck dashboard: plain DOM code, no build step, no network beyond this server.
// One EventSource (/events) brings the live snapshot every tick; each page fetches its JSON
// from /api/... and redraws itself when the snapshot says something changed.
"use strict";

const TYPE_NAMES = { C: "creature", H: "heal", D: "damage", T: "take", B: "buff", I: "deactivate" };
const TARGETS = { "-1": "board", "-5": "self", "-6": "opponent" };

let live = null; // the last snapshot
let liveAt = 0; // performance.now() when it arrived
let onSnapshot = null; // what the current page does with a new snapshot

// ------------------------------------------------------------------ helpers
function h(tag, attrs, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

function show(...children) {
  const app = document.getElementById("app");
  app.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
}

// JSON.parse reads every number as a double: an integer beyond 2^53 (a deck seed has 63 bits)
// would come out rounded (7149912976826791605 → 7149912976826792000). parseJSON reads such
// integers as strings of their exact digits, and everything else as JSON.parse does. The
// tokens are the JSON text's strings (skipped whole, escapes included) and its numbers.
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

function parseJSON(text) {
  return JSON.parse(
    text.replace(JSON_TOKEN, (token) =>
      token[0] === '"' || !/^-?\d+$/.test(token) || Number.isSafeInteger(Number(token)) ? token : `"${token}"`,
    ),
  );
}

async function getJSON(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return parseJSON(await response.text());
}

const points = (value) => (value === null || value === undefined ? "–" : value.toFixed(2));
const playerLink = (name) => h("a", { href: `/player/${encodeURIComponent(name)}`, class: "player" }, name);
const matchLink = (id, text) => h("a", { href: `/match/${id}` }, text || `#${id}`);
const tournamentLink = (n, text) => h("a", { href: `/tournament/${n}` }, text || `#${n}`);

// ------------------------------------------------------------------ live clock
function connect() {
  const dot = document.getElementById("connection");
  const source = new EventSource("/events");
  source.onopen = () => dot.classList.add("on");
  source.onerror = () => {
    dot.classList.remove("on");
    document.getElementById("status").textContent = "reconnecting…";
  };
  source.onmessage = (event) => {
    live = parseJSON(event.data);
    liveAt = performance.now();
    document.getElementById("status").textContent = live.status;
    document.getElementById("turn").textContent = live.turn;
    tickClock();
    if (onSnapshot) onSnapshot(live);
  };
}

function tickClock() {
  if (!live || live.next_tick_in === null) return;
  const left = Math.max(0, live.next_tick_in - (performance.now() - liveAt) / 1000);
  document.getElementById("next-tick").textContent = `${left.toFixed(1)} s`;
  const bar = document.getElementById("tick-bar");
  if (bar) bar.style.width = `${100 * (1 - Math.min(1, left / live.turn_seconds))}%`;
}

// ------------------------------------------------------------------ cards and boards
function effect(type, attack, hp) {
  if (type === "H") return `heal ${hp}`;
  if (type === "D") return `${attack} damage`;
  if (type === "T") return `+${attack} draw`;
  if (type === "B") return `+${attack}/+${hp}`;
  if (type === "I") return "deactivate";
  return "";
}

// card: [id, type, attack, hp, hp_max, cost, mana] (+ active for a creature on a board)
function cardView(card, marks) {
  const [id, type, attack, hp, hpMax, cost, mana, active] = card;
  const classes = ["card", `t-${type}`];
  if (active === 0) classes.push("inactive");
  if (marks.attackers && marks.attackers.includes(id)) classes.push("attacking");
  if (marks.highlight && marks.highlight.includes(id)) classes.push("highlight");
  const body =
    type === "C"
      ? [
          h("span", { class: "stat at", title: "attack" }, attack),
          h("span", { class: "stat hp", title: `health ${hp} of ${hpMax}` }, hp),
        ]
      : [h("span", { class: "effect" }, effect(type, attack, hp))];
  return h(
    "div",
    { class: classes.join(" "), "data-card": id, "data-line": card.join(" "), title: `${TYPE_NAMES[type]} #${id}` },
    h("span", { class: "cost", title: "cost" }, cost),
    h("span", { class: "cid" }, `#${id}`),
    h("span", { class: "kind" }, TYPE_NAMES[type]),
    h(
      "span",
      { class: "notes" },
      type === "C" && mana > 0 ? h("span", { class: "mana", title: "mana when tapped" }, `+${mana} mana`) : null,
      active === 0 ? h("span", { class: "zz", title: "inactive" }, "tapped") : null,
    ),
    h("div", { class: "stats" }, body),
  );
}

function sideView(state, players, side, marks, initHp) {
  const hp = state.hp[side];
  const current = !state.ended && state.current === side;
  const score = state.scores ? state.scores[side] : null;
  return h(
    "section",
    { class: `side${current ? " current" : ""}`, "data-side": side },
    h(
      "div",
      { class: "who" },
      h("span", { class: "name" }, playerLink(players[side])),
      side === 0 ? h("span", { class: "tag" }, "first") : null,
      current ? h("span", { class: "tag move" }, "to move") : null,
      h(
        "span",
        { class: "hpbar", title: `${hp} of ${initHp}` },
        h("span", { class: "fill", style: `width:${(100 * hp) / initHp}%` }),
      ),
      h("span", { class: "hp-value" }, hp),
      score !== null ? h("span", { class: "score" }, `score ${score}`) : null,
    ),
    h("div", { class: "row-label" }, `hand (${state.hands[side].length})`),
    h("div", { class: "hand cards", "data-side": side }, state.hands[side].map((c) => cardView(c, marks))),
    h("div", { class: "row-label" }, `board (${state.boards[side].length})`),
    h(
      "div",
      { class: "board cards", "data-side": side },
      state.boards[side].length
        ? state.boards[side].map((c) => cardView(c, { ...marks, attackers: side === state.current ? [] : state.attackers }))
        : h("span", { class: "empty" }, "no creatures"),
    ),
  );
}

function matchView(state, players, marks, initHp, turns) {
  const facts = [
    ["turn", `${Math.min(state.turn + 1, turns)} / ${turns}`],
    ["mana", state.mana],
    ["draws left", state.draws_left],
    ["burns left", state.burns_left],
    ["deck", state.deck],
    ["phase", state.ended ? "ended" : state.blocking ? "blocking" : "acting"],
  ];
  return h(
    "div",
    { class: "match-board" },
    sideView(state, players, 1, marks, initHp),
    h(
      "div",
      { class: "facts" },
      facts.map(([name, value]) =>
        h("span", { class: "fact", "data-fact": name }, h("small", {}, name), h("b", {}, value)),
      ),
    ),
    sideView(state, players, 0, marks, initHp),
  );
}

function liveMatchCard(match, initHp, turns) {
  const s = match.state;
  return h(
    "article",
    { class: "live-match", "data-match": match.id, "data-turn": s.turn },
    h(
      "header",
      {},
      matchLink(match.id, `Match #${match.id}`),
      " ",
      h("span", { class: "muted" }, `${match.actions} actions`),
    ),
    matchView(s, match.players, { attackers: s.attackers }, initHp, turns),
    h("p", { class: "last-action" }, match.last_action || "no action yet"),
  );
}

// ------------------------------------------------------------------ pages
async function pageLive() {
  let storedSeen = null;
  const board = h("div", { id: "mini-leaderboard" });
  const refreshBoard = async () => {
    const data = await getJSON("/api/leaderboard");
    board.replaceChildren(
      h("h2", {}, "Leaderboard"),
      leaderboardTable(data, 10, false),
      h("p", {}, h("a", { href: "/leaderboard" }, "full leaderboard →")),
    );
  };
  const render = (snap) => {
    if (snap.stored !== storedSeen) {
      storedSeen = snap.stored;
      refreshBoard();
    }
    const t = snap.tournament;
    const head = t
      ? h(
          "section",
          { class: "panel", id: "tournament", "data-tournament": t.number },
          h("h1", {}, tournamentLink(t.number, `Tournament ${t.number}`), " ", h("span", { class: "pill" }, "playing")),
          h(
            "div",
            { class: "stats-row" },
            stat("global turn", snap.turn, "global-turn"),
            stat("match turn", `${Math.min(t.match_turn + 1, t.turns_per_match)} / ${t.turns_per_match}`, "match-turn"),
            stat("matches", `${t.matches - t.ended} playing · ${t.ended} ended`, "matches"),
            stat("players online", `${snap.online.length} / ${t.players.length}`, "online"),
          ),
          h("div", { class: "tick" }, h("div", { id: "tick-bar" })),
        )
      : h(
          "section",
          { class: "panel", id: "tournament" },
          h("h1", {}, snap.status === "storing" ? "Storing the last tournament…" : "No tournament running"),
          h("p", { class: "muted" }, `${snap.online.length} player(s) online: ${snap.online.join(", ") || "none"}`),
        );
    const grid = h("div", { class: "live-grid", id: "live-matches" });
    for (const match of snap.live) {
      grid.append(liveMatchCard(match, match.init_hp, match.turns_per_match));
    }
    const more = t && t.matches > snap.live.length
      ? h("p", { class: "muted" }, `The first ${snap.live.length} of ${t.matches} matches; `, tournamentLink(t.number, "all of them"), ".")
      : null;
    show(h("div", { class: "live-layout" }, h("div", {}, head, grid, more), board));
    tickClock();
  };
  onSnapshot = render;
  if (live) render(live);
}

function stat(label, value, id) {
  return h("div", { class: "stat-box", id }, h("small", {}, label), h("b", {}, value));
}

function leaderboardTable(data, limit, withColumns) {
  const mini = !withColumns;
  const columns = withColumns ? data.columns : [];
  const rows = limit ? data.leaderboard.slice(0, limit) : data.leaderboard;
  return h(
    "table",
    { class: "table", id: withColumns ? "leaderboard" : null },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, "#"),
        h("th", {}, "player"),
        h("th", { class: "num", title: "sum over tournaments of R(S)^1.5" }, "points"),
        mini ? null : h("th", { class: "num" }, "tournaments"),
        columns.map((n) => h("th", { class: "num" }, tournamentLink(n, `T${n}`))),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((row) =>
        h(
          "tr",
          { "data-player": row.player, class: row.removed ? "removed" : null },
          h("td", {}, row.rank),
          h("td", {}, playerLink(row.player), row.removed ? " (removed)" : ""),
          h("td", { class: "num points" }, points(row.points)),
          mini ? null : h("td", { class: "num" }, row.tournaments),
          columns.map((_, i) => h("td", { class: "num" }, points(row.recent[i]))),
        ),
      ),
    ),
  );
}

async function pageLeaderboard() {
  let storedSeen = null;
  const render = async () => {
    const data = await getJSON("/api/leaderboard");
    show(
      h("h1", {}, "Leaderboard"),
      h(
        "p",
        { class: "muted" },
        `After ${data.tournaments} stored tournament(s). Points are the sum over tournaments of R(S)^1.5 `,
        "per match score S (R: how many of that tournament's scores are strictly below S); ",
        "the last columns are the latest tournaments' points.",
      ),
      leaderboardTable(data, 0, true),
    );
  };
  onSnapshot = (snap) => {
    if (snap.stored !== storedSeen) {
      storedSeen = snap.stored;
      render();
    }
  };
  await render();
}

async function pageTournaments() {
  let storedSeen = null;
  const render = async (snap) => {
    const data = await getJSON("/api/tournaments");
    const running = snap && snap.tournament;
    show(
      h("h1", {}, "Tournaments"),
      running
        ? h("p", { class: "panel" }, "Playing now: ", tournamentLink(running.number, `tournament ${running.number}`),
            ` (${running.matches} matches, turn ${running.match_turn + 1} of ${running.turns_per_match})`)
        : null,
      h(
        "table",
        { class: "table", id: "tournaments" },
        h("thead", {}, h("tr", {}, ["#", "finished", "players", "matches", "best", "deck seed"].map((x) => h("th", {}, x)))),
        h(
          "tbody",
          {},
          data.tournaments.map((t) =>
            h(
              "tr",
              { "data-tournament": t.number },
              h("td", {}, tournamentLink(t.number)),
              h("td", {}, (t.finished_at || "").replace("T", " ").replace("+00:00", " UTC")),
              h("td", { class: "num" }, t.players),
              h("td", { class: "num" }, t.matches),
              h("td", {}, t.best ? playerLink(t.best) : "–"),
              h("td", { class: "muted" }, t.deck_seed),
            ),
          ),
        ),
      ),
      data.tournaments.length ? null : h("p", { class: "muted" }, "No tournament stored yet."),
    );
  };
  onSnapshot = (snap) => {
    if (snap.stored !== storedSeen) {
      storedSeen = snap.stored;
      render(snap);
    }
  };
  await render(live);
}

async function pageTournament(number) {
  const data = await getJSON(`/api/tournament/${number}`);
  const filter = h("input", { type: "search", placeholder: "filter by player", id: "match-filter" });
  const body = h("tbody", {});
  const fill = () => {
    const word = filter.value.trim();
    const rows = data.matches.filter((m) => !word || m.players.some((p) => p.includes(word))).slice(0, 1000);
    body.replaceChildren(
      ...rows.map((m) =>
        h(
          "tr",
          { "data-match": m.id },
          h("td", {}, matchLink(m.id)),
          h("td", {}, playerLink(m.players[0])),
          h("td", {}, playerLink(m.players[1])),
          data.running ? h("td", { class: "muted" }, "playing") : h("td", { class: "num" }, `${m.hp[0]}–${m.hp[1]}`),
          data.running ? h("td", {}) : h("td", { class: "num" }, `${m.scores[0]} : ${m.scores[1]}`),
          data.running ? h("td", {}) : h("td", { class: "num" }, m.turns_played),
        ),
      ),
    );
  };
  filter.addEventListener("input", fill);
  const players = data.running
    ? null
    : h(
        "table",
        { class: "table", id: "tournament-players" },
        h("thead", {}, h("tr", {}, ["player", "points", "matches", "won", "lost", "total score"].map((x) => h("th", {}, x)))),
        h(
          "tbody",
          {},
          data.players.map((p) =>
            h(
              "tr",
              { "data-player": p.player },
              h("td", {}, playerLink(p.player)),
              h("td", { class: "num points" }, points(p.points)),
              h("td", { class: "num" }, p.matches),
              h("td", { class: "num" }, p.won),
              h("td", { class: "num" }, p.lost),
              h("td", { class: "num" }, p.total_score),
            ),
          ),
        ),
      );
  show(
    h("h1", {}, `Tournament ${number} `, h("span", { class: "pill" }, data.running ? "playing" : "finished")),
    h("p", { class: "muted" }, `deck seed ${data.deck_seed} · ${data.matches.length} matches`),
    players,
    h("h2", {}, "Matches"),
    filter,
    h("table", { class: "table", id: "tournament-matches" },
      h("thead", {}, h("tr", {}, ["match", "first", "second", "HP", "scores", "turns"].map((x) => h("th", {}, x)))),
      body),
  );
  fill();
  onSnapshot = data.running ? (snap) => { if (!snap.tournament || snap.tournament.number !== number) location.reload(); } : null;
}

async function pagePlayer(name) {
  let storedSeen = null;
  const render = async () => {
    const p = await getJSON(`/api/player/${encodeURIComponent(name)}`);
    show(
      h("h1", {}, p.player, " ", h("span", { class: `pill${p.online ? " on" : ""}` }, p.online ? "online" : "offline"),
        p.removed ? h("span", { class: "pill" }, "removed") : null),
      h(
        "div",
        { class: "stats-row" },
        stat("rank", p.rank, "player-rank"),
        stat("points", points(p.points), "player-points"),
        stat("tournaments", p.tournaments, "player-tournaments"),
      ),
      p.live.length
        ? h("p", { class: "panel" }, "Playing now: ", p.live.map((m, i) => [i ? ", " : "", matchLink(m.id, `#${m.id} vs ${m.players[0] === name ? m.players[1] : m.players[0]}`)]))
        : null,
      h("div", { class: "two-columns" },
        h("div", {},
          h("h2", {}, "Points per tournament"),
          h("table", { class: "table", id: "player-tournaments-table" },
            h("thead", {}, h("tr", {}, h("th", {}, "tournament"), h("th", {}, "points"))),
            h("tbody", {}, p.per_tournament.map((t) => h("tr", { "data-tournament": t.number }, h("td", {}, tournamentLink(t.number)), h("td", { class: "num" }, points(t.points))))))),
        h("div", {},
          h("h2", {}, "Latest matches"),
          h("table", { class: "table", id: "player-matches" },
            h("thead", {}, h("tr", {}, ["match", "tournament", "opponent", "moved first", "HP", "score"].map((x) => h("th", {}, x)))),
            h("tbody", {}, p.matches.map((m) => h("tr", { "data-match": m.id, class: m.hp[1] === 0 ? "won" : m.hp[0] === 0 ? "lost" : null },
              h("td", {}, matchLink(m.id)), h("td", {}, tournamentLink(m.tournament)),
              h("td", {}, playerLink(m.opponent)),
              h("td", {}, m.moved_first ? name : m.opponent),
              h("td", { class: "num" }, `${m.hp[0]}–${m.hp[1]}`), h("td", { class: "num" }, `${m.scores[0]} : ${m.scores[1]}`))))))),
    );
  };
  onSnapshot = (snap) => {
    if (snap.stored !== storedSeen) {
      storedSeen = snap.stored;
      render();
    }
  };
  await render();
}

// ------------------------------------------------------------------ one match
async function pageMatch(id) {
  const data = await getJSON(`/api/match/${id}`);
  if (data.live) return liveMatch(id, data);
  return replayMatch(data);
}

function liveMatch(id, first) {
  let turn = null;
  const render = (data) => {
    if (!data.live) {
      location.reload(); // stored meanwhile: the turn-by-turn viewer takes over
      return;
    }
    show(
      h("h1", {}, `Match #${id} `, h("span", { class: "pill" }, data.state.ended ? "ended" : "live"),
        " ", h("small", { class: "muted" }, "tournament ", tournamentLink(data.tournament))),
      h("div", { id: "viewer", "data-live": "1", "data-turn": data.state.turn }, matchView(data.state, data.players, { attackers: data.state.attackers }, data.init_hp, data.turns_per_match)),
      h("p", { class: "last-action" }, data.last_action || "no action yet"),
      h("p", { class: "muted" }, "This match is being played; the board follows it live. Once the tournament is stored, this page shows it turn by turn."),
    );
  };
  onSnapshot = async (snap) => {
    if (snap.turn === turn) return;
    turn = snap.turn;
    render(await getJSON(`/api/match/${id}`));
  };
  render(first);
}

function replayMatch(data) {
  const frames = data.frames;
  const turns = data.rules.turns_per_match;
  let index = 0;
  let timer = null;
  const slider = h("input", { type: "range", min: 0, max: frames.length - 1, value: 0, id: "frame-slider" });
  const where = h("span", { id: "frame-label" });
  const stage = h("div", { id: "viewer", "data-live": "0" });
  const log = h("ol", { class: "action-log", id: "action-log" });
  const playButton = h("button", { id: "play", title: "play / pause (space)" }, "▶ play");

  const turnStart = (turn) => frames.findIndex((f) => f.turn === turn && f.step === 0);
  const go = (next, fromHash) => {
    index = Math.max(0, Math.min(frames.length - 1, next));
    const f = frames[index];
    slider.value = index;
    // The cards the action names, and the card it drew.
    const highlight = f.action ? f.action.text.split(" ").slice(1).map(Number).filter((x) => x > 0) : [];
    const drawn = f.action && /^OK (\d+) /.exec(f.action.answer);
    if (drawn) highlight.push(Number(drawn[1]));
    Object.assign(stage.dataset, { turn: f.turn, step: f.step, frame: index });
    stage.replaceChildren(matchView(f.state, data.players, { attackers: f.state.attackers, highlight }, data.rules.init_hp, turns));
    where.textContent = f.end ? "end of the match" : `turn ${f.turn + 1} of ${turns}, ${f.step ? `action ${f.step}` : "start"} · frame ${index + 1}/${frames.length}`;
    const ofTurn = frames.filter((g) => g.turn === f.turn && g.action);
    log.replaceChildren(
      ...(ofTurn.length
        ? ofTurn.map((g) =>
            h("li", { class: g.step === f.step ? "now" : g.step < f.step ? "done" : null, "data-step": g.step },
              h("b", {}, data.players[g.action.side]), " ", describe(g.action.text), " → ",
              h("span", { class: g.action.answer.startsWith("ERR") ? "err" : "ok" }, g.action.answer),
              g.action.engine ? h("span", { class: "err" }, ` (the rules engine says ${g.action.engine})`) : null))
        : [h("li", { class: "muted" }, f.end ? "the match is over" : "no action this turn")]),
    );
    const hash = f.end ? "#end" : `#turn=${f.turn + 1}&step=${f.step}`;
    if (!fromHash && location.hash !== hash) history.replaceState(null, "", hash);
  };
  const fromHash = () => {
    const m = /turn=(\d+)(?:&step=(\d+))?/.exec(location.hash);
    if (location.hash === "#end") return go(frames.length - 1, true);
    if (!m) return go(0, true);
    const start = turnStart(Number(m[1]) - 1);
    if (start < 0) return go(frames.length - 1, true);
    const step = Number(m[2] || 0);
    const at = frames.findIndex((f, i) => i >= start && f.turn === Number(m[1]) - 1 && f.step === step);
    go(at < 0 ? start : at, true);
  };
  const nextTurn = (direction) => {
    const f = frames[index];
    let i = index;
    if (direction > 0) while (i < frames.length - 1 && frames[i].turn === f.turn) i++;
    else {
      const start = turnStart(f.turn);
      i = index > start ? start : Math.max(0, turnStart(frames[Math.max(0, start - 1)].turn));
    }
    go(i);
  };
  const play = () => {
    if (timer) {
      clearInterval(timer);
      timer = null;
      playButton.textContent = "▶ play";
      return;
    }
    playButton.textContent = "❚❚ pause";
    timer = setInterval(() => {
      if (index >= frames.length - 1) return play();
      go(index + 1);
    }, 400);
  };
  slider.addEventListener("input", () => go(Number(slider.value)));
  playButton.addEventListener("click", play);
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement && e.target.type !== "range") return;
    const keys = {
      ArrowRight: () => go(index + 1), ArrowLeft: () => go(index - 1),
      ArrowDown: () => nextTurn(1), ArrowUp: () => nextTurn(-1),
      PageDown: () => nextTurn(1), PageUp: () => nextTurn(-1),
      Home: () => go(0), End: () => go(frames.length - 1), " ": play,
    };
    if (keys[e.key]) {
      e.preventDefault();
      keys[e.key]();
    }
  });
  window.addEventListener("hashchange", fromHash);
  const r = data;
  show(
    h("h1", {}, `Match #${r.id} `, h("small", { class: "muted" }, "tournament ", tournamentLink(r.tournament))),
    h("p", { class: "result" }, playerLink(r.players[0]), ` (first) ${r.hp[0]} HP, score ${r.scores[0]} — `,
      playerLink(r.players[1]), ` ${r.hp[1]} HP, score ${r.scores[1]} · ${r.turns_played} turns played`),
    h("div", { class: "controls" },
      h("button", { onclick: () => nextTurn(-1), title: "previous turn (↑)" }, "◀◀ turn"),
      h("button", { onclick: () => go(index - 1), title: "previous action (←)", id: "step-back" }, "◀ step"),
      playButton,
      h("button", { onclick: () => go(index + 1), title: "next action (→)", id: "step" }, "step ▶"),
      h("button", { onclick: () => nextTurn(1), title: "next turn (↓)" }, "turn ▶▶"),
      slider, where),
    h("div", { class: "viewer-layout" }, stage, h("aside", {}, h("h2", {}, "This turn"), log,
      h("p", { class: "muted keys" }, "← → step · ↑ ↓ turn · space play · the address points at this moment"))),
  );
  fromHash();
  onSnapshot = null;
}

function describe(text) {
  const [command, ...args] = text.split(" ");
  if (command === "PLAY_CARD") return `PLAY_CARD #${args[0]} on ${TARGETS[args[1]] || `#${args[1]}`}`;
  if (command === "BLOCK") return `BLOCK #${args[0]} with #${args[1]}`;
  return [command, ...args.map((a) => `#${a}`)].join(" ");
}

// ------------------------------------------------------------------ router
async function route() {
  const path = decodeURIComponent(location.pathname);
  const nav = path === "/" ? "live" : path.split("/")[1];
  for (const link of document.querySelectorAll("nav a")) {
    link.classList.toggle("active", link.dataset.nav === nav || (nav === "tournament" && link.dataset.nav === "tournaments"));
  }
  let m;
  try {
    if (path === "/") await pageLive();
    else if (path === "/leaderboard") await pageLeaderboard();
    else if (path === "/tournaments") await pageTournaments();
    else if ((m = /^\/tournament\/(\d+)$/.exec(path))) await pageTournament(Number(m[1]));
    else if ((m = /^\/match\/(\d+)$/.exec(path))) await pageMatch(Number(m[1]));
    else if ((m = /^\/player\/(.+)$/.exec(path))) await pagePlayer(m[1]);
    else show(h("p", {}, "Nothing here."));
  } catch (error) {
    show(h("p", { class: "error" }, `Could not load this page: ${error.message}`));
  }
  document.body.dataset.ready = "1";
}

connect();
setInterval(tickClock, 100);
route();
