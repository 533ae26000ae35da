"""Recovery records from where they used to live; the module is ``app/documents/recovery.py`` now."""

from app.documents.recovery import RecoveredDocument, RecoveryArea

__all__ = ["RecoveredDocument", "RecoveryArea"]
