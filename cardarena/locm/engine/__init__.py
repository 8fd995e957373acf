"""The LOCM rules engine: pure, deterministic given the game parameters, no I/O.

One engine for 1.0, 1.2 and 1.5, parameterised by a :class:`~.rules.RuleSet`: the
Java-compatible random generator, the cards and the 1.5 card generator, the game
parameters, deck building, :class:`~.state.State` (legal actions, apply, clone), the
player views and the bot input text. Nothing here imports numpy or any layer above.
"""
