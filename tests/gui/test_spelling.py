"""View ▸ Check Spelling (app/window/spelling.py): the real English word list, the real highlighter's underlines
as Qt lays them out, and the right-click offers, on a window with the tiny model."""

from __future__ import annotations

from pathlib import Path

import pytest
from gui_helpers import SIGNAL_TIMEOUT_MS, PassRecorder, select
from PySide6.QtCore import QMimeData, Qt
from PySide6.QtGui import QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QMenu

from app.window.dictionary import Dictionary, detect_language, misspelled, neighbouring_keys, typo_weight
from app.window.spelling import language_for

SPELLED = QTextCharFormat.UnderlineStyle.SpellCheckUnderline


@pytest.fixture()
def words(tmp_path: Path) -> Dictionary:
    dictionary = Dictionary(tmp_path / "words.txt")
    dictionary.load()
    assert dictionary.ready and not dictionary.error
    return dictionary


def flagged(text: str, dictionary: Dictionary) -> list[str]:
    return [text[a:b] for a, b in misspelled(text, dictionary.knows, dictionary.function_words)]


def test_only_words_no_dictionary_knows_are_flagged(words: Dictionary) -> None:
    text = (
        "Teh keeper’s cat, ‘Dinah’, watched the harbour’s colour change; she’d recieve NATO's note at "
        "https://exmaple.org/pgae or me@exmaple.org, run `fucntion` on mp3 and snake_caes files. It's o'clock, OK? "
        "[The mapp](imgs/bayy.png)"
    )
    assert flagged(text, words) == ["Teh", "recieve", "mapp"]  # a link's words, not its target
    noted = "The keeper said so in his letter to the board.[^kepr] Teh end of it was that he left."
    assert flagged(noted, words) == ["Teh"]  # a footnote's label is the writer's name for it, never printed
    # British forms of the list's words pass; a misspelling that only looks British does not.
    assert all(words.knows(w) for w in ("organise", "centre", "catalogue", "defence", "travelling", "Colours"))
    assert not words.knows("harbuor") and not words.knows("colourr")
    # Words in other scripts are no list's to judge (every list offered is in Latin letters); accents are.
    assert flagged("Snow fell on 東京 and on Ἀρχή, Привет and שלום, in a caffé.", words) == ["caffé"]
    # A word an apostrophe shortens at its start is spelled so; the same letters without one are not.
    assert flagged("’Tis true, 'twere best to tell ’em. Tis true.", words) == ["Tis"]


def test_a_paragraph_in_another_language_is_left_unmarked_and_a_typo_ridden_english_one_is_not(
    words: Dictionary,
) -> None:
    french = "Le vieux gardien montait l'escalier chaque soir. Il comptait les marches comme son père."
    german = "Der alte Wärter stieg jeden Abend die Treppe hinauf. Er zählte die Stufen wie sein Vater."
    assert flagged(french, words) == [] and flagged(german, words) == []
    typos = "Teh keeper climbd the stiars every evenign. The numbres for travel and equipmnet do not macth."
    assert flagged(typos, words) == ["Teh", "climbd", "stiars", "evenign", "numbres", "equipmnet", "macth"]
    # A short foreign phrase inside English prose is marked as any unknown word is.
    assert flagged("She had a certain je ne sais quoi about her.", words) == ["je", "sais", "quoi"]


def test_suggestions_are_near_common_words_in_the_words_case(words: Dictionary) -> None:
    assert words.suggestions("recieve")[0] == "receive"
    assert "The" in words.suggestions("Teh") and all(s[0].isupper() for s in words.suggestions("Teh"))
    assert words.suggestions("THIER")[0] == "THEIR"
    assert len(words.suggestions("a" + "x" * 9)) <= 6  # a long word: one edit away only, and quickly


def test_suggestions_put_the_likeliest_slip_first_not_only_the_commonest_word(words: Dictionary) -> None:
    # By frequency alone "climb" and "with" came first: a letter left out is likelier than one added or wrong.
    assert words.suggestions("climbd")[:2] == ["climbed", "climb"]
    assert words.suggestions("wich")[:2] == ["which", "with"]
    assert words.suggestions("untill")[0] == "until"  # a doubled letter
    assert typo_weight("teh", "the") > typo_weight("teh", "ten") > typo_weight("teh", "tea")  # swap, key beside
    assert neighbouring_keys("o", "p") and neighbouring_keys("h", "n") and not neighbouring_keys("c", "t")
    # Two common words run together are offered apart, in the word's case; the list's rare fragments are not.
    assert words.suggestions("alot")[0] == "a lot" and words.suggestions("Infact")[0] == "In fact"
    assert words.suggestions("occured") == ["occurred"]  # not "occur ed"


def test_other_languages_know_their_own_words_and_elisions_and_leave_english_alone(tmp_path: Path) -> None:
    french = Dictionary(tmp_path / "words.txt", "fr")
    french.load()
    text = "Le vieux gardien montait l'escalier chaque soir. Il comptait les marches comme son pèr, qu'il aimait."
    assert flagged(text, french) == ["pèr"]  # "l'escalier" and "qu'il" are two words each, both French
    assert french.suggestions("pèr")[0] == "père"
    assert not french.knows("qu'escalierr") and not french.knows("zz'il")
    english = "The keeper climbed the stairs every evening and counted them as his father had done."
    assert flagged(english, french) == []  # a paragraph in English is left unmarked, not red throughout
    assert not french.knows("colour")  # English's British forms are English's only
    german = Dictionary(tmp_path / "words.txt", "de")
    german.load()
    text = "Der alte Wärter stieg jeden Abend die Treppe hinauf. Er zählte die Stufen wie sein Vatr."
    assert flagged(text, german) == ["Vatr"] and german.suggestions("Vatr")[0] == "Vater"
    # The first language is the system's where it is offered.
    assert language_for("fr_CA") == "fr" and language_for("de") == "de"
    assert language_for("ja_JP") == "en" and language_for("C") == "en" and language_for("es_ES") == "en"


def test_the_writers_own_words_are_kept_across_sessions(words: Dictionary, tmp_path: Path) -> None:
    assert not words.knows("Quillworth")
    words.add("Quillworth")
    words.ignore("Brannigrove")
    assert words.knows("Quillworth") and words.knows("Brannigrove")
    again = Dictionary(tmp_path / "words.txt")
    again.load()
    assert again.knows("Quillworth") and not again.knows("Brannigrove")  # ignoring lasts the session only
    again.add("Ostrevant")
    again.remove("Quillworth")  # added by mistake: off the list, the other words kept
    assert not again.knows("Quillworth") and again.knows("Ostrevant")
    assert (tmp_path / "words.txt").read_text(encoding="utf-8") == "Ostrevant\n"


def underlined(window) -> list[str]:
    """The words the editor shows with the spelling underline, as Qt lays the document out."""
    editor = window.editor
    found = []
    block = editor.document().firstBlock()
    while block.isValid():
        for part in block.layout().formats():
            if part.format.underlineStyle() == SPELLED:
                found.append(block.text()[part.start : part.start + part.length])
        block = block.next()
    return found


def spelling_window(document_window, qtbot, monkeypatch, tmp_path: Path, text: str, **overrides):
    monkeypatch.setenv("REDRAFT_HOME", str(tmp_path / "home"))  # the writer's own words: this test's
    window = document_window(text, **{"spelling_language": "en", **overrides})  # whatever the system's language
    window.spelling.wait_loaded()
    qtbot.waitUntil(lambda: window.spelling.dictionary.ready and bool(underlined(window)), timeout=SIGNAL_TIMEOUT_MS)
    return window


def test_misspelled_words_are_underlined_and_a_right_click_mends_one_as_one_undo_step(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    text = "The keeper climbd the stairs every evening.\n\n# A hedding\n\nShe wrote the lettr twice.\n"
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, text)
    assert underlined(window) == ["climbd", "hedding", "lettr"]  # a Markdown heading's words too
    editor = window.editor
    menu = QMenu()
    menu.addAction("Qt's own")
    cursor = QTextCursor(editor.document())
    cursor.setPosition(text.index("climbd") + 3)
    window.spelling.offer(menu, cursor)
    labels = [action.text() for action in menu.actions()]
    assert {"climbed", "climb"} <= set(labels[:6]) and "Add “climbd” to Dictionary" in labels
    assert labels[-1] == "Qt's own"  # spelling's offers above Qt's own
    next(action for action in menu.actions() if action.text() == "climbed").trigger()
    assert editor.plain_text() == text.replace("climbd", "climbed")
    assert underlined(window) == ["hedding", "lettr"]
    assert editor.document().isModified()  # the writer's edit, like typing it
    window.undo()
    assert editor.plain_text() == text  # one step back: the word as it was
    # A right-click on a word the dictionary knows offers nothing of spelling's.
    plain = QMenu()
    plain.addAction("Qt's own")
    cursor.setPosition(text.index("stairs"))
    window.spelling.offer(plain, cursor)
    assert [action.text() for action in plain.actions()] == ["Qt's own"]


def test_add_to_dictionary_and_turning_spelling_off_are_remembered(
    document_window, make_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    text = "Quillworth climbed the stairs. The lettr waited.\n"
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, text)
    assert underlined(window) == ["Quillworth", "lettr"]
    menu = QMenu()
    cursor = QTextCursor(window.editor.document())
    cursor.setPosition(2)
    window.spelling.offer(menu, cursor)
    next(a for a in menu.actions() if a.text() == "Add “Quillworth” to Dictionary").trigger()
    assert underlined(window) == ["lettr"]
    assert (tmp_path / "home" / "data" / "words.txt").read_text(encoding="utf-8") == "Quillworth\n"
    # Added by mistake: a right-click on it takes it off again.
    again_menu = QMenu()
    window.spelling.offer(again_menu, cursor)
    labels = [action.text() for action in again_menu.actions()]
    assert labels[0] == "Remove “Quillworth” from Dictionary" and "Add “Quillworth” to Dictionary" not in labels
    again_menu.actions()[0].trigger()
    assert underlined(window) == ["Quillworth", "lettr"]
    assert (tmp_path / "home" / "data" / "words.txt").read_text(encoding="utf-8") == ""
    window.spelling.dictionary.add("Quillworth")
    window.editor.highlighter.rehighlight()
    assert underlined(window) == ["lettr"]
    window.spelling.action.trigger()  # View ▸ Check Spelling off
    assert underlined(window) == []
    again = make_window()  # the writer's next start: the same settings file
    assert not again.spelling.action.isChecked() and again.prefs.check_spelling is False


def test_a_developing_span_is_not_marked_and_its_words_are_once_it_ends(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    text = "The keeper climbd the stairs every evening. She wrote the lettr twice.\n"
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, text, max_denoising_steps=4)
    seen: list[list[str]] = []
    recorder = PassRecorder(window, lambda _job, _painted: seen.append(underlined(window)))
    select(window, "keeper climbd the stairs")
    job_id = window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert recorder.count(job_id) >= 1
    # The tiny model writes noise the dictionary would paint red: the span has none, the rest keeps its own.
    assert seen and all(words == ["lettr"] for words in seen), seen
    assert underlined(window) == ["lettr"]  # the draft waiting in the text: the model's, not yet the writer's
    window.reject_rewrite()
    assert window.editor.plain_text() == text
    assert underlined(window) == ["climbd", "lettr"]  # the writer's words back, and marked again
    # Accepted, the draft is the writer's text: its words are checked like any other.
    select(window, "keeper climbd the stairs")
    window.rewrite_selection()
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    window.accept_rewrite()
    accepted = window.editor.plain_text()
    assert accepted != text and underlined(window) == flagged(accepted, window.spelling.dictionary)


def test_a_word_being_typed_is_marked_only_once_the_caret_moves_on(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    text = "The lettr waited.\n"
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, text)
    editor = window.editor
    editor.setFocus()
    editor.select_range(len("The lettr waited."), len("The lettr waited."))
    qtbot.keyClicks(editor, " The harb")
    assert underlined(window) == ["lettr"]  # "harb", on its way to "harbour", is not red at every letter
    qtbot.keyClicks(editor, "r")
    assert underlined(window) == ["lettr"]
    qtbot.keyClicks(editor, " was")
    assert underlined(window) == ["lettr", "harbr"]  # the word is done: marked
    qtbot.keyClicks(editor, " calmm")
    qtbot.keyClick(editor, Qt.Key.Key_Home)  # the caret leaves the word without typing on
    assert underlined(window) == ["lettr", "harbr", "calmm"]
    assert editor.plain_text() == "The lettr waited. The harbr was calmm\n"
    # A right-click on the word the caret ends (it does not move the caret) still offers its mends.
    qtbot.keyClick(editor, Qt.Key.Key_End)
    menu = QMenu()
    window.spelling.offer(menu, editor.textCursor())
    assert "calm" in [action.text() for action in menu.actions()]


def test_f7_selects_each_misspelling_in_turn_and_the_help_lists_both_keys(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    text = "The lettr waited.\n\nThe harbr was calm, the lettr too.\n"
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, text)
    editor = window.editor
    editor.setFocus()
    editor.select_range(text.index("waited"), text.index("waited"))
    selected = []
    for _ in range(4):
        qtbot.keyClick(editor, Qt.Key.Key_F7)
        cursor = editor.textCursor()
        selected.append((cursor.selectionStart(), editor.text_between(cursor.selectionStart(), cursor.selectionEnd())))
    second_lettr = text.index("lettr", text.index("harbr"))
    # After the caret first, then on past the end from the top: every misspelling, in order.
    assert selected == [(text.index("harbr"), "harbr"), (second_lettr, "lettr"), (text.index("lettr"), "lettr"),
                        (text.index("harbr"), "harbr")]  # fmt: skip
    editor.setPlainText("All is well.\n")
    qtbot.keyClick(editor, Qt.Key.Key_F7)
    assert window.statusBar().currentMessage() == "No misspelled words."
    listed = window.show_shortcuts().browser.toPlainText()
    assert "Next Misspelling\nF7" in listed and "Check Spelling\nShift+F7" in listed
    assert editor.plain_text() == "All is well.\n"  # looking never edits


def test_choosing_a_spelling_language_checks_the_text_in_it_and_is_remembered(
    document_window, make_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    text = (
        "The keeper climbd the stairs every evening and counted them.\n\n"
        "Le vieux gardien montait l'escalier chaque soir. Il comptait les marches comme son pèr.\n\n"
        "Der alte Wärter stieg jeden Abend die Treppe hinauf. Er zählte die Stufen wie sein Vatr.\n"
    )
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, text)
    assert underlined(window) == ["climbd"]  # the French and German paragraphs left alone in English
    menu = window.spelling.language_menu
    assert menu.menuAction() in window.view_menu.actions()
    assert [a.text() for a in menu.actions() if a.isChecked()] == ["&English"]
    next(a for a in menu.actions() if a.text() == "&Français").trigger()
    window.spelling.wait_loaded()
    qtbot.waitUntil(lambda: underlined(window) == ["pèr"], timeout=SIGNAL_TIMEOUT_MS)  # now English is foreign
    assert [a.text() for a in menu.actions() if a.isChecked()] == ["&Français"]
    # Chosen with spelling off, a language turns it on.
    window.spelling.action.setChecked(False)
    assert underlined(window) == []
    next(a for a in menu.actions() if a.text() == "&Deutsch").trigger()
    assert window.spelling.action.isChecked()
    window.spelling.wait_loaded()
    qtbot.waitUntil(lambda: underlined(window) == ["Vatr"], timeout=SIGNAL_TIMEOUT_MS)
    again = make_window()  # the writer's next start: the same settings file
    assert again.prefs.spelling_language == "de" and again.spelling.language == "de"
    assert [a.text() for a in again.spelling.language_menu.actions() if a.isChecked()] == ["&Deutsch"]


FRENCH_STORY = (
    "Le vieux gardien montait l'escalier chaque soir. Il comptait les marches comme son pèr avant lui, et les "
    "lumières du port s'allumaient une à une. Elle avait écrit la lettre deux fois, puis elle était descendue "
    "vers le port au lieu de la poster. Nous savions tous que la mer était dangereuse en hiver, mais personne ne "
    "voulait le dire. Vous pouvez rester ici pour la nuit si vous le souhaitez, dit-elle avec un sourire.\n"
)


def test_a_document_in_another_language_is_checked_in_its_own_for_itself_only(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    assert detect_language(FRENCH_STORY) == "fr" and detect_language("Too short to tell.") is None
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, "The keeper climbd the stairs.\n")
    menu = window.spelling.language_menu
    french = tmp_path / "gardien.txt"
    french.write_text(FRENCH_STORY, encoding="utf-8")
    assert window.open_path(french)
    assert window.spelling.language == "fr" and "reads as Français" in window.statusBar().currentMessage()
    window.spelling.wait_loaded()
    qtbot.waitUntil(lambda: underlined(window) == ["pèr"], timeout=SIGNAL_TIMEOUT_MS)
    assert [a.text() for a in menu.actions() if a.isChecked()] == ["&Français"]
    assert window.prefs.spelling_language == "en"  # the writer's language is unchanged
    window.new_document()  # nothing to read: the writer's language again
    assert window.spelling.language == "en" and [a.text() for a in menu.actions() if a.isChecked()] == ["&English"]


def test_a_word_list_that_finishes_loading_after_its_window_closed_tells_nobody(make_window) -> None:
    import shiboken6

    window = make_window()
    spelling = window.spelling
    shiboken6.delete(spelling)  # as closing the window does, while the list's thread still reads
    spelling._load(spelling.language)  # the thread's last step: before, "Signal source has been deleted"
    assert not shiboken6.isValid(spelling)


def test_a_long_text_is_underlined_where_the_writer_looks_at_once_and_everywhere_soon_keys_going_on(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    """Spelling turned on in a novel: the view's words are marked at once, the rest a slice at a time between
    keystrokes (rehighlighting War and Peace at once froze the window for two seconds), and lines typed meanwhile
    leave no paragraph unmarked."""
    paragraph = "She wrote the lettr twice, then walked to the harbour.\n"
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, paragraph * 3000)
    highlighter, editor = window.editor.highlighter, window.editor
    window.spelling.action.setChecked(False)
    qtbot.waitUntil(lambda: not highlighter.showing_again, timeout=SIGNAL_TIMEOUT_MS)
    assert underlined(window) == []
    editor.verticalScrollBar().setValue(editor.verticalScrollBar().maximum() // 2)
    top = editor.firstVisibleBlock().blockNumber()
    window.spelling.action.setChecked(True)
    marked = underlined(window)
    assert 10 <= len(marked) < 3000 and highlighter.showing_again  # the view's now, not the whole book's
    assert any(part.format.underlineStyle() == SPELLED for part in editor.document().findBlockByNumber(top + 3)
               .layout().formats())  # fmt: skip
    place_cursor_at_start(editor)
    qtbot.keyClicks(editor, "lettr")  # typed while the slices go on: every paragraph is still reached
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not highlighter.showing_again, timeout=SIGNAL_TIMEOUT_MS)
    qtbot.keyClick(editor, Qt.Key.Key_Down)  # the first line's word, held while typed, marked as the caret leaves
    assert underlined(window) == ["lettr"] * 3001


def place_cursor_at_start(editor) -> None:
    cursor = editor.textCursor()
    cursor.setPosition(0)
    editor.setTextCursor(cursor)


def test_a_long_book_opens_before_its_spelling_is_checked_and_its_first_page_is_at_once(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    """War and Peace opened in 3 s, its spelling checked as its text went in: now the text goes in first and the
    underlines follow, the first page's at once."""
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, "The lettr.\n")
    book = tmp_path / "book.txt"
    book.write_text("She wrote the lettr twice.\n\n" * 1000, encoding="utf-8")
    assert window.open_path(book)
    highlighter = window.editor.highlighter
    assert highlighter.showing_again and 10 <= len(underlined(window)) < 1000
    qtbot.waitUntil(lambda: not highlighter.showing_again, timeout=SIGNAL_TIMEOUT_MS)
    assert underlined(window) == ["lettr"] * 1000


def test_a_novel_pasted_whole_goes_in_before_its_spelling_is_checked(
    document_window, qtbot, monkeypatch, tmp_path: Path
) -> None:
    window = spelling_window(document_window, qtbot, monkeypatch, tmp_path, "The lettr.\n")
    pasted = QMimeData()
    pasted.setText("She wrote the lettr twice.\n\n" * 1000)
    window.editor.insertFromMimeData(pasted)
    highlighter = window.editor.highlighter
    assert highlighter.showing_again and len(underlined(window)) < 1001  # the view's first
    qtbot.waitUntil(lambda: not highlighter.showing_again, timeout=SIGNAL_TIMEOUT_MS)
    assert underlined(window) == ["lettr"] * 1001
    window.undo()
    assert window.editor.plain_text() == "The lettr.\n"  # one step, as any paste
