"""Bots used by the referee tests, run as real processes."""
