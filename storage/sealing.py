"""Secrets at rest: the Slack tokens of installed workspaces are stored encrypted with a
key from the environment (`GRACE_ENCRYPTION_KEY`, a Fernet key), so a copy of the
database alone gives no one a token."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet


class SealError(ValueError):
    """The key is not a Fernet key, or a sealed value was not sealed with this key."""


class Sealer:
    """Encrypts and decrypts text with Fernet (AES-128-CBC + HMAC-SHA256). `key` may list
    several keys, comma-separated, to change keys without downtime: the first seals,
    every one opens (a token is sealed again with the first at its next save)."""

    def __init__(self, key: str) -> None:
        try:
            keys = [Fernet(k.strip().encode()) for k in key.split(",") if k.strip()]
            if not keys:
                raise ValueError("no key")
            self._fernet = MultiFernet(keys)
        except (ValueError, TypeError):
            raise SealError(
                "GRACE_ENCRYPTION_KEY is not a Fernet key (url-safe base64 of 32 bytes); "
                "make one with: python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'"
            ) from None

    def seal(self, text: str) -> str:
        return self._fernet.encrypt(text.encode()).decode()

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode()).decode()
        except InvalidToken:
            raise SealError(
                "a stored Slack installation cannot be decrypted with GRACE_ENCRYPTION_KEY "
                "(was the key changed?)"
            ) from None


def new_key() -> str:
    """A fresh key, for docs and tests."""
    return Fernet.generate_key().decode()
