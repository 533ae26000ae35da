"""Redraft's desktop editor (PySide6). Kept free of Qt imports so `app.cli`'s headless paths stay light."""
