"""Shared Deck: a two-player card game served over TCP to many bots at once.

Layers, bottom to top (nothing lower imports anything higher; ``lint-imports`` checks it with
the contracts in ``pyproject.toml``):

- :mod:`.errors`, :mod:`.rules`, :mod:`.deck`, :mod:`.match`, :mod:`.arena`:
  the pure game (no I/O, deterministic given a seed);
- :mod:`.protocol`: the text protocol, commands in and answers out;
- :mod:`.store` (SQLite), :mod:`.logins` (secret checks, rationed),
  :mod:`.server` (asyncio TCP and the turn clock; tick listeners and a read-only
  ``ServerView`` for observers), :mod:`.results` (the results tables),
  :mod:`.client` (Python client library);
- :mod:`.dashboard` (the web dashboard, the only module that imports aiohttp), :mod:`.bots`;
- :mod:`.cli`: the ``shared-deck`` command, which wires the dashboard to the server.

The specification is ``shared/spec/shared-deck.md``; ``docs/shared-deck.md`` documents it.
"""
