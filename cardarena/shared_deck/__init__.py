"""Shared Deck: a two-player card game served over TCP to many bots at once.

Layers, bottom to top (nothing lower imports anything higher):

- :mod:`.errors`, :mod:`.rules`, :mod:`.deck`, :mod:`.match`, :mod:`.arena`:
  the pure game (no I/O, deterministic given a seed);
- :mod:`.protocol`: the text protocol, commands in and answers out;
- :mod:`.store` (SQLite), :mod:`.logins` (secret checks, rationed),
  :mod:`.server` (asyncio TCP and the turn clock),
  :mod:`.client` (Python client library), :mod:`.bots`;
- :mod:`.cli`: the ``shared-deck`` command.

The specification is ``shared/spec/shared-deck.md``; ``docs/shared-deck.md`` documents it.
"""
