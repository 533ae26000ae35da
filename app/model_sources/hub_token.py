"""A Hugging Face token for gated or private models: in the system keyring where there is one, else in memory
for this session; never in the settings file (the same rules as the team server's key, app/model_sources/server_key.py).

``HF_TOKEN`` and the token ``huggingface-cli login`` saved come first: huggingface_hub sends them by itself
when Redraft passes no token, so a token is kept here only when the writer typed one into Redraft.
"""

from __future__ import annotations

import contextlib
import logging

from app.model_sources.server_key import keyring_available

log = logging.getLogger(__name__)

SERVICE = "Redraft Hugging Face token"
_session: dict[str, str] = {}  # endpoint -> token, when no keyring can hold it


def library_token() -> str | None:
    """The token huggingface_hub would send on its own (HF_TOKEN, or the saved login)."""
    from huggingface_hub import get_token

    return get_token()


def load_token(endpoint: str) -> str | None:
    if endpoint in _session:
        return _session[endpoint] or None
    if not keyring_available():
        return None
    import keyring

    try:
        return keyring.get_password(SERVICE, endpoint)
    except Exception as error:  # a locked keyring reads as no token: the hub then asks for one
        log.warning("the system keyring could not be read: %s", error)
        return None


def save_token(endpoint: str, token: str) -> bool:
    """Keep ``token`` for ``endpoint``; True when the keyring holds it, False when only this session does."""
    token = token.strip()
    _session[endpoint] = token
    if not keyring_available():
        return False
    import keyring

    try:
        if token:
            keyring.set_password(SERVICE, endpoint, token)
        else:
            with contextlib.suppress(keyring.errors.PasswordDeleteError):
                keyring.delete_password(SERVICE, endpoint)
        return True
    except Exception as error:
        log.warning("the system keyring did not take the Hugging Face token: %s", error)
        return False


def token_for(endpoint: str) -> str | None:
    """What to send: None lets huggingface_hub send HF_TOKEN or the saved login; else the kept token."""
    if library_token():
        return None
    return load_token(endpoint)


def describe_storage() -> str:
    if keyring_available():
        return "The token is kept in the system keyring, never in the settings file."
    return "No system keyring here: the token is kept for this session only (never in the settings file)."
