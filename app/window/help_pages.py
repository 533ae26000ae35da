"""Help ▸ Keyboard Shortcuts, How Redraft Works, Where Your Files Are, About, and the one-time welcome that
says the built-in model is a demo. :class:`HelpPages` is inherited by the main window."""

from __future__ import annotations

from importlib import metadata

from PySide6.QtWidgets import QMenu, QMessageBox

from app.dialogs.help import HOW_IT_WORKS, HelpPage, WelcomeDialog, files_html, shortcuts_html
from app.settings import SettingsStore
from app.userdirs import user_dirs
from app.window.status_bar import ModelStatusBar

WELCOME_SHOWN_KEY = "ui/welcome_shown"  # the built-in model's welcome has been shown once


class HelpPages(ModelStatusBar):
    """The Help menu's pages, one open at a time; MainWindow sets the fields below and the hook."""

    settings: SettingsStore
    help_page: HelpPage | None
    welcome: WelcomeDialog | None

    # -- help -------------------------------------------------------------------------------------

    def _show_help(self, title: str, html: str) -> HelpPage:
        if self.help_page is not None:
            self.help_page.close()
        page = HelpPage(self, title, html)
        page.destroyed.connect(lambda: setattr(self, "help_page", None))
        self.help_page = page
        page.show()
        return page

    def show_shortcuts(self) -> HelpPage:
        menus = [action.menu() for action in self.menuBar().actions()]
        return self._show_help("Keyboard Shortcuts", shortcuts_html(m for m in menus if isinstance(m, QMenu)))

    def show_how_it_works(self) -> HelpPage:
        return self._show_help("How Redraft Works", HOW_IT_WORKS)

    def show_files(self) -> HelpPage:
        return self._show_help("Where Your Files Are", files_html(user_dirs()))

    def offer_welcome(self) -> WelcomeDialog | None:
        """On the first start with the built-in model, say once what it is and how to get real rewrites."""
        qsettings = self.settings.qsettings
        if not self.is_demo_model() or qsettings.value(WELCOME_SHOWN_KEY, False, type=bool):
            return None
        qsettings.setValue(WELCOME_SHOWN_KEY, True)
        qsettings.sync()
        dialog = WelcomeDialog(self)
        dialog.settingsRequested.connect(self.show_settings)
        self.welcome = dialog
        dialog.show()
        return dialog

    def show_about(self) -> QMessageBox:
        box = QMessageBox(
            QMessageBox.Icon.NoIcon,
            "About Redraft",
            f"<h3>Redraft {installed_version()}</h3><p>Select a sentence and watch a text-diffusion model redraft "
            "it in place, pass by pass.</p>",
            QMessageBox.StandardButton.Ok,
            self,
        )
        box.setIconPixmap(self.windowIcon().pixmap(64, 64))
        box.open()  # not exec(): the window (and a test) goes on while it is shown
        return box


def installed_version() -> str:
    """The version pip installed (pyproject's), or a plain word when Redraft runs from an uninstalled tree."""
    try:
        return metadata.version("redraft")
    except metadata.PackageNotFoundError:
        return "(version unknown: not installed)"

