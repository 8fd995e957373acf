/* The LOCM play page: a person's seat in a game that cardarena's referee runs.
   The server holds the game; this page shows what it sends (`state`, long-polled) and posts
   the moves it offers (`move`). Every move offered is an element with data-action holding the
   move's protocol text; a finished game shows #end with data-winner. Text goes in with
   textContent only: names and events come from elsewhere. */
"use strict";
(function () {
  const ROLE = document.body.dataset.role;  // "play" or "watch"
  const DATA = { cards: {}, rules: { lanes: 1, runes: false, area: false, draft: true }, players: ["", ""] };
  const BOARD = LocmBoard(DATA);
  const { el, drawCard } = BOARD;
  const $ = (id) => document.getElementById(id);
  const frames = [];      // every battle frame so far
  let shownFrame = -1;    // the frame on screen (while the opponent's moves are shown)
  let latest = null;      // the server's latest view
  let seq = -1;
  let selected = null;    // the hand card / creature id whose targets are lit
  let sending = false;
  let animTimer = null;
  let clockTimer = null;
  const hashDelay = /delay=(\d+)/.exec(location.hash);
  if (hashDelay) $("speed").value = hashDelay[1];
  if (hashDelay && !$("speed").value) {  // a value not in the list: add it
    $("speed").appendChild(el("option", "", hashDelay[1] + " ms")).value = hashDelay[1];
    $("speed").value = hashDelay[1];
  }

  function playerName(p) { return DATA.players[p] + " (player " + p + ")"; }
  /* A player in the referee's panel: "You" for the one person at the table. */
  function nameOf(p) {
    const solo = ROLE === "play" && latest && latest.humans.length === 1;
    return solo && latest.humans[0] === p ? "You" : DATA.players[p];
  }
  function say(text, kind) {
    const box = $("message");
    box.textContent = text || "";
    box.hidden = !text;
    box.className = kind || "";
  }

  /* ---- talking to the server ---- */
  async function poll() {
    for (;;) {
      try {
        const response = await fetch("state?after=" + seq + "&have=" + frames.length, { cache: "no-store" });
        if (!response.ok) throw new Error(await response.text());
        const data = await response.json();
        if (data.frameCount < frames.length) { frames.length = 0; shownFrame = -1; }  // cannot happen
        accept(data);
        if (data.over || data.error) return;
      } catch (error) {
        $("status").textContent = "the server does not answer (is locm play still running?)";
        await new Promise((resolve) => setTimeout(resolve, 2000));
      }
    }
  }

  function accept(data) {
    Object.assign(DATA.cards, data.cards);
    DATA.rules = data.rules;
    DATA.players = data.players;
    data.frames.forEach((f) => frames.push(f));
    if (latest === null) shownFrame = frames.length - 1;  // a (re)opened page: no replay of the past
    latest = data;
    seq = data.seq;
    document.body.dataset.seq = seq;
    render();
  }

  async function send(body, decisionId) {
    if (sending) return;
    sending = true;
    body.id = decisionId;
    try {
      const response = await fetch("move", { method: "POST", body: JSON.stringify(body),
                                              headers: { "Content-Type": "application/json" } });
      const answer = await response.json();
      if (!response.ok) say("Refused: " + answer.error, "refused");
      else say("");
    } catch (error) {
      say("The move did not reach the server: " + error, "refused");
    } finally {
      sending = false;
    }
  }

  /* ---- what to show ---- */
  function render() {
    if (!latest) return;
    const pending = frames.length - 1 - shownFrame;
    if (pending > 0 && !animTimer) { stepFrames(); return; }
    if (pending > 0) return;
    renderNow();
  }

  /* The opponent's moves, one frame at a time (own moves and the turn start: at once). */
  function stepFrames() {
    animTimer = null;
    if (shownFrame >= frames.length - 1) { renderNow(); return; }
    shownFrame += 1;
    const frame = frames[shownFrame];
    const mine = ROLE === "play" && latest.humans.includes(frame.active) && latest.humans.length === 1;
    const delay = Number($("speed").value);
    if (frame.kind === "action" && !mine && delay > 0) {
      showBattle(frame, shownFrame > 0 ? frames[shownFrame - 1] : null, []);
      $("status").textContent = playerName(frame.active) + " plays " + frame.action.text;
      animTimer = setTimeout(stepFrames, delay);
    } else {
      stepFrames();
    }
  }

  function skipFrames() {
    if (animTimer) { clearTimeout(animTimer); animTimer = null; }
    shownFrame = frames.length - 1;
    renderNow();
  }

  /* Where the keyboard focus was (which list, which position), to put it back after drawing. */
  const FOCUS_LISTS = ["#offered", "#pool", "#moves", "#my-deck"];
  function focusPlace() {
    const active = document.activeElement;
    if (!active || active === document.body) return null;
    if (active.id === "end-turn" || active.id === "auto") return { id: active.id };
    for (const list of FOCUS_LISTS) {
      const items = [...document.querySelectorAll(list + " button")];
      const index = items.indexOf(active);
      if (index >= 0) return { list: list, index: index };
    }
    return null;
  }
  function restoreFocus(place) {
    if (!place) return;
    if (place.id) { const node = $(place.id); if (node && !node.hidden) { node.focus(); return; } }
    const lists = place.list ? [place.list, ...FOCUS_LISTS] : FOCUS_LISTS;
    for (const list of lists) {
      const items = document.querySelectorAll(list + " button");
      if (items.length) { items[Math.min(place.index || 0, items.length - 1)].focus(); return; }
    }
    if (!$("end-turn").hidden) $("end-turn").focus();
  }

  function clearTargets() {
    document.querySelectorAll(".can-target, .selected, .playable").forEach((node) => {
      node.classList.remove("can-target", "selected", "playable");
      delete node.dataset.targetAction;
      node.onclick = null;
    });
  }

  function renderNow() {
    const place = focusPlace();
    clearTargets();
    const data = latest;
    document.body.dataset.seat = data.seat === null ? "" : data.seat;
    const d = data.decision;
    selected = d && d.kind === "battle" && selected !== null ? selected : null;
    $("version-badge").textContent = "LOCM " + data.version;
    const matchup = $("matchup");
    matchup.replaceChildren(el("span", "p0", data.players[0]), " vs ", el("span", "p1", data.players[1]));
    document.title = "LOCM " + data.version + ": " + data.players[0] + " vs " + data.players[1];
    document.body.dataset.kind = d ? d.kind : data.over ? "end" : "waiting";
    if (d) document.body.dataset.decision = d.id; else delete document.body.dataset.decision;
    $("deckbuilding").hidden = !(d && d.kind !== "battle");
    if ($("deckbuilding").hidden) { $("offered").replaceChildren(); $("pool").replaceChildren(); }
    $("battle").hidden = true;
    $("waiting").hidden = true;
    $("auto").hidden = true;
    $("end-turn").hidden = true;
    delete $("end-turn").dataset.action;  // only offered moves carry data-action
    $("moves").replaceChildren();
    showClock(d);
    $("moves-box").hidden = ROLE === "watch" || data.over;  // no moves: no empty panel
    showRules(data.version);
    if (data.error) {
      $("status").textContent = "stopped";
      say(data.error, "refused");
    } else if (d && (d.kind === "draft" || d.kind === "construct")) {
      $("status").textContent = data.humans.length > 1 ? playerName(d.seat) + ": build your deck" : "Build your deck";
      drawDeckBuilding(d);
    } else if (d) {
      const count = d.actions.filter((a) => a !== "PASS").length;
      $("status").textContent = (data.humans.length > 1 ? playerName(d.seat) + ": " : "") +
        "your turn " + BOARD.ownTurn(d.frame.turn) + " — " +
        (count ? count + " move" + (count === 1 ? "" : "s") + " possible" : "nothing left to play: end the turn (E)");
      $("status").title = "the referee's turn " + d.frame.turn + " (it counts both players' turns)";
      drawTurn(d);
    } else {
      drawWaiting(data);
    }
    drawEvents();
    drawEnd(data);
    restoreFocus(place);
    document.body.dataset.ready = "1";
  }

  function showClock(d) {
    if (clockTimer) { clearInterval(clockTimer); clockTimer = null; }
    const clock = $("clock");
    clock.hidden = !(d && d.secondsLeft !== null);
    if (clock.hidden) return;
    const end = performance.now() + d.secondsLeft * 1000;
    const tick = () => {
      const left = Math.max(0, (end - performance.now()) / 1000);
      clock.textContent = "time left: " + left.toFixed(0) + " s";
      clock.dataset.secondsLeft = left.toFixed(1);
      clock.classList.toggle("low", left < 10);
    };
    tick();
    clockTimer = setInterval(tick, 250);
  }

  function drawWaiting(data) {
    const last = frames[frames.length - 1];
    if (last && last.sides) showBattle(last, frames[frames.length - 2] || null, []);
    const who = data.thinking.map(playerName).join(" and ");
    const box = $("waiting");
    if (data.over) {
      $("status").textContent = "game over";
    } else if (ROLE === "watch") {
      $("status").textContent = "watching" + (who ? ": " + who + " to play" : "");
      if (!last) { box.hidden = false; box.textContent = "The players are building their decks: the battle shows here once it starts."; }
    } else {
      $("status").textContent = who ? who + " is thinking…" : "waiting…";
      if (!last) { box.hidden = false; box.textContent = "Waiting for " + (who || "the opponent") + " to build a deck…"; }
      $("moves").appendChild(el("li", "help", "Your moves appear here when it is your turn."));
      document.querySelectorAll("#hand .card").forEach((card) => {
        card.onclick = () => why(card, "It is not your turn: wait for " + (who || "the opponent") + ".");
      });
    }
  }

  /* ---- deck building ---- */
  function cardButton(baseId, action, label, decision) {
    const button = el("button", "card-button");
    button.type = "button";
    button.appendChild(drawCard(baseId));
    button.dataset.action = action;
    button.setAttribute("aria-label", label);
    button.onclick = () => send({ action: action }, decision.id);
    return button;
  }

  /* A card in a few words, for the list of moves and the buttons' labels:
     "green item #126 (cost 3: +2 attack, +3 defense)". Its tooltip has the whole text. */
  function cardLabel(baseId) {
    const [type, cost, attack, defense, keywords, myHealth, oppHealth, draw] = DATA.cards[String(baseId)];
    const sign = (v) => (v > 0 ? "+" : "") + v;
    const parts = [];
    if (type === 0) parts.push("attack " + attack, "defense " + defense);
    else {
      if (attack) parts.push(sign(attack) + " attack");
      if (defense) parts.push(sign(defense) + " defense");
    }
    if (keywords) parts.push((type === 2 || type === 3 ? "removes " : "") + BOARD.keywordText(keywords));
    if (myHealth) parts.push("you " + (myHealth > 0 ? "gain " : "lose ") + Math.abs(myHealth) + " health");
    if (oppHealth) parts.push("the opponent " + (oppHealth > 0 ? "gains " : "loses ") + Math.abs(oppHealth) + " health");
    if (draw) parts.push("draw " + draw);
    return BOARD.KINDS[type] + " #" + baseId + " (cost " + cost + (parts.length ? ": " + parts.join(", ") : "") + ")";
  }

  function drawDeckBuilding(d) {
    const draft = d.kind === "draft";
    $("deck-title").textContent = draft ? "Draft: pick " + (d.round + 1) + " of 30"
      : "Build your deck: choose 30 cards (at most 2 of each) — " + d.moves.length + " chosen";
    $("deck-help").textContent = draft ? "Pick one of the three cards (1, 2, 3, or click)."
      : "Click a card of the pool to add it, a card of your deck to take it back. The 30th card starts the game.";
    const offered = $("offered");
    offered.replaceChildren();
    offered.hidden = !draft;
    $("pool").hidden = draft;
    $("pool-tools").hidden = draft;
    if (draft) {
      d.offered.forEach((baseId, i) => {
        const action = "PICK " + i;
        if (!d.actions.includes(action)) return;
        offered.appendChild(cardButton(baseId, action, (i + 1) + ": pick " + cardLabel(baseId), d));
      });
      $("moves").appendChild(el("li", "help", "Pick one of the three cards: click it, or press 1, 2 or 3."));
    } else {
      drawPool(d);
    }
    drawMyDeck(d);
    $("auto").hidden = false;
    $("auto").onclick = () => send({ auto: true }, d.id);
  }

  function fillFilters() {
    const cost = $("filter-cost");
    if (cost.options.length > 1) return;
    for (let c = 0; c <= 12; c++) cost.appendChild(el("option", "", c === 12 ? "12+" : String(c))).value = c;
    BOARD.KINDS.forEach((kind, i) => { $("filter-type").appendChild(el("option", "", kind)).value = i; });
    BOARD.KEYWORDS.forEach(([letter, name], i) => { $("filter-keyword").appendChild(el("option", "", name)).value = i; });
    for (const id of ["filter-cost", "filter-type", "filter-keyword", "sort"]) $(id).onchange = renderNow;
  }

  function drawPool(d) {
    fillFilters();
    const pool = $("pool");
    pool.replaceChildren();
    const cost = $("filter-cost").value, type = $("filter-type").value, kw = $("filter-keyword").value;
    const sortKey = { cost: 1, attack: 2, defense: 3 }[$("sort").value];
    const counts = {};
    d.moves.forEach((m) => { const id = m.split(" ")[1]; counts[id] = (counts[id] || 0) + 1; });
    const shown = d.pool.filter((id) => {
      const row = DATA.cards[String(id)];
      if (cost !== "" && (Number(cost) === 12 ? row[1] < 12 : row[1] !== Number(cost))) return false;
      if (type !== "" && row[0] !== Number(type)) return false;
      if (kw !== "" && !(row[4] >> Number(kw) & 1)) return false;
      return true;
    });
    if (sortKey !== undefined) shown.sort((a, b) => DATA.cards[a][sortKey] - DATA.cards[b][sortKey] || a - b);
    else shown.sort((a, b) => a - b);
    $("pool-count").textContent = shown.length + " of " + d.pool.length + " cards";
    shown.forEach((baseId) => {
      const action = "CHOOSE " + baseId;
      const n = counts[baseId] || 0;
      if (d.actions.includes(action)) {
        const button = cardButton(baseId, action, "choose " + cardLabel(baseId) + (n ? " (" + n + " in your deck)" : ""), d);
        if (n) button.appendChild(el("span", "copies", "×" + n));
        pool.appendChild(button);
      } else {
        const card = drawCard(baseId);
        card.classList.add("unavailable");
        const wrap = el("div", "card-button off");
        wrap.appendChild(card);
        wrap.appendChild(el("span", "copies", "×" + n));
        pool.appendChild(wrap);
      }
    });
    $("moves").appendChild(el("li", "help", d.actions.length + " cards can be chosen: use the pool (Tab, Enter) or 1…9 for the first shown."));
  }

  function drawMyDeck(d) {
    const box = $("my-deck");
    box.replaceChildren();
    const deck = d.kind === "construct" ? d.moves.map((m) => Number(m.split(" ")[1])) : d.deck;
    $("my-deck-title").textContent = "Your deck: " + deck.length + " / 30";
    deck.slice().sort((a, b) => DATA.cards[a][1] - DATA.cards[b][1] || a - b).forEach((baseId) => {
      if (d.kind === "construct") {
        const button = el("button", "card-button");
        button.type = "button";
        button.appendChild(drawCard(baseId));
        button.dataset.remove = baseId;
        button.setAttribute("aria-label", "take back " + cardLabel(baseId));
        button.onclick = () => send({ remove: baseId }, d.id);
        box.appendChild(button);
      } else {
        box.appendChild(drawCard(baseId));
      }
    });
    const curve = $("curve");
    curve.replaceChildren();
    const byCost = [0, 0, 0, 0, 0, 0, 0, 0];
    deck.forEach((id) => { byCost[Math.min(7, DATA.cards[id][1])] += 1; });
    const most = Math.max(1, ...byCost);
    byCost.forEach((n, cost) => {
      const bar = el("div", "bar");
      bar.dataset.cost = cost;
      bar.dataset.count = n;
      bar.title = n + " card" + (n === 1 ? "" : "s") + " of cost " + (cost === 7 ? "7+" : cost);
      const fill = el("div", "fill");
      fill.style.height = Math.round(100 * n / most) + "%";
      bar.append(el("span", "n", n || ""), fill, el("span", "c", cost === 7 ? "7+" : String(cost)));
      curve.appendChild(bar);
    });
  }

  /* ---- battle ---- */
  function showBattle(frame, prev, targets) {
    $("battle").hidden = false;
    BOARD.drawBattle(frame, prev);
    return targets;
  }

  function describe(action, frame) {
    const [kind, a, b] = action.split(" ");
    const seat = frame.handOf;
    const inHand = frame.hand.find(([id]) => String(id) === a);
    const mine = frame.sides[seat].board.find((c) => String(c.id) === a);
    const theirs = frame.sides[1 - seat].board.find((c) => String(c.id) === b);
    const own = frame.sides[seat].board.find((c) => String(c.id) === b);
    const what = inHand ? cardLabel(inHand[1]) + " (id " + a + ")" : mine ? "creature " + a + " (" + mine.attack + "/" + mine.defense + ")" : a;
    if (kind === "SUMMON") {
      return "Summon " + what + (b === undefined || b === "-1" ? "" : b === "0" ? " to the left lane" : " to the right lane");
    }
    const target = b === "-1" ? "the opponent" : theirs ? "enemy creature " + b + " (" + theirs.attack + "/" + theirs.defense + ")"
      : own ? "your creature " + b + " (" + own.attack + "/" + own.defense + ")" : "creature " + b;
    return (kind === "ATTACK" ? "Attack " : "Use ") + target + (kind === "ATTACK" ? " with " : ": ") + what;
  }

  function addMove(action, label, d, keyHint) {
    const item = el("li");
    const button = el("button", "move", label);
    button.type = "button";
    button.dataset.action = action;
    button.title = action;
    button.onclick = () => send({ action: action }, d.id);
    if (keyHint) button.setAttribute("aria-keyshortcuts", keyHint);
    item.appendChild(button);
    $("moves").appendChild(item);
    return button;
  }

  function drawTurn(d) {
    const frame = d.frame;
    showBattle(frame, null, []);
    const endTurn = $("end-turn");
    endTurn.hidden = !d.actions.includes("PASS");
    if (!endTurn.hidden) endTurn.dataset.action = "PASS";
    endTurn.onclick = () => send({ action: "PASS" }, d.id);
    const moves = d.actions.filter((a) => a !== "PASS");
    moves.forEach((action) => addMove(action, describe(action, frame), d));
    if (!moves.length) $("moves").appendChild(el("li", "help", "No move left: end the turn."));
    // Clickable sources: hand cards and creatures with moves.
    const bySource = {};
    moves.forEach((action) => { const id = action.split(" ")[1]; (bySource[id] = bySource[id] || []).push(action); });
    document.querySelectorAll("#hand .card, #board-" + d.seat + " .card.creature").forEach((card) => {
      const id = card.dataset.id;
      if (!bySource[id]) {
        const reason = whyNot(card, frame);
        card.classList.add("idle");
        card.dataset.why = reason;
        card.title += "\n\nNot now: " + reason;
        card.onclick = () => why(card, reason);
        return;
      }
      card.classList.add("playable");
      card.tabIndex = -1;
      card.onclick = () => { selected = selected === id ? null : id; lightTargets(d, bySource); };
    });
    lightTargets(d, bySource);
  }

  /* Why a card of the hand or a creature of the board has no move now, in words. */
  function whyNot(card, frame) {
    const seat = frame.handOf;
    const me = frame.sides[seat], opp = frame.sides[1 - seat];
    const id = Number(card.dataset.id);
    if (card.classList.contains("creature")) {
      const c = me.board.find((x) => x.id === id);
      if (!c) return "it cannot act now.";
      if (c.attacked) return "creature " + id + " has already attacked this turn.";
      if (!c.canAttack) return "creature " + id + " was summoned this turn: it can attack from your next turn (unless it has Charge).";
      return "creature " + id + " has nothing it may attack now.";
    }
    const [type, cost] = DATA.cards[card.dataset.card];
    if (cost > me.mana) {
      return "not enough mana: it costs " + cost + ", you have " + me.mana + " left this turn.";
    }
    if (type === 0) {
      const size = DATA.rules.laneSize || 6;
      return DATA.rules.lanes > 1 ? "both your lanes are full (" + size + " creatures each)."
        : "your board is full (" + size + " creatures).";
    }
    if (type === 1 && !me.board.length) return "a green item goes on one of your creatures: you have none on the board.";
    if (type === 2 && !opp.board.length) return "a red item goes on an enemy creature: the opponent has none.";
    return "it has no target it may be played on now.";
  }

  function why(card, reason) {
    say("#" + card.dataset.card + (card.dataset.id ? " (id " + card.dataset.id + ")" : "") + ": " + reason, "why");
  }

  function lightTargets(d, bySource) {
    document.querySelectorAll(".can-target, .selected").forEach((node) => {
      node.classList.remove("can-target", "selected");
      delete node.dataset.targetAction;
      if (!node.classList.contains("playable")) node.onclick = null;
    });
    document.querySelectorAll(".card.playable").forEach((card) => {  // a creature can be both
      const id = card.dataset.id;
      card.onclick = () => { selected = selected === id ? null : id; lightTargets(d, bySource); };
    });
    if (selected === null || !bySource[selected]) { selected = null; return; }
    document.querySelectorAll('#battle .card[data-id="' + selected + '"]').forEach((n) => n.classList.add("selected"));
    const opp = 1 - d.seat;
    bySource[selected].forEach((action) => {
      const [kind, , b] = action.split(" ");
      let node = null;
      if (kind === "SUMMON") {
        node = b === undefined || DATA.rules.lanes < 2 ? $("board-" + d.seat).querySelector(".lane")
          : $("board-" + d.seat).querySelector('.lane[data-lane="' + b + '"]');
      } else if (b === "-1") {
        node = $("player-" + opp);
      } else {
        node = document.querySelector('#board-' + opp + ' .card[data-id="' + b + '"]') ||
               document.querySelector('#board-' + d.seat + ' .card[data-id="' + b + '"]');
      }
      if (!node) return;
      node.classList.add("can-target");
      node.dataset.targetAction = action;
      node.onclick = (event) => { event.stopPropagation(); send({ action: action }, d.id); };
    });
  }

  /* ---- the side column and the end ---- */
  function drawEvents() {
    const events = $("events");
    events.replaceChildren();
    const recent = [];  // the last 12 lines, oldest first
    for (let i = Math.max(0, shownFrame); i >= 0 && recent.length < 12; i--) {
      const f = frames[i];
      if (!f) break;
      f.events.slice().reverse().forEach((text) => recent.push([text, f]));
    }
    recent.slice(0, 12).reverse().forEach(([text, f]) => events.appendChild(BOARD.eventItem(text, f, nameOf)));
    if (!recent.length) events.appendChild(el("li", "help", "What the referee sees happen is told here."));
    events.scrollTop = events.scrollHeight;
  }

  function drawEnd(data) {
    const end = $("end");
    end.hidden = !data.over;
    $("download").hidden = !data.over;
    if (!data.over) { delete end.dataset.winner; return; }
    const e = data.end;
    end.replaceChildren();
    end.dataset.winner = e.winner === null ? -1 : e.winner;
    end.dataset.reason = e.reason;
    let text = e.winner === null ? "No winner" : playerName(e.winner) + " wins";
    if (ROLE === "play" && data.humans.length === 1 && e.winner !== null) {
      text = e.winner === data.humans[0] ? "You win!" : "You lose — " + playerName(e.winner) + " wins";
    }
    end.appendChild(el("b", e.winner === null ? "" : "p" + e.winner, text));
    end.appendChild(el("span", "", " — " + (e.cause || e.reason) + (e.scores ? " · scores " + e.scores.join(" : ") : " · no result")));
    const link = el("a", "", "Download the game log (replay it with locm view)");
    link.href = "log.json";
    link.download = "game.json";
    end.appendChild(el("br"));
    end.appendChild(link);
  }

  /* ---- the rules panel (board.js) ---- */
  const RULES = LocmRules(BOARD);
  const showRules = RULES.show, toggleRules = RULES.toggle;
  showRules("1.2");  // until the server says which

  /* ---- keys ---- */
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;
    const d = latest && latest.decision;
    const key = e.key;
    if (key === "?") { toggleRules(); e.preventDefault(); return; }
    if (key === "Escape" && !$("rules").hidden) { toggleRules(false); return; }
    if (key === "s" || key === "S") { skipFrames(); return; }
    if ((key === "l" || key === "L") && latest && latest.over) { $("download").click(); return; }
    if (key === "Escape") { selected = null; document.querySelectorAll(".can-target, .selected").forEach((n) => n.classList.remove("can-target", "selected")); return; }
    if (key === "m" || key === "M") {
      const first = ["#offered [data-action]", "#pool [data-action]", "#moves [data-action]", "#end-turn:not([hidden])"]
        .map((selector) => document.querySelector(selector)).find((node) => node);
      if (first) { first.focus(); e.preventDefault(); }
      return;
    }
    if (!d || animTimer) return;
    if ((key === "e" || key === "E") && d.kind === "battle") { e.preventDefault(); send({ action: "PASS" }, d.id); return; }
    if ((key === "a" || key === "A") && d.kind !== "battle") { e.preventDefault(); send({ auto: true }, d.id); return; }
    if (/^[1-9]$/.test(key)) {
      const scope = d.kind === "draft" ? "#offered" : d.kind === "construct" ? "#pool" : "#moves";
      const options = document.querySelectorAll(scope + " [data-action]");
      const chosen = options[Number(key) - 1];
      if (chosen) { e.preventDefault(); chosen.click(); }
    }
  });
  $("speed").onchange = () => { if (animTimer) { clearTimeout(animTimer); stepFrames(); } };

  poll();
})();
