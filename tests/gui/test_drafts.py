"""Drafts side by side as they develop, and every version of a span back (#38): the real worker thread,
the real tiny model, the panel and the Versions dialog as the writer uses them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from gui_helpers import DOCUMENT, HAND_WRAPPED, SIGNAL_TIMEOUT_MS, PassRecorder, place_cursor, select
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QTextDocumentFragment
from PySide6.QtWidgets import QApplication

from app.dialogs.recovery import recover_into
from app.dialogs.versions import VersionsDialog, choose_version
from app.documents.recovery import RecoveryArea
from app.rewrite.drafts import leading_candidate
from app.rewrite.drafts_panel import shown_scores
from app.rewrite.run import with_lead, without_lead, wrap_lead
from app.window.editor_widget import Phase
from model import EditResult

ROOT = Path(__file__).resolve().parents[2]
SPAN = "climbed the stairs"


def finish(qtbot, window) -> EditResult:
    qtbot.waitUntil(lambda: window.run is not None and window.run.result is not None, timeout=SIGNAL_TIMEOUT_MS)
    assert window.editor.phase is Phase.REVIEW
    return window.run.result


def card_texts(window) -> list[str]:
    """What each visible card of the drafts panel reads, in the panel's order."""
    cards = [card for card in window.drafts_panel.cards if not card.isHidden()]
    return [QTextDocumentFragment.fromHtml(card.body.text()).toPlainText() for card in cards]


def pick_version(label_start: str) -> None:
    """Answer the Versions dialog when it opens: the version whose label starts so, then Put Back."""

    def answer() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, VersionsDialog):
            QTimer.singleShot(10, answer)
            return
        row = next(i for i, v in enumerate(dialog.versions) if v.label.startswith(label_start))
        dialog.list.setCurrentRow(row)
        dialog.put_back_button.click()

    QTimer.singleShot(0, answer)


def test_the_panel_shows_every_draft_as_it_develops_then_ranks_them(document_window, qtbot) -> None:
    window = document_window(candidates=4, max_denoising_steps=8, seed=5)
    editor = window.editor
    start, end = select(window, SPAN)
    seen: list[tuple[object, list[str], str]] = []  # (pass, what the panel's cards read, what the span reads)

    def check(_job: int, painted) -> None:  # right after the controller and the panel painted this pass
        seen.append((painted, card_texts(window), editor.text_between(*editor.live_range())))

    recorder = PassRecorder(window, check)  # noqa: F841  kept alive while the run paints
    window.rewrite_selection()
    result = finish(qtbot, window)

    assert len(seen) == result.passes  # one paint per pass: nothing veiled, nothing replayed
    leader = None
    for painted, cards, span in seen:
        frames = ["".join(segment.text for segment in frame) for frame in painted.frames]
        assert len(frames) == 4 and cards == frames  # every candidate's own pass, in candidate order
        leader = leading_candidate(painted.raw, leader)
        assert painted.shown == leader and not painted.veiled
        assert span == frames[leader]  # the span shows the leading draft from the first pass on
    # Not only the winner's passes: the other drafts develop text of their own.
    assert any(len(set(cards)) > 1 for _, cards, _ in seen)
    assert seen[0][2] != SPAN

    # Ranked at the end: best first, each with its score; the text shows the best.
    panel = window.drafts_panel
    assert panel.order == result.ranking
    assert card_texts(window) == [result.texts[c] for c in result.ranking]
    headings = [card.heading.text() for card in panel.cards[:4]]
    scores = shown_scores(result.scores)
    for rank, candidate in enumerate(result.ranking):
        assert f"score {scores[candidate]}" in headings[rank]
    assert "in the text" in headings[0]
    assert editor.plain_text() == DOCUMENT[:start] + result.text + DOCUMENT[end:]


def test_a_long_drafts_card_keeps_the_last_words_before_its_developing_block(document_window, qtbot) -> None:
    from app.rewrite.drafts_panel import BLOCKS_BEFORE_CHARS

    window = document_window(text=DOCUMENT * 3, candidates=2, max_denoising_steps=6)
    seen: list[tuple[object, list[str]]] = []

    def check(_job: int, painted) -> None:
        seen.append((painted, card_texts(window)))

    recorder = PassRecorder(window, check)  # noqa: F841  kept alive while the run paints
    select(window, (DOCUMENT * 3).rstrip("\n"))
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert result.blocks >= 3
    cut = 0
    for painted, cards in seen:
        step = painted.raw
        for candidate, card in enumerate(cards):
            whole = step.committed[candidate] + "".join(s.text for s in painted.frames[candidate][1:])
            if len(step.committed[candidate]) <= BLOCKS_BEFORE_CHARS:
                assert card == "".join(s.text for s in painted.frames[candidate])
                continue
            cut += 1  # the finished blocks' last words, then the developing block as the text has it
            assert card.startswith("…") and whole.endswith(card[1:])
            assert len(card) <= 1 + BLOCKS_BEFORE_CHARS + len(whole) - len(step.committed[candidate])
    assert cut
    assert card_texts(window) == [result.texts[c] for c in result.ranking]  # finished: each draft whole


def test_a_hand_wrapped_paragraphs_cards_read_as_prose_while_the_text_keeps_its_wrapping(
    document_window, qtbot
) -> None:
    window = document_window(text=HAND_WRAPPED, candidates=2, max_denoising_steps=6)
    seen: list[list[str]] = []
    recorder = PassRecorder(window, lambda _job, _painted: seen.append(card_texts(window)))  # noqa: F841
    select(window, HAND_WRAPPED.rstrip("\n"))
    window.rewrite_selection()
    result = finish(qtbot, window)
    assert seen and all("\n" not in card for cards in seen for card in cards)  # the model's own breaks too
    width = max(map(len, HAND_WRAPPED.split("\n")))
    for text in result.texts:  # the text: wrapped again at the writer's width
        assert all(len(line) <= width for line in text.split("\n")), text
    assert any("\n" in text for text in result.texts)  # (a draft may end early: this model is a toy)
    # The cards, narrower than those lines: each draft as one paragraph of prose.
    assert card_texts(window) == [result.texts[c].replace("\n", " ") for c in result.ranking]
    window.tracked_changes.show_action.trigger()  # Show Changes: the cards show each draft's changes
    assert window.tracked_changes.show_action.isChecked()
    changes = card_texts(window)
    assert len(changes) == len(result.texts) and not any("\n" in card for card in changes)
    assert any(HAND_WRAPPED.split()[0] in card for card in changes)  # the original's struck words, as prose


def test_a_fills_cards_do_not_start_with_the_space_it_takes_after_a_sentence(document_window, qtbot) -> None:
    # The trial: each finished fill's card began " He was so happy", a space indenting it past the others.
    document = "It was late. The keeper climbed the stairs. He counted the steps.\n"
    window = document_window(text=document, candidates=2, max_denoising_steps=4)
    place_cursor(window, document.index(" He counted"))
    window.fill_gap(max_new_tokens=6)
    result = finish(qtbot, window)
    assert all(text.startswith(" ") for text in result.texts)  # in the text: one space after "stairs."
    assert card_texts(window) == [result.texts[c].strip() for c in result.ranking]


def test_a_hand_wrapped_paragraph_keeps_its_width_while_it_develops(document_window, qtbot) -> None:
    window = document_window(text=HAND_WRAPPED, candidates=1, max_denoising_steps=6)
    editor = window.editor
    spans: list[str] = []
    recorder = PassRecorder(window, lambda _job, _painted: spans.append(editor.text_between(*editor.live_range())))  # noqa: F841
    select(window, HAND_WRAPPED.rstrip("\n"))
    window.rewrite_selection()
    finish(qtbot, window)
    width = max(map(len, HAND_WRAPPED.split("\n")))
    assert len(spans) > 3
    for span in spans:  # every pass, noise and words, wrapped as the finished text is (a run of noise with no
        # space in it is one word, which no wrapping can break)
        assert all(len(line) <= width or " " not in line.strip() for line in span.split("\n")), span
    assert any(span.count("\n") >= 2 for span in spans)


def test_a_hand_wrapped_rewrite_whose_first_word_no_longer_fits_leaves_no_space_at_the_line_end(
    document_window, qtbot
) -> None:
    window = document_window(text=HAND_WRAPPED, candidates=2, max_denoising_steps=6)
    editor = window.editor
    documents: list[str] = []
    recorder = PassRecorder(window, lambda _job, _painted: documents.append(editor.plain_text()))  # noqa: F841
    selection = "the\nMouse heard this, it turned round and swam slowly back to her"  # "the" ends a full line
    start, end = select(window, selection)
    window.rewrite_selection()
    result = finish(qtbot, window)
    # The new first word did not fit in the three columns "the" had: it starts the next line, and the break
    # replaced the space before it instead of leaving it at the end of the line above.
    assert all(text.startswith("\n") for text in result.texts)
    head = HAND_WRAPPED[: start - 1]  # up to "When", without its space
    assert all(document.startswith(head + "\n") for document in documents[-2:])  # the passes so too
    qtbot.keyClick(editor, Qt.Key.Key_Escape)  # the original back, byte for byte, the writer's selection again
    assert editor.plain_text() == HAND_WRAPPED
    assert editor.textCursor().selectedText().replace("\u2029", "\n") == selection
    window.rewrite_selection()
    result = finish(qtbot, window)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    accepted = editor.plain_text()
    assert accepted == head + result.texts[result.ranking[0]] + HAND_WRAPPED[end:]
    assert not any(line.endswith((" ", "\t")) for line in accepted.split("\n"))
    window.undo()  # one step, the space back with the words
    assert editor.plain_text() == HAND_WRAPPED


def test_rewriting_a_wrapped_rewrites_words_again_adds_to_their_versions(document_window, qtbot) -> None:
    window = document_window(text=HAND_WRAPPED, candidates=2, max_denoising_steps=6)
    editor = window.editor
    start, end = select(window, "the\nMouse heard this, it turned round and swam slowly back to her")
    window.rewrite_selection()
    first = finish(qtbot, window)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    words = first.texts[first.ranking[0]].lstrip("\n")  # its first word starts the next line (test above)
    select(window, words)  # the new words, as the writer selects them: not the break before them
    (track,) = window.versions.tracks
    assert [v.text for v in track.versions] == [HAND_WRAPPED[start:end], words]
    window.rewrite_selection()
    finish(qtbot, window)
    assert window.versions.tracks == [track]  # the same passage's track, not a second one
    assert [v.label for v in track.versions][:2] == ["Original", track.versions[1].label]
    assert len(track.versions) >= 2 and all(not v.text.startswith((" ", "\n")) for v in track.versions)
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    pick_version("Original")
    choose_version(window)  # the writer's own words back in place, the line break before them kept
    assert editor.plain_text() == HAND_WRAPPED[: start - 1] + "\n" + HAND_WRAPPED[start:]


def test_a_wrapped_rewrites_lead_is_the_spaces_after_words_and_a_break_may_take_its_place() -> None:
    assert wrap_lead("them!' When ") == " " and wrap_lead("dear!  ") == "  "
    assert wrap_lead("    ") == "" and wrap_lead("") == ""  # an indent at the line's start is the writer's
    assert with_lead("Mouse heard", " ") == " Mouse heard"  # the first word fitted: the space as it was
    assert with_lead("\nMouse heard", " ") == "\nMouse heard"  # it did not: the break in the space's place
    for draft in ("Mouse heard", "\nMouse heard"):
        assert without_lead(with_lead(draft, " "), " ") == "Mouse heard"  # a span's versions are its words
    assert without_lead(" Mouse", "") == " Mouse"  # no lead: the text as it is


def test_choosing_a_draft_puts_it_in_the_text_and_each_step_stays_one(document_window, qtbot) -> None:
    window = document_window(candidates=3, max_denoising_steps=6)
    editor = window.editor
    start, end = select(window, SPAN)
    undo_steps = editor.document().availableUndoSteps()
    window.rewrite_selection()
    result = finish(qtbot, window)
    second = result.ranking[1]
    assert result.texts[second] != result.text

    qtbot.keyClick(editor, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)  # the second draft as listed
    assert window.run.candidate == second
    assert editor.text_between(*editor.live_range()) == result.texts[second]
    window.drafts_panel.cards[2].clicked.emit(result.ranking[2])  # a click on the third card
    assert editor.text_between(*editor.live_range()) == result.texts[result.ranking[2]]
    qtbot.keyClick(editor, Qt.Key.Key_Escape)  # reject: the original, byte for byte, no step left
    assert editor.plain_text() == DOCUMENT
    assert editor.document().availableUndoSteps() == undo_steps

    select(window, SPAN)
    window.rewrite_selection()
    result = finish(qtbot, window)
    qtbot.keyClick(editor, Qt.Key.Key_2, Qt.KeyboardModifier.AltModifier)
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    accepted = DOCUMENT[:start] + result.texts[result.ranking[1]] + DOCUMENT[end:]
    assert editor.plain_text() == accepted
    window.undo()  # the accept is one step
    assert editor.plain_text() == DOCUMENT
    window.redo()
    assert editor.plain_text() == accepted


def test_a_draft_chosen_while_they_develop_is_the_one_that_stays(document_window, qtbot) -> None:
    window = document_window(candidates=3, max_denoising_steps=30, pass_display_ms=30)
    editor = window.editor
    select(window, SPAN)
    recorder = PassRecorder(window)
    job = window.rewrite_selection()
    qtbot.waitUntil(lambda: recorder.count(job) >= 2, timeout=SIGNAL_TIMEOUT_MS)
    painted = recorder.passes[-1][1]
    other = (painted.shown + 1) % 3
    window.drafts_panel.choose_listed(other)  # while developing the panel lists drafts in their order
    assert editor.text_between(*editor.live_range()) == "".join(s.text for s in painted.frames[other])
    result = finish(qtbot, window)
    assert window.run.candidate == other
    assert editor.text_between(*editor.live_range()) == result.texts[other]


def test_versions_bring_back_the_original_and_an_earlier_draft_as_one_step(document_window, qtbot) -> None:
    window = document_window(candidates=2, max_denoising_steps=6)
    editor = window.editor
    start, end = select(window, SPAN)
    window.rewrite_selection()
    first = finish(qtbot, window)
    first_text = first.text
    window.regenerate()  # a second try on the same span
    second = finish(qtbot, window)
    assert second.text != first_text
    qtbot.keyClick(editor, Qt.Key.Key_Return)
    assert editor.plain_text() == DOCUMENT[:start] + second.text + DOCUMENT[end:]

    track = window.versions.at_cursor()
    assert track is not None
    labels = [version.label for version in track.versions]
    assert labels[0] == "Original" and "Draft 1 of 2" in labels and "Draft 1 of 2, regeneration 1" in labels
    assert all(version.clock.count(":") == 2 for version in track.versions)

    pick_version("Original")
    qtbot.keyClick(editor, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert editor.plain_text() == DOCUMENT  # byte for byte

    pick_version("Draft 1 of 2")  # the first try's draft, shown before the regeneration
    window.versions_action.trigger()
    assert editor.plain_text() == DOCUMENT[:start] + first_text + DOCUMENT[end:]
    window.undo()  # one step back: the original again
    assert editor.plain_text() == DOCUMENT
    window.undo()
    assert editor.plain_text() == DOCUMENT[:start] + second.text + DOCUMENT[end:]


def test_versions_while_a_draft_waits_end_the_rewrite_first(document_window, qtbot) -> None:
    window = document_window(candidates=2, max_denoising_steps=6)
    editor = window.editor
    start, end = select(window, SPAN)
    window.rewrite_selection()
    result = finish(qtbot, window)
    window.cycle_candidate(+1)  # both drafts shown
    pick_version("Draft 1 of 2")
    choose_version(window)
    assert editor.phase is Phase.IDLE and window.run is None
    assert editor.plain_text() == DOCUMENT[:start] + result.text + DOCUMENT[end:]
    window.undo()  # one step, and the rewrite before it left none
    assert editor.plain_text() == DOCUMENT
    assert not editor.document().isUndoAvailable()


def test_no_versions_outside_a_rewritten_span(document_window, qtbot) -> None:
    window = document_window()
    select(window, SPAN)
    assert choose_version(window) is None
    assert "No versions here" in window.statusBar().currentMessage()


def test_versions_go_into_the_recovery_record_and_come_back_after_a_kill(
    make_window, tiny_checkpoint: Path, tmp_path: Path, qtbot
) -> None:
    home = tmp_path / "home"
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "REDRAFT_HOME": str(home), "PYTHONPATH": str(ROOT),
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "OMP_NUM_THREADS": "1"}  # fmt: skip
    driver = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "gui" / "versions_kill_driver.py"), str(out), str(tiny_checkpoint)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    ready = out / "ready.txt"
    deadline = time.monotonic() + 120
    while not ready.exists() and time.monotonic() < deadline:
        assert driver.poll() is None, driver.communicate()[1].decode()
        time.sleep(0.05)
    assert ready.exists(), "the driver never got its rewrite recorded"
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    shown = ready.read_text(encoding="utf-8").split("\0")  # the document, then each version's text
    document, original, drafts = shown[0], shown[1], shown[2:]

    (orphan,) = RecoveryArea(home / "recovery").orphans()
    assert orphan.text == document and orphan.versions
    window = make_window()
    recover_into(window, orphan)
    assert window.editor.plain_text() == document
    track = window.versions.tracks[0]
    assert [version.text for version in track.versions] == [original, *drafts]
    window.editor.setTextCursor(window.editor.textCursor())
    cursor = window.editor.textCursor()
    cursor.setPosition(track.start.position() + 1)
    window.editor.setTextCursor(cursor)
    pick_version("Original")
    choose_version(window)
    assert window.editor.plain_text() == document.replace(drafts[-1], original, 1)
    window.undo()
    assert window.editor.plain_text() == document


def test_old_records_without_versions_still_read(tmp_path: Path) -> None:
    import json

    dead = tmp_path / "recovery" / "1-dead"
    dead.mkdir(parents=True)
    body = b"An old record's text."
    meta = {"path": None, "title": "Untitled", "version": 1, "written_at": 1.0, "bytes": len(body)}
    (dead / "doc.record").write_bytes(json.dumps(meta).encode() + b"\n" + body)
    os.utime(dead, (1.0, 1.0))  # no lock file and long dead: not an instance that is starting
    (document,) = RecoveryArea(tmp_path / "recovery").orphans()
    assert document.text == "An old record's text." and document.versions == ()


def test_every_new_action_has_a_shortcut_in_help_and_the_panel_hides_for_good(
    document_window, make_window, qtbot
) -> None:
    window = document_window()
    page = window.show_shortcuts()
    listed = page.browser.toPlainText()
    for action in (window.versions_action, window.drafts_panel.toggle_action, window.drafts_panel.shade_action,
                   *window.drafts_panel.draft_actions):  # fmt: skip
        keys = action.shortcut().toString()
        assert keys and keys in listed, (action.text(), keys)
    assert window.drafts_panel.isVisible()  # shown by default

    window.drafts_panel.toggle_action.trigger()  # View ▸ Drafts Panel
    assert not window.drafts_panel.isVisible()
    window.drafts_panel.shade_action.trigger()  # View ▸ Shade Hesitant Words in the Text
    assert window.editor.shade_hesitation
    again = make_window()  # the same settings file: a writer's next start
    assert not again.drafts_panel.isVisible() and again.prefs.drafts_panel is False
    assert again.drafts_panel.shade_action.isChecked() and again.editor.shade_hesitation


def test_a_server_edit_shows_no_shading(document_window, qtbot) -> None:
    from app.rewrite.worker import _FrameBuilder
    from model import Pass

    step = Pass(step=0, block=0, blocks=1, tokens=[[40, 41]], accepted=[[True, True]], entropy=[[0.0, 0.0]],
                pieces=[[" a", " b"]], committed=[""], finished=[True], ms=1.0)  # fmt: skip
    decode = lambda ids: "".join(" " + chr(57 + i) for i in ids)  # noqa: E731
    server = _FrameBuilder(set(), decode, 100, entropy_known=False).live(step)
    local = _FrameBuilder(set(), decode, 100).live(step)
    assert all(segment.entropy is None for segment in server.frames[0])  # zeros there are a stand-in
    assert [segment.entropy for segment in local.frames[0]] == [0.0, 0.0]  # one per word


def test_where_drafts_are_slow_the_editor_writes_fewer_and_says_so(document_window, qtbot) -> None:
    for fewer_when_slow, expected in ((True, 1), (False, 4)):
        window = document_window(candidates=4, max_denoising_steps=8, fewer_drafts_when_slow=fewer_when_slow)
        engine = window.service.worker._engine
        engine.clock.ms_per_canvas_pass = 5000.0  # 40 s a draft at the step cap, as a large model on a CPU
        select(window, SPAN)
        window.rewrite_selection()
        label = window.figures_label
        assert not label.isVisible()  # the last run's figures are not this one's while it develops
        result = finish(qtbot, window)
        assert len(result.texts) == expected and len(card_texts(window)) == expected
        assert label.isVisible()
        if expected < 4:
            assert label.text().startswith("1 draft (of 4) · ") and "Fewer drafts than the 4" in label.toolTip()
            # A lone draft is not ranked: no "1 drafts, best first", no score of 0.00.
            assert window.drafts_panel.summary.text().startswith("One draft")
            heading = window.drafts_panel.cards[0].heading.text()
            assert "score" not in heading and "1." not in heading and "Draft" in heading
        else:
            assert label.text().startswith("4 drafts · ") and "Fewer" not in label.toolTip()
        window.reject_rewrite()


def test_a_finished_draft_is_copied_from_its_card_without_choosing_it(document_window, qtbot) -> None:
    window = document_window(candidates=3, max_denoising_steps=6)
    select(window, SPAN)
    window.rewrite_selection()
    panel = window.drafts_panel
    result = finish(qtbot, window)
    shown = window.run.candidate
    third = result.ranking[2]
    card = next(card for card in panel.cards if card.candidate == third)
    assert card.finished
    QApplication.clipboard().clear()
    card.copyRequested.emit(third)  # its right-click menu's Copy Draft
    assert QApplication.clipboard().text() == result.texts[third].strip()
    assert window.run.candidate == shown  # the text still shows the draft it showed
    assert window.statusBar().currentMessage() == "Draft 3 copied."
    panel.clear()  # no finished drafts listed (another document, or a run under way): nothing is copied
    QApplication.clipboard().setText("kept")
    panel.copy_draft(third)
    assert QApplication.clipboard().text() == "kept"


def test_versions_found_from_the_whole_sentence_the_writer_selected(document_window, qtbot) -> None:
    """The rewrite leaves the selection's full stop and edge space outside its span; selecting the sentence
    again (as Esc leaves it) or putting the caret after its full stop still finds its versions."""
    window = document_window(candidates=2, max_denoising_steps=6)
    editor = window.editor
    sentence = "She wrote the letter twice, then walked to the harbour instead."
    start, end = select(window, "\n" + sentence + "\n")  # a drag from the line before to the line after
    window.rewrite_selection()
    finish(qtbot, window)
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.plain_text() == DOCUMENT
    assert (editor.textCursor().selectionStart(), editor.textCursor().selectionEnd()) == (start, end)
    track = window.versions.at_cursor()
    assert track is not None and track.versions[0].text == sentence.rstrip(".")

    place_cursor(window, DOCUMENT.index(sentence) + len(sentence))  # just after the full stop
    assert window.versions.at_cursor() is track
    select(window, sentence)  # the sentence with its full stop, selected again later
    assert window.versions.at_cursor() is track
    select(window, "climbed the stairs every evening.")  # another sentence: none
    assert window.versions.at_cursor() is None
    select(window, "evening.\nShe wrote")  # reaches into a word beyond the span: not this span's
    assert window.versions.at_cursor() is None


def test_scores_are_told_apart_and_none_reads_minus_zero() -> None:
    assert shown_scores([-0.07, -0.2, -0.456]) == ["-0.07", "-0.20", "-0.46"]
    # A confident model's fills: two decimals would show four "-0.00".
    assert shown_scores([-0.0031, -0.0042, -0.012, -0.0004]) == ["-0.003", "-0.004", "-0.012", "0.000"]
    assert shown_scores([-0.00312, -0.00314]) == ["-0.0031", "-0.0031"]  # four decimals at most
    assert shown_scores([-0.05, -0.05]) == ["-0.05", "-0.05"]  # equal scores need no more digits
