"""``MainWindow`` from where it used to live: the window is ``app/window/main_window.py`` now."""

from app.window.main_window import MainWindow

__all__ = ["MainWindow"]
