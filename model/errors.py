"""Errors a writer or a script can act on. Each names what was wrong and what to do."""

from __future__ import annotations


class RedraftError(Exception):
    """Base of every error Redraft raises on purpose."""


class RequestError(RedraftError, ValueError):
    """An edit request that cannot be run as given (bad span, bad options...)."""


class ModelLoadError(RedraftError):
    """A model folder or hub id that cannot be loaded."""


class EditCancelled(RedraftError):
    """Raised inside the engine's generator when the caller cancelled between passes."""
