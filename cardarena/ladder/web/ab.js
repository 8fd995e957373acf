/* An A/B test's page follows the test live: GET /api/ab/ID every few seconds until it has
   ended and its last pairs are in. Server text goes in with textContent only; served as a
   file (the page's Content-Security-Policy runs no inline script). */
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const box = $("ab-test");
  if (!box) return;
  const address = "/api/ab/" + encodeURIComponent(box.dataset.test);
  const every = 1000 * (Number(box.dataset.refresh) || 3);
  const fixed = (x, digits) => Number(x).toFixed(digits);

  function show(test) {
    const state = $("ab-state");
    state.textContent = test.state;
    state.className = "status ab-" + test.state;
    $("ab-reason").textContent = test.reason || "";
    $("ab-pairs").textContent = test.pairs;
    $("ab-max-pairs").textContent = test.max_pairs;
    $("ab-in-flight").textContent = test.pairs_in_flight;
    $("ab-pentanomial").textContent = test.pentanomial.join(" · ");
    $("ab-elo").textContent =
      fixed(test.elo.value, 1) + " [" + fixed(test.elo.low, 1) + ", " + fixed(test.elo.high, 1) + "]";
    $("ab-llr").textContent = fixed(test.llr, 3);
    $("ab-lower").textContent = fixed(test.bounds[0], 3);
    $("ab-upper").textContent = fixed(test.bounds[1], 3);
    const span = test.bounds[1] - test.bounds[0];
    $("ab-progress").value = Math.max(0, Math.min(1000, Math.round(((test.llr - test.bounds[0]) / span) * 1000)));
    const stop = $("ab-stop");
    if (stop && test.state !== "running") stop.remove();
    return test.state === "running" || test.pairs_in_flight > 0;
  }

  function follow() {
    fetch(address, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then((answer) => (answer.ok ? answer.json() : null))
      .then((test) => {
        if (test === null || show(test)) setTimeout(follow, every);
      })
      .catch(() => setTimeout(follow, every));
  }
  setTimeout(follow, every);
})();
