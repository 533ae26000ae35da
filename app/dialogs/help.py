"""The Help menu's pages and the one-time welcome that says what the built-in model is.

Every page is a small non-modal window: a writer can keep the shortcuts open beside the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QMenu,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.userdirs import UserDirs

HOW_IT_WORKS = """
<h3>How Redraft works</h3>
<p>Select a sentence and press <b>Ctrl+R</b>. Redraft's model does not write word after word: it starts
from <i>noise</i>, a row of random word pieces as long as your selection, and redraws all of it at once,
again and again. Each redrawing is a <b>pass</b>.</p>
<p>On the first passes the model is unsure of almost everything, so what you see is mostly noise (faded).
Pass by pass it settles the pieces it is sure of (they turn to ink, freshly settled ones highlighted) and
redraws the rest, until the whole span reads as text or the passes run out. A long selection develops a
piece (a <b>block</b>) at a time, top to bottom; the words of yours that later blocks will replace wait,
faded and off the tinted canvas, below the one developing.</p>
<p>A plain-text file wrapped by hand (an e-mail, a Project Gutenberg book: lines broken at a fixed width)
keeps its width: a rewrite or a fill inside such a paragraph develops and lands wrapped at it. The lines of
yours after it keep their breaks; <b>Edit ▸ Rewrap Paragraph</b> (Alt+Q) evens a paragraph left ragged, and
<b>Edit ▸ Join Wrapped Lines</b> makes each paragraph one line, which the window wraps at its own width. A
triple-click selects the whole of such a paragraph, not one of its lines.</p>
<p>By default the model develops several <b>drafts</b> side by side. The text shows the one ahead (the
most words settled) as they develop, and the <b>Drafts</b> panel beside it shows all of them, each word
shaded by how unsure the model still is of it; at the end they are ranked, and the text shows the one the
model rates best. A click on a draft, or <b>Alt+1</b>…<b>Alt+9</b>, puts it in the text; <b>Alt+Up</b>
and <b>Alt+Down</b> step through them; a right-click on a finished draft copies its words (Copy Draft), to
take a phrase of it into the one you keep. <b>F6</b> takes the keys to the drafts: Up and Down put one in
the text, Enter accepts it, Ctrl+C copies it, Esc goes back. <b>Ctrl+Shift+D</b> hides the panel.</p>
<p><b>Rewrite ▸ Versions…</b> (Ctrl+Shift+V) lists every version a passage has had since you opened the
document (your original, each draft you were shown) and puts one back; Ctrl+Z undoes that too.</p>
<p>When a draft is finished: <b>Enter</b> accepts it, <b>Esc</b> rejects it and puts your original back
exactly, <b>Ctrl+Shift+R</b> develops new drafts. An accepted rewrite is one step for <b>Ctrl+Z</b>,
however many passes it took. While it develops, <b>Esc</b> or <b>Cancel</b> stops it, and the rest of your
document stays yours to edit.</p>
<p>To keep some of a draft's changes and not others, press <b>Ctrl+Shift+E</b> (Rewrite ▸ Show Changes): the
words it takes out are struck through, the words it puts in underlined. <b>Alt+Right</b> and <b>Alt+Left</b>
step through the changes, <b>Alt+Return</b> accepts one and <b>Alt+Delete</b> rejects it (or click or
right-click a change); <b>Enter</b> then keeps the passage as it stands, still one step for Ctrl+Z.</p>
<p>The same keys review an editor's tracked changes (<b>Edit ▸ Tracked Changes</b>) when you open their Word
document and choose <b>Review Each</b>: each change is marked in your text, <code>{~~old~&gt;new~~}</code>,
<code>{++added++}</code> or <code>{--removed--}</code>, signed with who made it,
<code>{&gt;&gt;Maya&lt;&lt;}</code> (CriticMarkup, which other Markdown tools read too), so you can save halfway
and come back. Alt+Return accepts the change the caret is in, Alt+Delete rejects it, each one step for Ctrl+Z;
Accept All Changes and Reject All Changes settle the rest, and <b>By Author</b> (or a right-click on a change)
settles every one of one editor's. An export asks what to do with the ones left: Export
as Word Document can keep them as Word's own tracked changes, each by its author, and a PDF can show them.</p>
<p>To send your own changes back that way, choose <b>Edit ▸ Tracked Changes ▸ Mark Changes Since…</b> and the
text to compare with: the text as you opened it, or a version Redraft kept when you saved. Every change since
(rewrites kept, words typed, paragraphs cut) is marked in the text, signed with your name from Settings ▸
Documents, as one step for Ctrl+Z; then Export as Word Document keeps them as tracked changes.</p>
<p>To steer a rewrite, select words inside the passage and press <b>Ctrl+K</b> (Rewrite ▸ Keep Words): they are
underlined, and a rewrite of the passage keeps them exactly as written (Ctrl+K again unmarks them). The
underline is not part of your text and is not saved. <b>Rewrite ▸ Length</b> (also in the toolbar) asks for
a shorter or longer rewrite. Type <b>[...]</b> where words are missing (<b>___</b> works too), select the
passage and press <b>Ctrl+Shift+F</b> (Fill Gaps in Selection): the model fills every gap and leaves the rest
exactly as it is.</p>
<p>For one word, put the cursor in it and press <b>Ctrl+F7</b> (Rewrite ▸ Words That Fit, or right-click the
word): the model reads the sentence on both sides of it and lists the other words it finds fitting there,
likeliest first; the status bar shows the line each would make as the arrows reach it. Enter puts one in, as one
step for Ctrl+Z; Esc keeps yours. The list is what fits, not a thesaurus: often a word of like meaning,
sometimes another thought.</p>
<p><b>Fill Gap</b> (Ctrl+Shift+G) writes new text at the cursor; <b>Instruct</b> (Ctrl+I) rewrites the
selection following an instruction, with checkpoints trained to follow them; <b>Rewrite ▸ Tone</b> holds
one-click ones (Simpler, More formal, More casual, More vivid, Shorter, Fix grammar).</p>
<p>Words the dictionary does not know get a red wavy underline (in English, British spellings pass too; a
paragraph in another language is left alone). <b>View ▸ Spelling Language</b> chooses English, French,
German, Italian, Portuguese or Dutch (at first your system's); a document that plainly reads as another
of them is checked in its own. A right-click on a marked word offers the
likeliest words it meant, <b>Add to Dictionary</b> (kept for your next session, in every language; a
right-click on a word you added offers to remove it) and <b>Ignore</b>. <b>F7</b> selects the next one (the
menu key then offers the same). A draft is checked once you accept it; <b>View ▸ Check Spelling</b>
(Shift+F7) turns it off.</p>
<p><b>Edit ▸ Go to Heading…</b> (Ctrl+Shift+O) lists the document's headings (or a plain text's chapter lines);
type a few letters of one and press Enter to go there. <b>Edit ▸ Move Section Up</b> and <b>Down</b>
(Alt+Shift+Up, Alt+Shift+Down, or a right-click on a heading in the Outline) move the section you are in, with
everything under its heading, past the one beside it; or drag a heading in the Outline to where the line
shows it may go (a chapter into another part too). Ctrl+Z puts it back. The arrow before a part's title in
the Outline folds its chapters away, and shows them again; its right-click menu folds them all, or selects a
chapter to copy or cut (<b>Edit ▸ Select Section</b> selects the one you are in). <b>F6</b> takes the keys to
the Outline: Up and Down choose a heading, Enter goes there, Left and Right fold, Alt+Shift+Up/Down move that
section, the menu key opens its menu, and Esc brings the keys back to the text. F6 goes round the panes: the
text, the Outline, the drafts while some wait, and the text again; <b>Shift+F6</b> goes the other way.</p>
<p><b>View ▸ Focus Mode</b> (F11) puts the text alone on the screen: the menus, toolbar and Drafts panel step
aside and every key still works. F11, or Esc with no rewrite open, brings them back. <b>View ▸ Typewriter
Scrolling</b> keeps the line you are writing at the middle of the view. <b>View ▸ Session Word Goal…</b> sets
how many words to write in this sitting; the status bar counts the words the document has gained since you
opened it, and says when the goal is reached.</p>
<p>In a text whose quotation marks are curly (‘ ’ “ ”), the ' and " keys type curly ones, and drafts use them
too; in a German text of low marks („ “) or a French one of guillemets (« », with the space it sets inside them)
they type those; in a text of straight marks they stay straight. An apostrophe that starts a shortened word (’Tis, ’em,
’90s) turns the right way as the word ends. In a text of em dashes (—), two hyphens after a word make one.</p>
<p>A file you open again opens where you left off: the caret where it was, its line in the middle of the
window.</p>
<p>Each time you save, Redraft keeps a copy of what the file held: <b>File ▸ Saved Versions…</b> lists them,
each previewed with what restoring it would change marked, and Restore puts one back in the editor (Ctrl+Z
undoes it; Save keeps it). The versions follow
the file through Save As, and through a rename or a move in your file manager.</p>
<p><b>File ▸ Export as PDF…</b> sets the document on pages to send or print; <b>File ▸ Export as Word Document…</b>
writes a .docx for an editor or a publisher, a Markdown document's headings, lists, quotes, tables and footnotes as
Word's own. A PDF numbers footnotes in the text and sets them as Notes at the end. Both carry a Markdown document's
pictures (<code>![a caption](images/map.png)</code>, read from beside the document), scaled to fit the page, and
tell you of any they could not read. Both export what Save would write: a rewrite still open goes as its
original. A Markdown document's front matter (a <code>---</code> block on its first lines, with
<code>title:</code>, <code>subtitle:</code>, <code>author:</code> and <code>date:</code>, as Pandoc reads it) is
never printed: every export opens with its title block and names its title and authors in the file's properties.
Where it names no author, your name in <b>Settings ▸ Documents</b> does.</p>
<p><b>Format ▸ Footnote</b> (Ctrl+Alt+F) puts a footnote where the cursor is, <code>[^1]</code>, and takes you to
its line at the end of the text to type the note; the same keys take you back. Notes numbered in order stay in
order: one put in before others takes its place's number, and theirs move up; <b>Format ▸ Renumber
Footnotes</b> puts them in order again after a cut and paste. <b>Format ▸ Picture…</b>, or a
picture file dragged onto the text, puts a picture in as a paragraph of its own,
<code>![a caption](images/map.png)</code>; the mouse resting on that line shows the picture.</p>
<p><b>Copy</b> in a Markdown document keeps the passage's look where you paste it: a word processor, a mail or a
web page takes its headings, emphasis, lists, quotes and links as formatting (its tracked changes made, its
front matter left out), while a plain-text place, and Redraft itself, takes the Markdown as you wrote it.
<b>Paste</b> works the other way: text copied from a web page, a mail or a word processor comes in with its
emphasis, headings, lists, quotes and links written as Markdown; <b>Edit ▸ Paste Without Formatting</b>
(Ctrl+Alt+V) pastes its words alone.</p>
<p><b>File ▸ Open…</b> also opens a Word document (.docx, or an older .doc from Word 97 to 2003), a LibreOffice one
(.odt) or an RTF file (.rtf, as TextEdit, WordPad and Scrivener write): its words come in as Markdown, with its
headings, lists, quotes, emphasis, links, tables and footnotes; its tracked changes marked to review one by one,
accepted, or left out, as you choose when it opens. The file itself is never saved over: Save keeps your work as a
Markdown file beside it, and Export as Word Document writes a .docx again. Its comments stay where they were made,
as <code>&lt;!-- Ed: … --&gt;</code> notes, and <b>Edit ▸ Next Note</b> (F8) selects each in turn; exports leave
notes out, but Export as Word Document offers to put them back as Word comments. <b>Edit ▸ New Note</b>
(Ctrl+Alt+M) writes one of your own after the words selected, which goes to Word as your comment; what could
not come across (pictures) is counted when it opens. A file dragged onto the text opens as Open would open it.</p>
"""

WELCOME = """
<h3>Welcome to Redraft</h3>
<p>Redraft is running on its <b>demo model</b>: a small model built into Redraft so that it works on any
computer, offline. It shows how Redraft develops text pass by pass, <b>but it does not write well</b>:
expect odd words and broken sentences.</p>
<p>For real rewrites, give Redraft a real model, either</p>
<ul>
<li><b>a DiffusionGemma checkpoint on an NVIDIA GPU</b> (Settings ▸ Model), or</li>
<li><b>your team's server</b>, if it runs one (Settings ▸ Server).</li>
</ul>
<p>Both are in Settings, and this message will not show again.</p>
"""


def _plain(text: str) -> str:
    """An action's menu text as a writer reads it: no mnemonic ampersand, no ellipsis."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&").rstrip("…").strip()


def shortcut_rows(menus: Iterable[QMenu], seen: set[int] | None = None) -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every action with a shortcut, read from the menus themselves; an action in two
    menus (the tracked-changes keys: Edit and Rewrite) once, under the first."""
    rows = []
    seen = set() if seen is None else seen
    for menu in menus:
        for action in menu.actions():
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                rows.extend(shortcut_rows([submenu], seen))
                continue
            if id(action) in seen:
                continue
            seen.add(id(action))
            keys = [key.toString(QKeySequence.SequenceFormat.NativeText) for key in action.shortcuts()]
            keys = [key for key in keys if key]
            if keys and not action.isSeparator():
                rows.append((_plain(menu.title()), _plain(action.text()), " or ".join(keys)))
    return rows


def shortcuts_html(menus: Iterable[QMenu]) -> str:
    lines = ["<h3>Keyboard shortcuts</h3><table cellspacing='0' cellpadding='4'>"]
    last_menu = ""
    for menu, action, keys in shortcut_rows(menus):
        if menu != last_menu:
            lines.append(f"<tr><td colspan='2'><b>{escape(menu)}</b></td></tr>")
            last_menu = menu
        lines.append(f"<tr><td>{escape(action)}</td><td><code>{escape(keys)}</code></td></tr>")
    lines.append("</table><p>While a draft waits, <b>Tab</b> accepts it as <b>Enter</b> does. Otherwise, in a Markdown "
                 "list, <b>Enter</b> starts the next item (on an empty one it ends the list), <b>Tab</b> nests an item "
                 "and <b>Shift+Tab</b> brings it back.</p>"
                 "<p>In the Outline (<b>F6</b> takes the keys there): <b>Up</b> and <b>Down</b>, or a title's first "
                 "letters, choose a heading, <b>Enter</b> goes to it, <b>Left</b> and <b>Right</b> fold a part and "
                 "step in and out of it, the menu key or <b>Shift+F10</b> opens its menu, <b>Esc</b> goes back.</p>"
                 "<p>In the Drafts (<b>F6</b> goes round to them while some wait): <b>Up</b> and <b>Down</b> put a "
                 "draft in the text, <b>Enter</b> accepts it, <b>Ctrl+C</b> copies it, the menu key opens its menu, "
                 "<b>Esc</b> goes back.</p>")
    return "\n".join(lines)


def files_html(dirs: UserDirs) -> str:
    rows = [
        ("Recovery files", dirs.recovery, "unsaved text, kept while Redraft runs and offered back after a crash"),
        ("Logs", dirs.logs, "what went wrong, in detail (redraft.log); attach it to a bug report"),
        ("Your words and saved versions", dirs.data, "the words you added to the dictionary (words.txt) and, in "
         "“saved versions”, what each save wrote (File ▸ Saved Versions…: a file's last 30 saves, then one a day)"),
        ("Settings", dirs.settings, "your preferences"),
        ("Models", dirs.models, "models you add"),
    ]
    lines = ["<h3>Where your files are</h3><p>Your documents are wherever you save them. Redraft keeps:</p>"]
    for name, path, what in rows:
        link = QUrl.fromLocalFile(str(path)).toString()
        lines.append(f"<p><b>{name}</b>: {escape(what)}<br><a href='{escape(link)}'>{escape(str(path))}</a></p>")
    lines.append("<p>A folder that does not exist yet is made when something is first written to it.</p>")
    return "\n".join(lines)


class HelpPage(QDialog):
    """A page of rich text with a Close button."""

    def __init__(self, parent: QWidget, title: str, html: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.browser = QTextBrowser()
        self.browser.setAccessibleName(title)  # a screen reader names the page it reads
        self.browser.setOpenExternalLinks(True)
        self.browser.setHtml(html)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(560, 520)


class WelcomeDialog(QDialog):
    """Shown once, on the first start with the built-in model: what it is, and the ways to real rewrites."""

    settingsRequested = Signal()

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setWindowTitle("Welcome to Redraft")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        text = QLabel(WELCOME)
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        buttons = QDialogButtonBox(self)  # in the dialog already: its default holds
        self.model_button = QPushButton("Use a &checkpoint (Settings ▸ Model)…")
        self.server_button = QPushButton("Use a team &server (Settings ▸ Server)…")
        self.demo_button = QPushButton("&Try the demo")
        buttons.addButton(self.model_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.server_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.demo_button, QDialogButtonBox.ButtonRole.AcceptRole)
        self.demo_button.setDefault(True)
        for button in (self.model_button, self.server_button):
            button.clicked.connect(self._open_settings)
        buttons.accepted.connect(self.accept)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(buttons)
        self.setMaximumWidth(640)


    def _open_settings(self) -> None:
        self.accept()
        self.settingsRequested.emit()
