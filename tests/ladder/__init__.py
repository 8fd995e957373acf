"""The ladder: its store, scheduler and serve process."""
