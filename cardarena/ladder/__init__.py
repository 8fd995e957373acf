"""The ladder: a long-running competition where participants submit bots that play rated
games continuously, for any game.

The game-independent parts live here (ratings, matchmaking, the A/B test, uploads,
languages, the SQLite store, the scheduler, the web server); the LOCM specifics (building
a submission in the sandbox, playing one ladder game) live in ``cardarena.locm.ladder``.
Nothing here imports a game (an import-linter contract in pyproject.toml).
"""
