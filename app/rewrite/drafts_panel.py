"""The drafts panel: every candidate of a rewrite, side by side, as it develops pass by pass.

It paints the passes the one sampler loop yields (``RewriteController.passPainted``; every ``Pass``
carries all candidates), never a second run: each draft's frame, which one the span shows, how much
of it has settled, and, once the run ends, the ranking (``EditResult.ranking`` and its scores). A click
on a draft, or Alt+1…9 (the Rewrite ▸ Show Draft menu, numbered as the panel lists them), puts it in the
text through ``RewriteController.choose_candidate``. Each word is shaded by how settled it is (the
sampler's own per-slot entropy, ``app.rewrite.drafts.hesitation``); a server's passes report no entropy and show
no shading.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QColor, QContextMenuEvent, QGuiApplication, QKeySequence, QMouseEvent
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
        scroll = QScrollArea()
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
        self._paint()
        self._update_actions()

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
            card.clicked.connect(self._clicked)
            card.copyRequested.connect(self.copy_draft)
            self.list_layout.insertWidget(self.list_layout.count() - 1, card)
            self.cards.append(card)
        return self.cards[index]

    def _clicked(self, candidate: int) -> None:
        if self.shown_candidate() is not None:
            self.controller.choose_candidate(candidate)
        self.controller.window.editor.setFocus(Qt.FocusReason.MouseFocusReason)  # the writer's keys go to the text

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
        for index, candidate in enumerate(self.order):
            card = self._card(index)
            card.candidate = candidate
            number = f"Alt+{index + 1} · " if index < MAX_DRAFT_SHORTCUTS else ""
            if result is not None:
                # A lone draft is not ranked: no rank, no score.
                rank = f"<b>{index + 1}.</b> score {result.scores[candidate]:.2f}" if count > 1 else "<b>Draft</b>"
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
            card.show()
        for card in self.cards[count:]:
            card.hide()

    def _update_actions(self) -> None:
        live = self.shown_candidate() is not None
        for index, action in enumerate(self.draft_actions):
            can = live and index < len(self.order) and len(self.order) > 1
            action.setEnabled(can)
            action.setStatusTip("" if can else "No drafts to choose from: rewrite a selection first.")
