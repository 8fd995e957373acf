/* The LOCM replay viewer: draws the frames that cardarena computed with its engine.
   Plain JavaScript, no dependencies, no network: the game is in #game-data. */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("game-data").textContent);
  const FRAMES = DATA.frames;
  const CARDS = DATA.cards;
  const KEYWORDS = [["B", "Breakthrough"], ["C", "Charge"], ["D", "Drain"], ["G", "Guard"],
                    ["L", "Lethal"], ["W", "Ward"]];
  const KINDS = ["creature", "green item", "red item", "blue item"];
  const AREAS = ["", "lane", "both lanes"];
  const $ = (id) => document.getElementById(id);
  let current = 0;
  let timer = null;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  function playerName(p) { return DATA.players[p] + " (player " + p + ")"; }
  function keywordText(bits) {
    return KEYWORDS.filter((_, i) => bits >> i & 1).map((k) => k[1]).join(", ");
  }

  /* A card as a card: cost, type colour, attack/defense, keyword badges, effects, area. */
  function drawCard(baseId, opts) {
    opts = opts || {};
    const row = CARDS[String(baseId)];
    const [type, cost, attack, defense, keywords, myHealth, oppHealth, draw, area] = row;
    const card = el("div", "card t" + type);
    card.dataset.card = baseId;
    card.dataset.type = type;
    if (opts.id !== undefined) card.dataset.id = opts.id;
    card.appendChild(el("div", "cost", cost));
    if (type !== 0) card.appendChild(el("div", "kind", KINDS[type]));
    card.appendChild(el("div", "ids", (opts.id !== undefined ? "id " + opts.id + " · " : "") + "#" + baseId));
    const kwBits = opts.keywords !== undefined ? opts.keywords : keywords;
    const kw = el("div", "kw");
    const count = KEYWORDS.filter((_, i) => kwBits >> i & 1).length;
    if (count > 2) kw.classList.add("many");  // letters only, or they do not fit
    if (type === 2) kw.classList.add("removes");  // a red item takes these away
    KEYWORDS.forEach(([letter, name], i) => {
      if (kwBits >> i & 1) {
        const badge = el("span", "badge");
        badge.append(el("span", "long", name), el("span", "short", letter));
        badge.dataset.keyword = letter;
        badge.title = (type === 2 ? "removes " : "") + name;
        kw.appendChild(badge);
      }
    });
    card.dataset.keywords = KEYWORDS.map(([l], i) => (kwBits >> i & 1 ? l : "-")).join("");
    card.appendChild(kw);
    const fx = [];
    if (myHealth) fx.push((myHealth > 0 ? "+" : "") + myHealth + " HP you");
    if (oppHealth) fx.push((oppHealth > 0 ? "+" : "") + oppHealth + " HP foe");
    if (draw) fx.push("draw " + draw);
    if (fx.length) card.appendChild(el("div", "fx", fx.join(" · ")));
    if (DATA.rules.area && area) {
      const mark = el("div", "area", area === 1 ? "LANE" : "BOTH LANES");
      mark.title = "area: " + AREAS[area];
      mark.dataset.area = area;
      card.appendChild(mark);
    }
    const shownAttack = opts.attack !== undefined ? opts.attack : attack;
    const shownDefense = opts.defense !== undefined ? opts.defense : defense;
    if (type === 0 || attack || defense) {
      const signed = (v) => (type !== 0 && v > 0 ? "+" + v : String(v));
      const att = el("div", "att", signed(shownAttack));
      const def = el("div", "def", signed(shownDefense));
      if (type === 0) {
        if (shownAttack > attack) att.classList.add("buffed");
        if (shownDefense < defense) def.classList.add("hurt");
        else if (shownDefense > defense) def.classList.add("buffed");
      }
      att.title = "attack"; def.title = "defense";
      card.appendChild(att);
      card.appendChild(def);
    }
    card.title = KINDS[type] + " #" + baseId + ", cost " + cost +
      (type === 0 || attack || defense ? ", " + attack + "/" + defense : "") +
      (keywords ? ", " + keywordText(keywords) : "");
    return card;
  }

  function drawCreature(c, extraClass, dim) {
    const card = drawCard(c.card, { id: c.id, attack: c.attack, defense: c.defense, keywords: c.keywords });
    card.classList.add("creature");
    card.dataset.attack = c.attack;
    card.dataset.defense = c.defense;
    card.dataset.lane = c.lane;
    if (dim && !c.canAttack) card.classList.add("cannot-attack");
    if (extraClass) card.classList.add(extraClass);
    return card;
  }

  function addDelta(node, delta) {
    if (!delta) return;
    const d = el("span", "delta " + (delta < 0 ? "minus" : "plus"), (delta > 0 ? "+" : "") + delta);
    d.dataset.delta = delta;
    node.appendChild(d);
  }

  /* ---- battle ---- */
  function previousBattle(index) {
    const prev = FRAMES[index - 1];
    return prev && prev.sides ? prev : null;
  }

  function drawPlayer(frame, p, prev) {
    const side = frame.sides[p];
    const box = $("player-" + p);
    box.replaceChildren();
    box.classList.remove("target");
    delete box.dataset.highlight;
    box.classList.toggle("active", frame.kind !== "end" && frame.active === p);
    box.dataset.health = side.health;
    box.dataset.mana = side.mana;
    box.dataset.maxMana = side.maxMana;
    box.dataset.deck = side.deck;
    box.dataset.hand = side.handSize;
    const name = el("div", "name p" + p, playerName(p));
    box.appendChild(name);
    const health = el("span", "stat health");
    health.title = "health";
    health.appendChild(el("span", "icon", "❤"));
    const hv = el("span", "value", side.health);
    hv.dataset.field = "health";
    health.appendChild(hv);
    if (prev) addDelta(health, side.health - prev.sides[p].health);
    box.appendChild(health);
    const mana = el("span", "stat mana");
    mana.title = "mana left / maximum";
    const crystals = el("span", "crystals");
    for (let i = 0; i < side.maxMana; i++) crystals.appendChild(el("span", "crystal" + (i < side.mana ? " full" : "")));
    mana.appendChild(crystals);
    const mv = el("span", "value", side.mana + "/" + side.maxMana);
    mv.dataset.field = "mana";
    mana.appendChild(mv);
    box.appendChild(mana);
    const deck = el("span", "stat", "deck " + side.deck);
    deck.dataset.field = "deck";
    box.appendChild(deck);
    const hand = el("span", "stat", "hand " + side.handSize);
    hand.dataset.field = "hand";
    box.appendChild(hand);
    if (side.rune !== null) {
      const rune = el("span", "stat", "next rune " + side.rune);
      rune.title = "health at which the next rune breaks (a bonus draw)";
      rune.dataset.field = "rune";
      box.appendChild(rune);
    }
    if (side.draw > 1) box.appendChild(el("span", "stat", "next draw " + side.draw));
  }

  function drawBoard(frame, p, prev) {
    const board = $("board-" + p);
    board.replaceChildren();
    const lanes = [];
    for (let lane = 0; lane < DATA.rules.lanes; lane++) {
      const box = el("div", "lane");
      box.dataset.lane = lane;
      if (DATA.rules.lanes > 1) box.appendChild(el("span", "lane-label", lane === 0 ? "left lane (0)" : "right lane (1)"));
      board.appendChild(box);
      lanes.push(box);
    }
    const before = {};
    if (prev) prev.sides[p].board.forEach((c) => { before[c.id] = c; });
    frame.sides[p].board.forEach((c) => {
      const card = drawCreature(c, "", p === frame.active && frame.kind !== "end");
      const old = before[c.id];
      if (old && frame.kind === "action") addDelta(card, c.defense - old.defense);
      lanes[c.lane].appendChild(card);
    });
    (frame.dead || []).filter((c) => c.side === p).forEach((c) => {
      const card = drawCreature(c, "dead");
      card.dataset.dead = "1";
      lanes[c.lane].appendChild(card);
    });
  }

  function highlight(frame) {
    const banner = $("action");
    banner.replaceChildren();
    for (const key of ["type", "player", "id", "target"]) delete banner.dataset[key];
    const a = frame.action;
    if (!a) {
      if (frame.kind === "turn") {
        banner.appendChild(el("span", "what p" + frame.active, "Turn " + frame.turn + ": " + playerName(frame.active) + " to play"));
      }
      return;
    }
    banner.dataset.type = a.type;
    banner.dataset.player = a.player;
    banner.dataset.id = a.id;
    banner.dataset.target = a.target;
    const opp = 1 - a.player;
    const find = (side, id) => $("board-" + side).querySelector('.card[data-id="' + id + '"]');
    banner.appendChild(el("span", "what p" + a.player, a.text));
    if (a.type === "ATTACK") {
      const attacker = find(a.player, a.id);
      if (attacker) { attacker.classList.add("acting"); attacker.dataset.highlight = "source"; }
      banner.appendChild(el("span", "arrow", "⚔ →"));
      markTarget(opp, a.target, find);
      banner.appendChild(el("span", "", a.target === -1 ? "the opponent" : "creature " + a.target));
    } else if (a.type === "SUMMON") {
      const summoned = find(a.player, a.id);
      if (summoned) { summoned.classList.add("acting"); summoned.dataset.highlight = "source"; }
      const lane = summoned ? summoned.parentNode : null;
      if (lane && DATA.rules.lanes > 1) lane.classList.add("summon-lane");
      if (a.card !== undefined) banner.appendChild(drawCard(a.card, { id: a.id }));
      banner.appendChild(el("span", "arrow", "→"));
      banner.appendChild(el("span", "", DATA.rules.lanes > 1 ? "lane " + Math.max(a.target, 0) : "the board"));
    } else if (a.type === "USE") {
      if (a.card !== undefined) {
        const item = drawCard(a.card, { id: a.id });
        item.classList.add("acting");
        item.dataset.highlight = "source";
        banner.appendChild(item);
      }
      banner.appendChild(el("span", "arrow", "→"));
      const row = a.card !== undefined ? CARDS[String(a.card)] : null;
      const side = row && row[0] === 1 ? a.player : opp;
      markTarget(side, a.target, find);
      banner.appendChild(el("span", "", a.target === -1 ? "the opponent" : "creature " + a.target));
    }
  }

  function markTarget(side, id, find) {
    const target = id === -1 ? $("player-" + side) : find(side, id);
    if (target) { target.classList.add("target"); target.dataset.highlight = "target"; }
  }

  function drawHand(frame) {
    const box = $("hand");
    box.replaceChildren();
    const who = frame.active;
    $("hand-title").textContent = "Hand of " + playerName(who) + " (" + frame.hand.length + ")";
    $("hand-title").className = "p" + who;
    box.dataset.player = who;
    frame.hand.forEach(([id, baseId]) => box.appendChild(drawCard(baseId, { id: id })));
  }

  function drawBattle(frame, index) {
    const prev = previousBattle(index);
    drawPlayer(frame, 0, prev);
    drawPlayer(frame, 1, prev);
    drawBoard(frame, 0, prev);
    drawBoard(frame, 1, prev);
    highlight(frame);
    drawHand(frame);
  }

  /* ---- deck building ---- */
  function drawDeckBuilding(frame) {
    const draft = frame.kind === "draft";
    $("deck-title").textContent = draft
      ? "Draft pick " + (frame.round + 1) + " of 30"
      : "Constructed: each player chooses 30 cards from the pool of " + DATA.pool.length;
    const offered = $("offered");
    offered.replaceChildren();
    offered.hidden = !draft;
    if (draft) {
      frame.offered.forEach((baseId, i) => {
        const card = drawCard(baseId);
        card.dataset.index = i;
        const picks = el("div", "pick");
        (frame.picks || []).forEach((picked, p) => {
          if (picked === baseId) {
            card.classList.add("picked-" + p);
            card.dataset["picked" + p] = "1";
            picks.appendChild(el("span", "badge p" + p, "P" + p));
          }
        });
        card.appendChild(picks);
        offered.appendChild(card);
      });
    }
    for (const p of [0, 1]) {
      const chosen = draft ? DATA.chosen[p].slice(0, frame.round + 1) : DATA.chosen[p];
      const box = $("deck-" + p);
      box.replaceChildren();
      document.querySelector('.deck[data-player="' + p + '"] h3').textContent =
        playerName(p) + ": " + chosen.length + " card" + (chosen.length === 1 ? "" : "s") +
        (draft && frame.lines ? "   ›  " + (frame.lines[p] === null ? "(no answer)" : frame.lines[p]) : "");
      chosen.slice().sort((a, b) => CARDS[a][1] - CARDS[b][1] || a - b)
        .forEach((baseId) => box.appendChild(drawCard(baseId)));
    }
    const pool = $("pool");
    pool.replaceChildren();
    pool.hidden = draft;
    $("pool-title").hidden = draft;
    if (!draft) {
      DATA.pool.forEach((baseId) => {
        const card = drawCard(baseId);
        const picks = el("div", "pick");
        for (const p of [0, 1]) {
          const n = DATA.chosen[p].filter((id) => id === baseId).length;
          if (n) {
            card.classList.add("picked-" + p);
            picks.appendChild(el("span", "badge p" + p, "P" + p + "×" + n));
          }
        }
        card.appendChild(picks);
        pool.appendChild(card);
      });
    }
  }

  /* ---- the side column ---- */
  function drawSide(frame) {
    const line = $("line");
    if (frame.kind === "turn" || frame.kind === "action") {
      line.textContent = playerName(frame.active) + ":\n" + (frame.line === null ? "(no answer: timeout)" : frame.line);
    } else if (frame.lines) {
      line.textContent = frame.lines.map((l, p) => "player " + p + ": " + (l === null ? "(no answer)" : l)).join("\n");
    } else {
      line.textContent = "";
    }
    const events = $("events");
    events.replaceChildren();
    frame.events.forEach((text) => {
      const item = el("li", /\[Warning\]/.test(text) ? "warning" : /timeout|Invalid|didn't|wrong/i.test(text) ? "error" : "", text);
      events.appendChild(item);
    });
    drawInput(frame);
    for (const p of [0, 1]) {
      const index = frame.answers[p];
      const text = index >= 0 ? DATA.stderr[p][index] || "" : "";
      $("stderr-" + p).textContent = text || "(nothing)";
      const summary = $("stderr-box-" + p).querySelector("summary");
      summary.textContent = "stderr of " + playerName(p) + (index >= 0 ? ", answer " + (index + 1) : "");
      summary.className = "p" + p;
    }
  }

  /* The exact text the bot(s) read for the turn being shown (the turn's first frame has it). */
  function drawInput(frame) {
    let index = current;
    while (index > 0 && !FRAMES[index].inputs && FRAMES[index].kind === "action") index--;
    const source = FRAMES[index].inputs ? FRAMES[index] : null;
    const box = $("input");
    if (!source) { box.textContent = "(no input in this frame)"; return; }
    if (source.inputs.length === 1) {
      box.textContent = source.inputs[0];
      box.dataset.player = source.active;
    } else {
      box.textContent = source.inputs.map((text, p) => "── player " + p + " ──\n" + text).join("");
      delete box.dataset.player;
    }
  }

  function drawEnd(frame) {
    const end = $("end");
    end.hidden = frame.kind !== "end";
    if (frame.kind !== "end") return;
    end.replaceChildren();
    end.dataset.winner = frame.winner === null ? "" : frame.winner;
    end.dataset.reason = frame.reason;
    const text = frame.winner === null ? "No winner" : playerName(frame.winner) + " wins";
    end.appendChild(el("b", frame.winner === null ? "" : "p" + frame.winner, text));
    end.appendChild(el("span", "", " — " + frame.reason + (frame.scores ? " · scores " + frame.scores.join(" : ") : " · no result")));
  }

  /* ---- navigation ---- */
  function show(index, fromHash) {
    index = Math.max(0, Math.min(FRAMES.length - 1, index | 0));
    current = index;
    const frame = FRAMES[index];
    const battle = !!frame.sides;
    $("battle").hidden = !battle;
    $("deckbuilding").hidden = battle || frame.kind === "end";
    if (battle) drawBattle(frame, index);
    else if (frame.kind !== "end") drawDeckBuilding(frame);
    drawEnd(frame);
    drawSide(frame);
    $("frame-index").textContent = index;
    $("turn").textContent = frame.turn || "-";
    $("phase-label").textContent = { draft: "draft", construct: "deck building", turn: "battle",
                                     action: "battle", end: "game over" }[frame.kind];
    document.body.dataset.frame = index;
    document.body.dataset.kind = frame.kind;
    $("slider").value = index;
    if (!fromHash) {
      const hash = "#frame=" + index;
      try { history.replaceState(null, "", hash); } catch (e) { location.replace(hash); }
    }
  }

  function turnStarts() {
    const starts = [];
    FRAMES.forEach((f, i) => { if (f.kind !== "action") starts.push(i); });
    return starts;
  }
  const STARTS = turnStarts();
  function nextTurn() { const n = STARTS.find((i) => i > current); show(n === undefined ? FRAMES.length - 1 : n); }
  function prevTurn() {
    const earlier = STARTS.filter((i) => i < current);
    show(earlier.length ? earlier[earlier.length - 1] : 0);
  }
  function play() {
    if (timer) { clearInterval(timer); timer = null; $("play").classList.remove("playing"); $("play").textContent = "▶ play"; return; }
    if (current >= FRAMES.length - 1) show(0);
    $("play").classList.add("playing");
    $("play").textContent = "❚❚ pause";
    timer = setInterval(() => {
      if (current >= FRAMES.length - 1) { play(); return; }
      show(current + 1);
    }, Number($("speed").value));
  }
  function frameFromHash() {
    const m = /frame=(\d+)/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }

  $("first").onclick = () => show(0);
  $("last").onclick = () => show(FRAMES.length - 1);
  $("step").onclick = () => show(current + 1);
  $("step-back").onclick = () => show(current - 1);
  $("next-turn").onclick = nextTurn;
  $("prev-turn").onclick = prevTurn;
  $("play").onclick = play;
  $("speed").onchange = () => { if (timer) { play(); play(); } };
  $("slider").oninput = (e) => show(Number(e.target.value));
  window.addEventListener("hashchange", () => { const f = frameFromHash(); if (f !== null && f !== current) show(f, true); });
  document.addEventListener("keydown", (e) => {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT")) return;  // the slider steps by itself
    const keys = { ArrowRight: () => show(current + 1), ArrowLeft: () => show(current - 1),
                   ArrowUp: nextTurn, ArrowDown: prevTurn, PageDown: nextTurn, PageUp: prevTurn,
                   Home: () => show(0), End: () => show(FRAMES.length - 1), " ": play };
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });

  $("version-badge").textContent = "LOCM " + DATA.version;
  const matchup = $("matchup");
  matchup.append(el("span", "p0", DATA.players[0]), " vs ", el("span", "p1", DATA.players[1]));
  $("frame-count").textContent = FRAMES.length - 1;
  $("slider").max = FRAMES.length - 1;
  const start = frameFromHash();
  show(start === null ? 0 : start, start !== null);
  document.body.dataset.ready = "1";
})();
