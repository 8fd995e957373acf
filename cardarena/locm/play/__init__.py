"""Play LOCM yourself: a human seat in the browser, against any bot (``locm play -p1 human``).

:mod:`.session` runs the referee's game loop with the person's seat as one more
:class:`~cardarena.locm.referee.players.Player` (the log is the same GameResult) and says
what a page may see and do; :mod:`.server` (aiohttp, imported lazily) serves the page,
``play.html/js/css`` drawn with the viewer's ``board.js`` and ``viewer.css``.
"""

HUMAN = "human"
"""The player spec of a person's seat (``-p1 human``)."""
