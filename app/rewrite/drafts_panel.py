"""The drafts panel: every candidate of a rewrite, side by side, as it develops pass by pass.

It paints the passes the one sampler loop yields (``RewriteController.passPainted``; every ``Pass``
carries all candidates), never a second run: each draft's frame, which one the span shows, how much
of it has settled, and, once the run ends, the ranking (``EditResult.ranking`` and its scores). A click
on a draft, or Alt+1…9 (the Rewrite ▸ Show Draft menu, numbered as the panel lists them), puts it in the
text through ``RewriteController.choose_candidate``. F6 (``app/window/panes.py``) brings the keys to the drafts
while some wait: Up and Down put a draft in the text, Enter accepts it, Esc goes back. Each word is shaded by how
settled it is (the sampler's own per-slot entropy, ``app.rewrite.drafts.hesitation``); a server's passes report no
entropy and show no shading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from html import escape

from PySide6.QtCore import QEvent, QObject, QPoint, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QContextMenuEvent,
    QFocusEvent,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QMainWindow,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.side_panel import SidePanel
from app.rewrite.drafts import accepted_share, hesitation
from app.rewrite.rewrite_controller import RewriteController
from app.rewrite.run import word_edge
from app.rewrite.worker import Ink, PaintedPass, Segment
from app.window.theme import CanvasColors
from model import EditResult
from model.edit.wrapping import as_prose

MAX_DRAFT_SHORTCUTS = 9  # Alt+1 … Alt+9
PANEL_WIDTH = 300
EMPTY_HINT = (
    "While a rewrite develops, its drafts appear here side by side. Click one, or press Alt+1…9, to put it in the text."
)
KEYS_HINT = "In the Drafts: Up and Down put a draft in the text, Enter accepts it, Ctrl+C copies it, Esc goes back."
STILL_DEVELOPING = "The drafts are still developing: Enter accepts one once they are done (Esc goes back to the text)."


def _blend(under: QColor, over: QColor, amount: float) -> str:
    """``over`` laid on ``under`` at ``amount`` (0-1), as #rrggbb: Qt's rich text takes no alpha."""
    mix = [round(a + (b - a) * amount) for a, b in ((under.red(), over.red()), (under.green(), over.green()),
                                                     (under.blue(), over.blue()))]  # fmt: skip
    return QColor(*mix).name()


def hesitant_color(dark: bool) -> QColor:
    """The shade of a word the model hesitates over (warm, away from the fresh-ink yellow)."""
    return QColor(226, 110, 84) if dark else QColor(205, 72, 44)


def frame_html(segments: list[Segment], colors: CanvasColors, paper: QColor, dark: bool, shade: bool) -> str:
    """One draft's frame as rich text: noise faded, fresh ink highlighted, words shaded by hesitation."""
    noise = _blend(paper, colors.noise, colors.noise.alphaF())
    fresh = _blend(paper, colors.fresh, colors.fresh.alphaF())
    out = []
    for segment in segments:
        text = escape(segment.text).replace("\n", "<br>")
        if segment.ink is Ink.NOISE:
            out.append(f"<span style='color:{noise}'>{text}</span>")
            continue
        amount = hesitation(segment.entropy) if shade else 0.0
        if amount > 0:
            background = _blend(paper, hesitant_color(dark), 0.55 * amount)
        elif segment.ink is Ink.FRESH:
            background = fresh
        else:
            out.append(text)
            continue
        out.append(f"<span style='background-color:{background}'>{text}</span>")
    # pre-wrap: a draft's own spaces (a noise piece's leading one, a double space) show as they are.
    return f"<p style='white-space:pre-wrap; margin:0'>{''.join(out)}</p>" if out else ""


# How much of the blocks a long draft has finished its card keeps while a later block develops.
BLOCKS_BEFORE_CHARS = 80


def with_blocks_before_cut(frame: list[Segment], committed: str) -> list[Segment]:
    """``frame`` with the finished blocks before the developing one (its first segment, ``committed``) cut to
    their last words: a long draft's card stays a few lines high and shows its developing edge, where the
    drafts differ now; the whole draft is in the text and, once finished, in the card."""
    if len(committed) <= BLOCKS_BEFORE_CHARS or not frame or frame[0].text != committed:
        return frame
    cut = len(committed) - BLOCKS_BEFORE_CHARS
    return [Segment("…" + committed[word_edge(committed, cut, cut) :], frame[0].ink), *frame[1:]]


class DraftCard(QFrame):
    """One draft: a heading (its number, rank, how settled) over its text. A click chooses it."""

    clicked = Signal(int)  # the candidate
    copyRequested = Signal(int)  # noqa: N815 - Qt's naming; the candidate, from the right-click menu
    finished = False  # whether its draft is done, so Copy Draft has its words

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.candidate = 0
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # keys only when sent here (F6): a click leaves them in the text
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.heading = QLabel()
        self.heading.setWordWrap(True)  # a long heading wraps rather than widen the card past the dock
        self.body = QLabel()
        self.body.setWordWrap(True)
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 8)
        layout.setSpacing(3)
        layout.addWidget(self.heading)
        layout.addWidget(self.body)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit(self.candidate)
            event.accept()
            return
        super().mousePressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt's name
        """Copy Draft: its words on the clipboard, to take a phrase into another draft or elsewhere."""
        menu = QMenu(self)
        copy = menu.addAction("&Copy Draft", lambda: self.copyRequested.emit(self.candidate))
        copy.setEnabled(self.finished)
        copy.setStatusTip("" if self.finished else "A draft can be copied once it has finished developing")
        menu.exec(event.globalPos())

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt's name
        super().paintEvent(event)
        if self.hasFocus():  # where the keys are: the theme's highlight round the card
            painter = QPainter(self)
            painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Highlight), 2))
            painter.drawRect(self.rect().adjusted(1, 1, -1, -1))

    def mark(self, shown: bool) -> None:
        """The draft the text shows has a stronger frame."""
        self.setLineWidth(2 if shown else 1)
        self.setFrameShadow(QFrame.Shadow.Plain if shown else QFrame.Shadow.Sunken)


class DraftsPanel(SidePanel):
    """The dock beside the text; ``order`` is the candidates as listed (by rank once the run ends). Its width holds a
    sentence a line or two at a time beside the text's column."""

    def __init__(self, window: QMainWindow, controller: RewriteController) -> None:
        areas = Qt.DockWidgetArea.RightDockWidgetArea | Qt.DockWidgetArea.BottomDockWidgetArea
        super().__init__("Drafts", window, "&Drafts Panel", "Ctrl+Shift+D", PANEL_WIDTH, areas)
        self.setObjectName("draftsPanel")
        self.controller = controller
        self.colors: CanvasColors | None = None
        self.dark = False
        self.job_id: int | None = None
        self.painted: PaintedPass | None = None  # the last pass of the run listed
        self.result: EditResult | None = None
        self.wrapped_paragraphs: tuple[bool, ...] = ()  # the run's (RewriteRun.wrapped_paragraphs)
        self.order: list[int] = []
        self.cards: list[DraftCard] = []
        # Rewrite ▸ Show Changes (app/rewrite/tracked_changes.py): a finished draft's text as its changes.
        self.changes_html: Callable[[str], str] | None = None
        self.summary = QLabel(EMPTY_HINT)
        self.summary.setWordWrap(True)
        self.list = QWidget()
        self.list_layout = QVBoxLayout(self.list)
        self.list_layout.setContentsMargins(6, 6, 6, 6)
        self.list_layout.setSpacing(6)
        self.list_layout.addWidget(self.summary)
        self.list_layout.addStretch(1)
        scroll = self.scroll_area = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(self.list)
        # A click on a draft chooses it; the keyboard stays with the text (Enter, Esc and typing go there).
        scroll.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWidget(scroll)
        self.setMinimumWidth(220)
        self.shade_action = QAction("Shade &Hesitant Words in the Text", self)
        self.shade_action.setCheckable(True)
        self.shade_action.setShortcut(QKeySequence("Ctrl+Shift+H"))
        self.draft_actions = [self._draft_action(number) for number in range(1, MAX_DRAFT_SHORTCUTS + 1)]
        controller.passPainted.connect(self.show_pass)
        controller.stateChanged.connect(self.refresh)
        self._keys_here = False  # the keys were sent to a draft (F6) and have not left the panel
        self._painting = False

    def _draft_action(self, number: int) -> QAction:
        action = QAction(f"Draft &{number}", self)
        action.setShortcut(QKeySequence(f"Alt+{number}"))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: self.choose_listed(number - 1))
        action.setEnabled(False)
        return action

    def draft_menu(self, parent: QMenu) -> QMenu:
        """Rewrite ▸ Show Draft: Alt+1…9, numbered as the panel lists the drafts."""
        menu = parent.addMenu("Show &Draft")
        menu.addActions(self.draft_actions)
        menu.setToolTipsVisible(True)
        return menu

    def clear(self) -> None:
        """Forget the last run's drafts (a new or another document): the panel says how to get some."""
        self.job_id, self.painted, self.result, self.order = None, None, None, []
        self.refresh()

    def set_colors(self, colors: CanvasColors, dark: bool) -> None:
        self.colors, self.dark = colors, dark
        self.refresh()

    # -- what the controller reports ------------------------------------------------------------

    def show_pass(self, painted: PaintedPass) -> None:
        run = self.controller.run
        if run is None:
            return
        if run.job_id != self.job_id:  # a new run: its drafts replace the last one's
            self.job_id, self.result, self.wrapped_paragraphs = run.job_id, None, run.wrapped_paragraphs
        self.painted = painted
        self.order = list(range(len(painted.raw.pieces)))
        self.refresh()

    def refresh(self) -> None:
        """Re-read the run: its result (the ranking) once it has one, which draft the text shows."""
        run = self.controller.run
        if run is not None and run.job_id == self.job_id and run.result is not None:
            self.result = run.result
            self.order = list(run.result.ranking)
        self._painting = True  # a card hidden with the keys on it sends them on, along Qt's focus chain
        try:
            self._paint()
        finally:
            self._painting = False
        self._update_actions()
        if self._keys_here:  # on the draft in the text (ranked anew, or chosen), or back to the text once none waits
            self.take_keys() if self.can_take_keys() else self._give_keys_back()

    # -- the keys (F6) ----------------------------------------------------------------------------------------

    def has_keys(self) -> bool:
        return any(card.hasFocus() for card in self.cards)

    def can_take_keys(self) -> bool:
        """Shown, with drafts listed that the text is showing (F6's round, app/window/panes.py)."""
        return self.isVisible() and self.shown_candidate() is not None and any(c.isVisible() for c in self.cards)

    def take_keys(self) -> None:
        """The keys to the draft in the text."""
        shown = self.shown_candidate()
        card = self.cards[self.order.index(shown) if shown in self.order else 0]
        if not self._keys_here:
            self.controller.window.statusBar().showMessage(KEYS_HINT, 8000)
        self._keys_here = True
        card.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.scroll_area.ensureWidgetVisible(card)

    def _give_keys_back(self) -> None:
        self._keys_left()
        self.controller.window.editor.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def _keys_left(self) -> None:
        """The keys' hint goes with them: it said Enter accepted once they were in the text."""
        self._keys_here = False
        bar = self.controller.window.statusBar()
        if bar.currentMessage() == KEYS_HINT:
            bar.clearMessage()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's name
        if isinstance(watched, DraftCard) and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            return self._key(watched, event)
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent) and event.matches(
                QKeySequence.StandardKey.Copy):  # fmt: skip
            event.accept()  # Ctrl+C copies the draft, not Edit ▸ Copy's selection in the text
            return True
        tabbed = (Qt.FocusReason.TabFocusReason, Qt.FocusReason.BacktabFocusReason)
        if isinstance(event, QFocusEvent) and event.type() == QEvent.Type.FocusIn and event.reason() in tabbed:
            self._keys_here = True  # Tab came along Qt's focus chain: the draft the keys are on goes in the text
            if isinstance(watched, DraftCard):
                self.choose_listed(self.cards.index(watched))
        if isinstance(event, QFocusEvent) and event.type() == QEvent.Type.FocusOut and not self._painting:
            # Gone elsewhere (a click in the text, a window's shortcut), not to another card, a menu or another window.
            passing = (Qt.FocusReason.PopupFocusReason, Qt.FocusReason.ActiveWindowFocusReason)
            if self._keys_here and event.reason() not in passing and not self.has_keys():
                self._keys_left()
        return super().eventFilter(watched, event)

    def _key(self, card: DraftCard, event: QKeyEvent) -> bool:
        key, keys = event.key(), event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        plain = keys == Qt.KeyboardModifier.NoModifier
        index, shown = self.cards.index(card), sum(c.isVisible() for c in self.cards)
        steps = {Qt.Key.Key_Up.value: index - 1, Qt.Key.Key_Down.value: index + 1, Qt.Key.Key_Home.value: 0,
                 Qt.Key.Key_End.value: shown - 1}  # fmt: skip
        if plain and key in steps:
            self.choose_listed(min(max(steps[key], 0), shown - 1))  # in the text; refresh brings the keys with it
        elif plain and key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            run = self.controller.run
            if run is not None and run.result is not None:
                if run.candidate != card.candidate:
                    self.controller.choose_candidate(card.candidate)  # the one the keys are on, whatever the text shows
                self.controller.accept()
            else:
                self.controller.window.statusBar().showMessage(STILL_DEVELOPING, 6000)
        elif plain and key == Qt.Key.Key_Escape:
            self._give_keys_back()
        elif event.matches(QKeySequence.StandardKey.Copy):
            self.copy_draft(card.candidate) if card.finished else self.controller.window.statusBar().showMessage(
                "A draft can be copied once it has finished developing.", 4000)  # fmt: skip
        elif key == Qt.Key.Key_Menu or key == Qt.Key.Key_F10 and keys == Qt.KeyboardModifier.ShiftModifier:
            below = QPoint(8, card.height())  # the card's menu under it, as a right-click there would open it
            card.contextMenuEvent(QContextMenuEvent(QContextMenuEvent.Reason.Keyboard, below, card.mapToGlobal(below)))
        else:
            return False
        return True

    def shown_candidate(self) -> int | None:
        """The draft the span shows now, if a run is live in the text."""
        run = self.controller.run
        if run is None or run.job_id != self.job_id:
            return None
        if run.result is not None:
            return run.candidate
        if self.painted is None:
            return None
        return run.pinned if run.pinned is not None else self.painted.shown

    def choose_listed(self, index: int) -> None:
        """The ``index``-th draft as listed (Alt+``index+1``) goes into the text."""
        if 0 <= index < len(self.order) and self.shown_candidate() is not None:
            self.controller.choose_candidate(self.order[index])

    # -- painting -------------------------------------------------------------------------------

    def _card(self, index: int) -> DraftCard:
        while len(self.cards) <= index:
            card = DraftCard(self.list)
            card.installEventFilter(self)
            card.clicked.connect(self._clicked)
            card.copyRequested.connect(self.copy_draft)
            self.list_layout.insertWidget(self.list_layout.count() - 1, card)
            self.cards.append(card)
        return self.cards[index]

    def _clicked(self, candidate: int) -> None:
        self._keys_left()  # the writer's keys go to the text
        if self.shown_candidate() is not None:
            self.controller.choose_candidate(candidate)
        self.controller.window.editor.setFocus(Qt.FocusReason.MouseFocusReason)

    def copy_draft(self, candidate: int) -> None:
        """A finished draft's words on the clipboard, as they would go into the text (a fill's leading space off)."""
        if self.result is None or not 0 <= candidate < len(self.result.texts):
            return
        QGuiApplication.clipboard().setText(self.result.texts[candidate].strip())
        listed = self.order.index(candidate) + 1 if candidate in self.order else candidate + 1
        self.controller.window.statusBar().showMessage(f"Draft {listed} copied.", 4000)

    def _paint(self) -> None:
        painted, colors = self.painted, self.colors
        if painted is None or colors is None or painted.veiled and self.result is None:
            for card in self.cards:
                card.hide()
            waiting = painted is not None and painted.veiled
            self.summary.setText("Waiting for the server's drafts…" if waiting else EMPTY_HINT)
            return
        step, result = painted.raw, self.result
        shown = self.shown_candidate()
        live = self.controller.run is not None and self.controller.run.job_id == self.job_id
        count = len(self.order)
        drafts = f"{count} draft{'s' if count != 1 else ''}"
        if result is not None:
            what = (
                f"{drafts}, best first (the model's mean log-probability of its own words)"
                if count > 1
                else ("One draft (Settings ▸ Rewriting ▸ Drafts asks for more)")
            )
        else:
            what = f"{drafts} {'polishing' if step.polishing else 'developing'} · pass {step.step + 1}" + (
                "" if painted.most is None else f" of at most {painted.most}"
            )
        self.summary.setText(what + ("" if live else " · kept or put back: Rewrite ▸ Versions… brings any back"))
        # The application's palette: a theme switch reaches the panel's own palette only after this paint.
        paper = QGuiApplication.palette().color(self.backgroundRole())
        shade = any(s.entropy is not None for frame in painted.frames for s in frame)
        scores = shown_scores(result.scores) if result is not None else []
        for index, candidate in enumerate(self.order):
            card = self._card(index)
            card.candidate = candidate
            number = f"Alt+{index + 1} · " if index < MAX_DRAFT_SHORTCUTS else ""
            if result is not None:
                # A lone draft is not ranked: no rank, no score.
                rank = f"<b>{index + 1}.</b> score {scores[candidate]}" if count > 1 else "<b>Draft</b>"
                heading = number + rank
                frame = painted.frames[candidate] if candidate < len(painted.frames) else []
                final = result.texts[candidate]
                # The last pass's words (and their shading) where they are the draft's final text; else the
                # final text, hand-wrapped paragraphs as prose (the card is narrower than their lines), without
                # the space a fill starts with after a sentence (the card is no line of the document).
                if "".join(s.text for s in frame) != final:
                    frame = [Segment(as_prose(final, self.wrapped_paragraphs).strip(), Ink.SETTLED)]
            else:
                settled = round(100 * accepted_share(step, candidate))
                leading = " · leading" if candidate == painted.shown else ""
                # A polish round accepts every slot yet may still change words: not "100% settled".
                how = "polishing" if step.polishing else f"{settled}% settled"
                heading = f"{number}<b>Draft {candidate + 1}</b> · {how}{leading}"
                frame = with_blocks_before_cut(painted.frames[candidate], step.committed[candidate])
                if self.wrapped_paragraphs and all(self.wrapped_paragraphs):  # the model's own line breaks too
                    frame = [replace(s, text=as_prose(s.text, (True,))) for s in frame]
            if candidate == shown:
                heading += " · <i>in the text</i>"
            card.heading.setText(heading)
            body = frame_html(frame, colors, paper, self.dark, shade)
            if result is not None and self.changes_html is not None:
                body = self.changes_html(result.texts[candidate])
            card.body.setText(body or "<i>(nothing)</i>")
            card.finished = result is not None
            card.setToolTip(("" if shade else "No shading: this model reports no word probabilities.\n")
                            + "Click: this draft in the text · right-click: Copy Draft")  # fmt: skip
            card.mark(candidate == shown)
            # What a screen reader says as the keys come to it: which draft, how far along, and its words.
            state = f"score {scores[candidate]}" if result is not None and count > 1 else (
                "" if result is not None else "polishing" if step.polishing else f"{settled}% settled")  # fmt: skip
            card.setAccessibleName(", ".join(part for part in (f"Draft {index + 1} of {count}", state,
                                   "in the text" if candidate == shown else "") if part))  # fmt: skip
            card.setAccessibleDescription("".join(segment.text for segment in frame).strip())
            card.show()
        for card in self.cards[count:]:
            card.hide()

    def _update_actions(self) -> None:
        live = self.shown_candidate() is not None
        for index, action in enumerate(self.draft_actions):
            can = live and index < len(self.order) and len(self.order) > 1
            action.setEnabled(can)
            action.setStatusTip("" if can else "No drafts to choose from: rewrite a selection first.")


def shown_scores(scores: list[float], digits: int = 2, most: int = 4) -> list[str]:
    """The drafts' scores as the cards show them: two decimals, or as many more (up to ``most``) as tell apart
    scores that differ (a confident model's fills score -0.003 and -0.004, all "-0.00" at two), and never
    "-0.00" for a score that rounds to zero."""
    while True:
        shown = [f"{score:.{digits}f}" for score in scores]
        told_apart = len(set(shown)) == len(set(scores))
        if told_apart or digits >= most:
            return [text[1:] if text.startswith("-") and not text.strip("-0.") else text for text in shown]
        digits += 1
