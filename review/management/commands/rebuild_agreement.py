"""The former name of `rebuild_figures`, kept for scripts that call it."""

from review.management.commands.rebuild_figures import Command  # noqa: F401
