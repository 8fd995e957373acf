/* The LOCM replay viewer: draws the frames that cardarena computed with its engine.
   Plain JavaScript, no dependencies, no network: the game is in #game-data. */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("game-data").textContent);
  const FRAMES = DATA.frames;
  const CARDS = DATA.cards;
  const $ = (id) => document.getElementById(id);
  let current = 0;
  let timer = null;

  const BOARD = LocmBoard(DATA);  /* board.js: cards, players, boards, hand */
  const { el, drawCard, playerName } = BOARD;
  function drawBattle(frame, index) { BOARD.drawBattle(frame, previousBattle(index)); }

  /* ---- battle ---- */
  function previousBattle(index) {
    const prev = FRAMES[index - 1];
    return prev && prev.sides ? prev : null;
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
    frame.events.forEach((text) => events.appendChild(BOARD.eventItem(text, frame)));  // in words, oldest first
    if (!frame.events.length) events.appendChild(el("li", "help", "nothing in this frame"));
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
    const cause = frame.cause || frame.reason;  // logs viewed before causes were in words
    end.appendChild(el("span", "", " — " + cause + (frame.scores ? " · scores " + frame.scores.join(" : ") : " · no result")));
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
    // Each player's own count (player 1's 3rd turn is "3 of player 1"), the referee's in the tooltip.
    const counted = frame.turn && frame.active !== undefined && frame.kind !== "end";
    $("turn").textContent = counted ? BOARD.ownTurn(frame.turn) + " of player " + frame.active : "-";
    $("turn").title = frame.turn ? "the referee's turn " + frame.turn + " (it counts both players' turns)" : "";
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
  const RULES = LocmRules(BOARD);
  RULES.show(DATA.version);
  document.addEventListener("keydown", (e) => {
    if (e.key === "?") { e.preventDefault(); RULES.toggle(); return; }
    if (e.key === "Escape" && RULES.isOpen()) { RULES.toggle(false); return; }
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
