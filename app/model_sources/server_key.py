"""The team server's API key: in the system keyring where there is one, else in memory for this session.

Never in the settings file. ``keyring`` picks the platform's store (Secret Service on Linux, Keychain,
Windows Credential Manager); on a machine with none (a bare Linux without a Secret Service, CI) its
backend is the "fail" one, and the key lives only as long as Redraft runs.
"""

from __future__ import annotations

import contextlib
import logging

log = logging.getLogger(__name__)

SERVICE = "Redraft team server"
_session: dict[str, str] = {}  # url -> key, when no keyring can hold it


def keyring_available() -> bool:
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return False
    try:
        return not isinstance(keyring.get_keyring(), fail.Keyring)
    except Exception:  # a broken backend is no keyring
        return False


def describe_storage() -> str:
    if keyring_available():
        import keyring

        store = type(keyring.get_keyring()).__name__
        return f"The key is kept in the system keyring ({store}), never in the settings file."
    return (
        "No system keyring is available here, so the key is kept in memory for this session only (never in "
        "the settings file); enter it again after a restart."
    )


def save_key(url: str, key: str) -> bool:
    """Store ``key`` for ``url``; True when the keyring holds it, False when only this session does."""
    key = key.strip()  # a pasted key often brings a newline, which no server sends back
    _session[url] = key
    if not keyring_available():
        return False
    import keyring

    try:
        if key:
            keyring.set_password(SERVICE, url, key)
        else:
            with contextlib.suppress(keyring.errors.PasswordDeleteError):  # none stored: nothing to remove
                keyring.delete_password(SERVICE, url)
        return True
    except Exception as error:  # a locked or refusing keyring: keep the key for the session
        log.warning("the system keyring did not take the server key: %s", error)
        return False


def load_key(url: str) -> str | None:
    if url in _session:
        return _session[url] or None
    if not keyring_available():
        return None
    import keyring

    try:
        return keyring.get_password(SERVICE, url)
    except Exception as error:
        log.warning("the system keyring could not be read: %s", error)
        return None
