/* The LOCM board, drawn the same way by the replay viewer (viewer.js) and the live play page
   (play/play.js): cards, the players' bars, both boards, the highlighted action, the hand.
   Plain JavaScript, no dependencies; every text goes in with textContent, never as HTML.
   LocmBoard(DATA) reads DATA.cards (base id -> card row, may grow), DATA.rules, DATA.players. */
"use strict";
window.LocmBoard = function (DATA) {
  const $ = (id) => document.getElementById(id);
  const KEYWORDS = [["B", "Breakthrough"], ["C", "Charge"], ["D", "Drain"], ["G", "Guard"],
                    ["L", "Lethal"], ["W", "Ward"]];
  const KINDS = ["creature", "green item", "red item", "blue item"];
  const AREAS = ["", "lane", "both lanes"];

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
    const row = DATA.cards[String(baseId)];
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
      const row = a.card !== undefined ? DATA.cards[String(a.card)] : null;
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
    if (frame.handOf === null) {  // a spectator of a live game sees no hand
      $("hand-title").textContent = "Hands are hidden from spectators";
      $("hand-title").className = "";
      return;
    }
    const who = frame.handOf !== undefined ? frame.handOf : frame.active;
    $("hand-title").textContent = "Hand of " + playerName(who) + " (" + frame.hand.length + ")";
    $("hand-title").className = "p" + who;
    box.dataset.player = who;
    frame.hand.forEach(([id, baseId]) => box.appendChild(drawCard(baseId, { id: id })));
  }

  function drawBattle(frame, prev) {
    drawPlayer(frame, 0, prev);
    drawPlayer(frame, 1, prev);
    drawBoard(frame, 0, prev);
    drawBoard(frame, 1, prev);
    highlight(frame);
    drawHand(frame);
  }

  return { el, drawCard, drawCreature, drawBattle, playerName, keywordText, KEYWORDS, KINDS };
};
