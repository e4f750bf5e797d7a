"""Column sets more than one migration writes, built exactly as each revision first did.

A revision's schema is fixed once it has run anywhere, so nothing here may ever change
what it builds: a new set gets a new function. Migrations use this, never
`storage.tables` (the live models move on; a migration must keep meaning what it meant).
"""

from __future__ import annotations

import sqlalchemy as sa


def thresholds(prefix: str = "", *, nullable: bool) -> list[sa.Column]:
    """The three confidence thresholds, floats in this order: silent, notify, confirm."""
    return [
        sa.Column(f"{prefix}{name}", sa.Float(), nullable=nullable)
        for name in ("silent", "notify", "confirm")
    ]
