"""Watching LOCM games in a browser: ``locm view``, ``locm report --html``, ``locm serve``.

:mod:`.frames` re-simulates a log into frames (pure Python, JSON-ready), :mod:`.page` inlines
them with ``viewer.html/css/js`` into one offline page, :mod:`.tournament_pages` adds
every game's page to the tournament report page, and :mod:`.serve` (aiohttp, imported
lazily) serves it all live.
"""
