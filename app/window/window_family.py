"""One model, several windows. File ▸ New Window (Ctrl+Shift+N) opens a window of its own beside this one, for
another chapter or the notes beside the draft, served by the model this process already holds: a second window
costs no second load, and no second copy of a model in memory. Close Window (Ctrl+W) closes one; Quit (Ctrl+Q)
closes them all, each asking about its own unsaved words first.

The windows that share a model (their ``service``) are a family. Each rewrite is its window's own: a new one
cancels only the same window's earlier one, another window's waits its turn on the model thread. A change of
model in one window loads it for all of them, and a rewrite developing in another is stopped and said so. The
writer's preferences are one: a setting changed in one window is the others' too (their theme and typeface at
once), so no window saves an older copy over it. The model thread outlives the window that started it; the last
window to close ends it. So does a model's download (app.model_sources.model_downloads): one for the family,
shown in every window's status bar and Model Manager.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

from PySide6.QtCore import QObject, QPoint, QRect, QSize, Qt, SignalInstance
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QScreen
from PySide6.QtWidgets import QApplication, QMenu, QMenuBar, QStatusBar, QWidget

if TYPE_CHECKING:
    from app.rewrite.worker import ModelInfo, ModelSpec, RewriteService
    from app.settings import Preferences
    from app.window.editor_widget import RewriteEditor

CASCADE_PX = 32  # a new window stands this far right of and below the one it came from
_BIRTHS = itertools.count()  # the order the windows were made in: the Window menu lists them so


class FamilyWindow(Protocol):
    """What the family uses of a window (app.window.main_window.MainWindow's)."""

    family: WindowFamily[Any]
    prefs: Preferences
    service: RewriteService
    file_menu: QMenu
    open_action: QAction

    @property
    def path(self) -> Path | None: ...

    @property
    def editor(self) -> RewriteEditor: ...

    @property
    def windowMade(self) -> SignalInstance: ...  # noqa: N802 - Qt's style

    def model_spec(self) -> ModelSpec: ...

    def _on_loaded(self, info: ModelInfo) -> None: ...

    def show_loading(self, end_span: bool = True) -> None: ...

    def load_model(self) -> None: ...

    def apply_theme(self) -> None: ...

    # Qt's, as a QMainWindow has them.
    def menuBar(self) -> QMenuBar: ...  # noqa: N802
    def statusBar(self) -> QStatusBar: ...  # noqa: N802
    def windowTitle(self) -> str: ...  # noqa: N802
    def isWindowModified(self) -> bool: ...  # noqa: N802
    def isVisible(self) -> bool: ...  # noqa: N802
    def isMinimized(self) -> bool: ...  # noqa: N802
    def close(self) -> bool: ...
    def show(self) -> None: ...
    def showNormal(self) -> None: ...  # noqa: N802
    def raise_(self) -> None: ...
    def activateWindow(self) -> None: ...  # noqa: N802
    def addAction(self, action: QAction) -> None: ...  # noqa: N802
    def setAttribute(self, attribute: Qt.WidgetAttribute, on: bool = True) -> None: ...  # noqa: N802
    def size(self) -> QSize: ...
    def resize(self, size: QSize) -> None: ...
    def move(self, point: QPoint) -> None: ...
    def frameGeometry(self) -> QRect: ...  # noqa: N802
    def screen(self) -> QScreen: ...


Window = TypeVar("Window", bound=FamilyWindow)


class WindowFamily(QObject, Generic[Window]):
    """``window``'s File ▸ New Window, Close Window and Quit, its Window menu, and what it shares with its family
    (the windows on its model). ``make`` makes a window on the same model, of the window's own class (which this
    module does not import); ``parent`` is the window as Qt's widget, its actions' and menu's parent."""

    def __init__(self, window: Window, parent: QWidget, make: Callable[[], Window]) -> None:
        super().__init__(parent)
        self.window = window
        self.make = make
        self.new_window_action = QAction("New W&indow", parent)
        self.new_window_action.setShortcut(QKeySequence("Ctrl+Shift+N"))
        self.new_window_action.setStatusTip("Open another window, for another document, served by the same model")
        self.new_window_action.triggered.connect(self.new_window)
        self.close_action = QAction("&Close Window", parent)
        self.close_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Close))
        self.close_action.setStatusTip("Close this window (the others stay open)")
        self.close_action.triggered.connect(window.close)
        self.quit_action = QAction("&Quit", parent)
        self.quit_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Quit))
        self.quit_action.setStatusTip("Close every Redraft window, each asking about its unsaved changes first")
        self.quit_action.triggered.connect(self.quit_all)
        window.file_menu.insertAction(window.open_action, self.new_window_action)
        window.file_menu.addActions([self.close_action, self.quit_action])
        self.next_action = QAction("&Next Window", parent)
        self.next_action.setShortcuts([QKeySequence("Ctrl+`"), QKeySequence("Ctrl+F6")])  # a Mac's, Windows'
        self.next_action.setStatusTip("Bring the next Redraft window on this model to the front")
        self.next_action.triggered.connect(self.bring_next)
        window.addAction(self.next_action)  # its keys work before the menu was first opened
        # The Window menu, before Help: the family's windows by their titles, this one ticked; one chosen comes
        # to the front (as the desktop's Alt+Tab would bring it, but by name).
        self.born = next(_BIRTHS)
        self.menu = QMenu("&Window", parent)
        self.menu.addActions([self.new_window_action, self.close_action, self.next_action])  # the windows: as shown
        self.menu.aboutToShow.connect(self._fill_menu)
        bar = window.menuBar()
        help_menu = next((action for action in bar.actions() if action.text() == "&Help"), None)
        if help_menu is not None:
            bar.insertMenu(help_menu, self.menu)
        else:
            bar.addMenu(self.menu)

    def members(self) -> list[Window]:
        """The open windows that share this one's model, this one first."""
        service = self.window.service
        others = [cast("Window", widget) for widget in QApplication.topLevelWidgets()
                  if widget is not self.window and getattr(widget, "service", None) is service
                  and widget.isVisible()]  # fmt: skip
        return [self.window, *others]

    def _fill_menu(self) -> None:
        self.menu.clear()
        for group in self.menu.findChildren(QActionGroup):
            group.deleteLater()  # the last showing's
        self.menu.addActions([self.new_window_action, self.close_action, self.next_action])
        self.menu.addSeparator()
        shown = QActionGroup(self.menu)  # one ticked, as a choice among them
        for number, member in enumerate(sorted(self.members(), key=lambda member: member.family.born), start=1):
            title = member.windowTitle().replace("[*]", "*" if member.isWindowModified() else "")
            title = title.removesuffix(" — Redraft")  # every one is
            entry = self.menu.addAction(f"&{number} {title}" if number < 10 else title)
            entry.setCheckable(True)
            shown.addAction(entry)
            entry.setChecked(member is self.window)
            entry.triggered.connect(lambda _checked=False, chosen=member: bring_forward(chosen))

    def bring_next(self) -> None:
        """Window ▸ Next Window: the window made after this one comes to the front (after the last, the first)."""
        members = sorted(self.members(), key=lambda member: member.family.born)
        if len(members) > 1:
            bring_forward(members[(members.index(self.window) + 1) % len(members)])

    def bring_forward_showing(self, path: Path, this_one_too: bool = False) -> Window | None:
        """The window that shows ``path`` (another one, or ``this_one_too``), brought to the front saying so."""
        showing = next((member for member in (self.members() if this_one_too else self.siblings())
                        if member.path is not None and member.path.resolve() == path.resolve()), None)  # fmt: skip
        if showing is not None:
            bring_forward(showing)
            showing.statusBar().showMessage(f"{path.name} is open in this window.", 6000)
        return showing

    def siblings(self) -> list[Window]:
        return self.members()[1:]

    def new_window(self) -> Window:
        """A new, empty window beside this one, on the same model, the settings this one has."""
        window = self.window
        made = self.make()
        made.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)  # its document and widgets go when it closes
        made.resize(window.size())
        made.move(cascaded(window.frameGeometry(), window.screen().availableGeometry()))
        window.windowMade.emit(made)  # the process protects it as it does the first (app.gui)
        made.show()
        made.activateWindow()
        return made

    def quit_all(self) -> bool:
        """File ▸ Quit: every window of the family closed, those with unsaved changes first (this one before
        the others), each asking; a Cancel stops there, the windows with nothing to lose still open."""
        unsaved_first = sorted(self.members(), key=lambda member: not member.isWindowModified())
        return all(member.close() for member in unsaved_first)

    def share(self, changes: dict[str, Any]) -> None:
        """Preferences this window saved, taken into its siblings' own copies."""
        for sibling in self.siblings():
            sibling.prefs = replace(sibling.prefs, **changes)

    def share_all(self, new: Preferences) -> None:
        """Settings ▸ OK in this window: the siblings take them, their theme and typeface at once (the model
        loads once, for all: :meth:`follow_load`)."""
        for sibling in self.siblings():
            old, sibling.prefs = sibling.prefs, new
            if new.theme != old.theme:
                sibling.apply_theme()
            if new.font_family != old.font_family:
                sibling.editor.set_prose_font(new.font_family)

    def join_model(self) -> None:
        """At the window's start: the model its family holds (or is loading) where it is the one this window
        would load, else a load of its own."""
        window, service = self.window, self.window.service
        if service.spec is not None and service.spec == window.model_spec():
            if service.model_info is not None:
                window._on_loaded(service.model_info)
                return
            if service.loading:
                window.show_loading(end_span=False)
                return
        window.load_model()

    def follow_load(self) -> None:
        """This window asked the shared model thread for a new model: its siblings show it loading too (a
        rewrite developing in one is stopped by the load, and says so: RewriteController._on_cancelled)."""
        for sibling in self.siblings():
            sibling.show_loading(end_span=False)

    def leave(self) -> None:
        """The window closes: the model thread goes on for its siblings, or ends with the last window."""
        window, service = self.window, self.window.service
        if not self.siblings():
            service.shutdown()
        elif service.parent() is window:
            # Not deleted with this window: held by every window that refers to it, a closed one too (whose
            # timers may still fire), so none is ever left with a deleted one.
            service.setParent(None)


def cascaded(frame: QRect, room: QRect) -> QPoint:
    """Where a new window as big as ``frame`` goes: a step right of and below it, held inside the screen's
    ``room`` (a window as tall as a laptop's screen steps right alone, its status bar kept in sight)."""
    x = min(frame.x() + CASCADE_PX, room.x() + room.width() - frame.width())
    y = min(frame.y() + CASCADE_PX, room.y() + room.height() - frame.height())
    return QPoint(max(x, room.x()), max(y, room.y()))


def bring_forward(window: FamilyWindow) -> None:
    """``window`` to the front, the keys in it (restored first if it was minimised)."""
    if window.isMinimized():
        window.showNormal()
    window.raise_()
    window.activateWindow()
