"""One LOCM game between two players, as the official referee runs it.

The protocol game (text in, text out, the official errors and quirks), player
processes and in-process agents behind one small interface, the bubblewrap sandbox,
time limits, the GameResult log and its replay.
"""
