"""The LOCM side of the ladder: building submissions and playing ladder games."""
