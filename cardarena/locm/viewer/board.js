/* The LOCM board, drawn the same way by the replay viewer (viewer.js) and the live play page
   (play/play.js): cards, the players' bars, both boards, the highlighted action, the hand.
   Plain JavaScript, no dependencies; every text goes in with textContent, never as HTML.
   LocmBoard(DATA) reads DATA.cards (base id -> card row, may grow), DATA.rules, DATA.players. */
"use strict";
window.LocmBoard = function (DATA) {
  const $ = (id) => document.getElementById(id);
  const KEYWORDS = [["B", "Breakthrough"], ["C", "Charge"], ["D", "Drain"], ["G", "Guard"],
                    ["L", "Lethal"], ["W", "Ward"]];
  /* What each keyword does, in words (docs/protocol.md section 8.4): badges' tooltips and
     the rules panel of the play page. */
  const KEYWORD_HELP = {
    B: "when it kills a defending creature, the damage left over hits the opponent",
    C: "can attack in the turn it is summoned",
    D: "when it deals damage while attacking, its player gains that much health",
    G: "enemy creatures must attack it before anything else (in 1.2 and 1.5: before anything else in its lane)",
    L: "any damage it deals to a creature kills that creature",
    W: "the next damage it would take is ignored, and the Ward is gone",
  };
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
  function keywordHelp(letter) {
    const name = KEYWORDS.find(([l]) => l === letter)[1];
    return name + ": " + KEYWORD_HELP[letter];
  }
  function listed(words) {
    return words.length < 2 ? words.join("") : words.slice(0, -1).join(", ") + " and " + words[words.length - 1];
  }
  function signed(v) { return (v > 0 ? "+" : v < 0 ? "−" : "") + Math.abs(v); }

  /* A card in words, as a person reads it: "Green item #126 (cost 3): give one of your
     creatures +2 attack, +3 defense and Charge. Then you gain 1 health." */
  function cardText(baseId) {
    const [type, cost, attack, defense, keywords, myHealth, oppHealth, draw, area] = DATA.cards[String(baseId)];
    const names = KEYWORDS.filter((_, i) => keywords >> i & 1).map((k) => k[1]);
    const head = KINDS[type][0].toUpperCase() + KINDS[type].slice(1) + " #" + baseId + " (cost " + cost + ")";
    const parts = [];
    const areaOn = DATA.rules.area ? area : 0;
    if (type === 0) {
      parts.push(head + ": attack " + attack + ", defense " + defense + (names.length ? ", " + listed(names) : "") + ".");
      if (areaOn === 1) parts.push("Summoned with a copy of itself in the same lane, if there is room.");
      if (areaOn === 2) parts.push("Summoned with a copy of itself in the other lane, if there is room.");
    } else {
      const changes = [];
      if (attack) changes.push(signed(attack) + " attack");
      if (defense) changes.push(signed(defense) + " defense");
      const whom = type === 1 ? ["one of your creatures", "each of your creatures in the target's lane", "each of your creatures"]
        : ["one enemy creature", "each enemy creature in the target's lane", "each enemy creature"];
      if (type === 1 && (changes.length || names.length)) {
        parts.push(head + ": give " + whom[areaOn] + " " + listed(changes.concat(names)) + ".");
      } else if (type === 2 && (changes.length || names.length)) {
        const what = changes.slice();
        if (names.length) what.push("remove its " + listed(names));
        parts.push(head + ": give " + whom[areaOn] + " " + listed(what) + ".");
      } else if (type === 3 && (changes.length || names.length)) {
        const what = changes.slice();
        if (names.length) what.push("remove its " + listed(names));
        parts.push(head + ": play it on " + whom[areaOn] + " (" + listed(what) + ")" +
                   (defense < 0 ? ", or on the opponent: " + -defense + " damage to their health." : ", or on the opponent."));
      } else {
        parts.push(head + ": " + (type === 1 ? "play it on one of your creatures." : type === 2 ? "play it on an enemy creature."
          : "play it on the opponent or an enemy creature."));
      }
    }
    const then = [];
    if (myHealth) then.push("you " + (myHealth > 0 ? "gain " : "lose ") + Math.abs(myHealth) + " health");
    if (oppHealth) then.push("the opponent " + (oppHealth > 0 ? "gains " : "loses ") + Math.abs(oppHealth) + " health");
    if (draw) then.push("you draw " + draw + " more card" + (draw > 1 ? "s" : "") + " next turn");
    if (then.length) parts.push((type === 0 ? "When summoned, " : "Then ") + listed(then) + ".");
    return parts.join(" ");
  }

  /* A card as a card: cost, type colour, attack/defense, keyword badges, effects, area.
     Laid out so that no text overlaps or leaves the card (tests/locm/test_play_browser.py
     renders every card and measures). */
  function drawCard(baseId, opts) {
    opts = opts || {};
    const row = DATA.cards[String(baseId)];
    const [type, cost, attack, defense, keywords, myHealth, oppHealth, draw, area] = row;
    const card = el("div", "card t" + type);
    card.dataset.card = baseId;
    card.dataset.type = type;
    if (opts.id !== undefined) card.dataset.id = opts.id;
    const costNode = el("div", "cost", cost);
    costNode.title = "costs " + cost + " mana";
    card.appendChild(costNode);
    const ids = el("div", "ids");
    ids.appendChild(el("span", "", "#" + baseId));
    if (opts.id !== undefined) ids.appendChild(el("span", "", "id " + opts.id));
    ids.title = "card #" + baseId + (opts.id !== undefined ? ", instance id " + opts.id + " (the id moves name)" : "");
    card.appendChild(ids);
    const kwBits = opts.keywords !== undefined ? opts.keywords : keywords;
    const kw = el("div", "kw");
    const shown = KEYWORDS.filter((_, i) => kwBits >> i & 1);
    // Whole names when they fit on one line, letters otherwise.
    if (shown.length > 2 || shown.map((k) => k[1]).join("").length > 9) kw.classList.add("many");
    if (type === 2) kw.classList.add("removes");  // a red item takes these away
    shown.forEach(([letter, name]) => {
      const badge = el("span", "badge");
      badge.append(el("span", "long", name), el("span", "short", letter));
      badge.dataset.keyword = letter;
      badge.title = (type === 2 || type === 3 ? "removes " : "") + keywordHelp(letter);
      kw.appendChild(badge);
    });
    card.dataset.keywords = KEYWORDS.map(([l], i) => (kwBits >> i & 1 ? l : "-")).join("");
    card.appendChild(kw);
    const fx = [];
    if (myHealth) fx.push("you " + signed(myHealth));
    if (oppHealth) fx.push("foe " + signed(oppHealth));
    if (draw) fx.push("draw " + draw);
    if (fx.length) {
      const node = el("div", "fx");
      fx.forEach((text) => node.appendChild(el("span", "", text)));  // wrapped between effects only
      node.title = "health changes (you, the opponent) and cards drawn next turn when it is played";
      card.appendChild(node);
    }
    const foot = el("div", "foot");
    if (type !== 0) foot.appendChild(el("div", "kind", KINDS[type]));
    if (DATA.rules.area && area) {
      const mark = el("div", "area", area === 1 ? "LANE" : "BOTH LANES");
      mark.title = type === 0 ? (area === 1 ? "summoned with a copy in the same lane" : "summoned with a copy in the other lane")
        : (area === 1 ? "acts on every creature of the target's lane" : "acts on every creature of the target's side");
      mark.dataset.area = area;
      foot.appendChild(mark);
    }
    if (foot.childNodes.length) card.appendChild(foot);
    const shownAttack = opts.attack !== undefined ? opts.attack : attack;
    const shownDefense = opts.defense !== undefined ? opts.defense : defense;
    if (type === 0 || attack || defense) {
      const value = (v) => (type !== 0 && v > 0 ? "+" + v : String(v));
      const att = el("div", "att", value(shownAttack));
      const def = el("div", "def", value(shownDefense));
      if (type === 0) {
        if (shownAttack > attack) att.classList.add("buffed");
        if (shownDefense < defense) def.classList.add("hurt");
        else if (shownDefense > defense) def.classList.add("buffed");
      }
      att.title = "attack"; def.title = "defense";
      if (att.textContent.length > 2) att.classList.add("wide");  // "-14": smaller figures
      if (def.textContent.length > 2) def.classList.add("wide");
      card.appendChild(att);
      card.appendChild(def);
    }
    card.title = cardText(baseId);
    return card;
  }

  /* The referee counts both players' turns (player 0 plays 1, 3, 5, …); a person counts
     their own: the referee's turn t is the ceil(t/2)-th turn of the player who plays it. */
  function ownTurn(turn) { return Math.ceil(turn / 2); }

  /* A line of the referee's report in words ("builtin:greedy summoned card #12 (id 5)
     into the left lane"); ``frame`` is the frame the line belongs to, ``nameOf(p)`` a
     player's name. Lines it does not know are shown as they are. */
  function eventWords(text, frame, nameOf) {
    nameOf = nameOf || ((p) => DATA.players[p]);
    let m = /^player ([01]) performed action: (SUMMON|ATTACK|USE) (-?\d+)(?: (-?\d+))?/.exec(text);
    if (m) {
      const p = Number(m[1]), id = Number(m[3]), target = m[4] === undefined ? -1 : Number(m[4]);
      const a = frame && frame.action && frame.action.id === id ? frame.action : null;
      const card = a && a.card !== undefined ? "card #" + a.card + " (id " + id + ")" : "card " + id;
      const creature = (cid) => {
        const all = frame && frame.sides ? frame.sides.flatMap((s) => s.board).concat(frame.dead || []) : [];
        const found = all.find((c) => c.id === cid);
        return "creature " + cid + (found ? " (#" + found.card + ")" : "");
      };
      const lane = DATA.rules.lanes > 1 ? (target === 1 ? " into the right lane" : " into the left lane") : "";
      if (m[2] === "SUMMON") {
        // A 1.5 area creature brings a copy (id + 1), when there was room for it.
        const row = a && a.card !== undefined ? DATA.cards[String(a.card)] : null;
        const copy = row && row[8] && DATA.rules.area && frame.sides &&
          frame.sides[p].board.find((c) => c.id === id + 1 && c.card === a.card);
        const where = copy ? (copy.lane === (target === 1 ? 1 : 0) ? " in the same lane" : " in the other lane") : "";
        return nameOf(p) + " summoned " + card + lane + (copy ? " and a copy (id " + (id + 1) + ")" + where : "");
      }
      const on = target === -1 ? "the opponent" : creature(target);
      const whose = nameOf(p) === "You" ? "Your" : nameOf(p) + "'s";
      if (m[2] === "ATTACK") return whose + " " + creature(id) + " attacked " + on;
      return nameOf(p) + " used " + card + " on " + on;
    }
    if ((m = /^\[Warning\] player ([01]) Action is not legal: (.*)$/s.exec(text))) {
      return nameOf(Number(m[1])) + " sent a move that is not legal, skipped: " + m[2];
    }
    if ((m = /^\[Warning\] player ([01]) Performed another (\d+) illegalActions/.exec(text))) {
      return nameOf(Number(m[1])) + " sent " + m[2] + " more moves that are not legal";
    }
    if ((m = /^player ([01]) won!$/.exec(text))) return nameOf(Number(m[1])) + " won";
    if ((m = /^player ([01]) timeout!$/.exec(text))) return nameOf(Number(m[1])) + " gave no answer in time";
    if ((m = /^player ([01]) chose card (\d+)$/.exec(text))) return nameOf(Number(m[1])) + " picked card #" + m[2];
    if ((m = /^player ([01]) chose cards (.*)$/s.exec(text))) return nameOf(Number(m[1])) + " chose the deck: " + m[2];
    if ((m = /^player ([01]) didn't choose correct number of cards!$/.exec(text))) {
      return nameOf(Number(m[1])) + " did not choose 30 cards";
    }
    if ((m = /^player ([01]): (.*)$/s.exec(text))) return nameOf(Number(m[1])) + " sent an invalid answer: " + m[2];
    return text;
  }

  /* One line of the referee's panel: the words, the protocol text as its tooltip. */
  function eventItem(text, frame, nameOf) {
    const cls = /\[Warning\]/.test(text) ? "warning" : /timeout|Invalid|didn't|wrong/i.test(text) ? "error" : "";
    const item = el("li", cls, eventWords(text, frame, nameOf));
    item.title = "the referee's log: " + text;
    return item;
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
    name.title = playerName(p);  // a long command is cut short on screen
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
        const what = el("span", "what p" + frame.active, "Turn " + ownTurn(frame.turn) + " of " + playerName(frame.active));
        what.title = what.textContent + " (the referee's turn " + frame.turn + ": it counts both players' turns)";
        banner.appendChild(what);
      }
      return;
    }
    banner.dataset.type = a.type;
    banner.dataset.player = a.player;
    banner.dataset.id = a.id;
    banner.dataset.target = a.target;
    const opp = 1 - a.player;
    const find = (side, id) => $("board-" + side).querySelector('.card[data-id="' + id + '"]');
    const what = el("span", "what p" + a.player, a.text);
    what.title = playerName(a.player) + " plays " + a.text;
    banner.appendChild(what);
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
      $("hand-title").title = "";
      $("hand-title").className = "";
      return;
    }
    const who = frame.handOf !== undefined ? frame.handOf : frame.active;
    $("hand-title").textContent = "Hand of " + playerName(who) + " (" + frame.hand.length + ")";
    $("hand-title").title = $("hand-title").textContent;
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

  return { el, drawCard, drawCreature, drawBattle, playerName, keywordText, keywordHelp, cardText,
           ownTurn, eventWords, eventItem, KEYWORDS, KEYWORD_HELP, KINDS };
};

/* The rules panel (rules.html) of the play page and the viewer: the sections of the game's
   version, every keyword's explanation, opened and closed by its buttons (the pages' "?" and
   Esc keys call toggle). */
window.LocmRules = function (BOARD) {
  const $ = (id) => document.getElementById(id);
  let shownFor = null;
  function show(version) {
    if (shownFor === version) return;
    shownFor = version;
    $("rules-version").textContent = version;
    document.querySelectorAll("#rules [data-versions]").forEach((node) => {
      node.hidden = !node.dataset.versions.split(" ").includes(version);
    });
    const list = $("rules-keywords");
    list.replaceChildren();
    BOARD.KEYWORDS.forEach(([letter, name]) => {
      const term = BOARD.el("dt", "", name + " (" + letter + ")");
      term.dataset.keyword = letter;
      list.append(term, BOARD.el("dd", "", BOARD.KEYWORD_HELP[letter].replace(/^./, (c) => c.toUpperCase()) + "."));
    });
  }
  function toggle(open) {
    const panel = $("rules");
    panel.hidden = open === undefined ? !panel.hidden : !open;
    $("rules-button").setAttribute("aria-expanded", String(!panel.hidden));
    if (!panel.hidden) panel.focus();
  }
  $("rules-button").onclick = () => toggle();
  $("rules-close").onclick = () => { toggle(false); $("rules-button").focus(); };
  return { show, toggle, isOpen: () => !$("rules").hidden };
};
