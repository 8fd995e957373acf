"""The ladder's templates, style sheet and script (package data, read by
:mod:`cardarena.ladder.server` through :func:`cardarena.pages.render`)."""
