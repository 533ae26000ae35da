"""A plain text's chapter lines as novels set them, and the prose lines that only look like them."""

from __future__ import annotations

from app.documents.chapters import chapters


def _found(text: str) -> list[tuple[int, str]]:
    return [(chapter.level, chapter.title) for chapter in chapters(text.split("\n"))]


def test_each_kind_of_chapter_line_and_its_title() -> None:
    text = (
        "CHAPTER III. A Caucus-Race\n\nWords.\n\nChapter 4\n\nWords.\n\nCHAPTER TWENTY-ONE\n\nWords.\n\n"
        "Stave One\n\nWords.\n\nLetter 4\n\nWords.\n\nChapter the Last\n\nWords.\n\nchapter 5\n\nWords.\n"
    )
    assert _found(text) == [(1, "CHAPTER III. A Caucus-Race"), (1, "Chapter 4"), (1, "CHAPTER TWENTY-ONE"),
                            (1, "Stave One"), (1, "Letter 4"), (1, "Chapter the Last")]  # fmt: skip


def test_a_numeral_alone_is_a_chapter_and_the_short_line_after_it_its_title() -> None:
    text = (
        " I\n\n Introduction\n\nThe Time Traveller (for so it will be convenient to speak of him) was\nexpounding.\n\n"
        " II\n\n The Machine\n\nThe thing the Time Traveller held in his hand.\n\n"
        "III\n\nWe all met again at dinner-time.\n\n"  # a sentence of one line is the chapter's first, no title
        "IV\n\nLIMMERIDGE HOUSE.\n\nWords.\n\n"  # set in capitals, a full stop is a title's
        "12.\n\nWords.\n\nEpilogue\n\nWords.\n"
    )
    assert _found(text) == [(1, "I. Introduction"), (1, "II. The Machine"), (1, "III"), (1, "IV. LIMMERIDGE HOUSE."),
                            (1, "12."), (1, "Epilogue")]  # fmt: skip


def test_a_title_on_the_next_line_or_past_one_blank_line() -> None:
    text = "CHAPTER I.\nThe Period\n\nIt was.\n\nCHAPTER 1\n\nThe River and Its History\n\nThe Mississippi.\n"
    assert _found(text) == [(1, "CHAPTER I. The Period"), (1, "CHAPTER 1. The River and Its History")]
    chapter_then_prose = "Chapter 3\nThe rain had not stopped since Tuesday, and the roads\nwere mud.\n"
    assert _found(chapter_then_prose) == [(1, "Chapter 3")]


def test_prose_that_only_looks_like_a_chapter_line_is_none() -> None:
    text = (
        "He said it was so.\n\nPart of the crowd moved away.\n\nBook.  I asked her once what was the attraction.\n\n"
        "Act third was the castle hall, and here Hagar appeared, having come to\nwork her spell and see the lovers\n"
        "part, which she did in a song of great beauty and power, as the\naudience saw.\n\n"
        "She counted:\nI\n\nIn the middle of a paragraph a numeral on its own line is none either.\n"
        "Chapter 2 was where\nit went wrong.\n\nM. Madeleine arrived.\n\n"  # an initial, not a thousand
        "I. A Fast-Fish belongs to the party fast to it.\n\nAnd so on.\n"  # a numbered sentence
    )
    assert _found(text) == []


def test_a_contents_list_is_no_chapter_and_a_part_may_stand_right_above_its_first() -> None:
    text = "CONTENTS\n\nCHAPTER I. Loomings\nCHAPTER II. The Carpet-Bag\nCHAPTER III. The Spouter-Inn\n\n" \
           "CHAPTER I. Loomings\n\nCall me Ishmael.\n"  # fmt: skip
    assert _found(text) == [(1, "CHAPTER I. Loomings")]
    assert _found("PART ONE\nChapter 1\n\nWords.\n\nChapter 2\nThe Storm\n\nWords.\n") == [
        (1, "PART ONE"), (2, "Chapter 1"), (2, "Chapter 2. The Storm")]  # fmt: skip
    long_entries = (
        "CONTENTS\n\nCHAPTER I.          Mrs. Rachel Lynde Is Surprised\nCHAPTER II.         Matthew Cuthbert Is "
        "Surprised\nCHAPTER III.        Marilla Is Surprised\nCHAPTER IV.         Morning\n"
    )
    assert _found(long_entries) == []


def test_parts_hold_their_chapters_and_a_prologue_stands_at_the_top() -> None:
    text = (
        "Prologue\n\nWords.\n\nPART ONE\n\nChapter 1\n\nWords.\n\nChapter 2\n\nWords.\n\n"
        "PART TWO\n\nChapter 1\n\nWords.\n\n  I\n\nA section of the chapter.\n\nEpilogue\n\nWords.\n"
    )
    assert _found(text) == [(1, "Prologue"), (1, "PART ONE"), (2, "Chapter 1"), (2, "Chapter 2"), (1, "PART TWO"),
                            (2, "Chapter 1"), (3, "I"), (1, "Epilogue")]  # fmt: skip
    volumes = "VOLUME I\n\nBOOK FIRST--A JUST MAN\n\nCHAPTER I--M. MYRIEL\n\nWords.\n\nBOOK SECOND\n\nWords.\n"
    assert _found(volumes) == [(1, "VOLUME I"), (2, "BOOK FIRST--A JUST MAN"), (3, "CHAPTER I--M. MYRIEL"),
                               (2, "BOOK SECOND")]  # fmt: skip


def test_a_plays_acts_hold_its_scenes_and_a_novels_play_is_no_part_of_its_shape() -> None:
    play = "ACT I\n\nSCENE 1. A room\n\nWords.\n\nSCENE 2\n\nWords.\n\nACT II\n\nSCENE 1\n\nWords.\n"
    assert _found(play) == [(1, "ACT I"), (2, "SCENE 1. A room"), (2, "SCENE 2"), (1, "ACT II"), (2, "SCENE 1")]
    novel = "CHAPTER ONE\n\nThe girls put on a play.\n\nACT I\n\nA gloomy wood.\n\nCHAPTER TWO\n\nWords.\n"
    assert _found(novel) == [(1, "CHAPTER ONE"), (1, "CHAPTER TWO")]
    # O'Neill lists each act's setting under "SCENES" before the play: a contents list, not four more acts.
    settings = "SCENES\n\nACT I\n\nA saloon. New York City.\n\nACT II\n\nThe barge. Ten days later.\n\n"
    acts = f"ACT I\n\nSCENE--A saloon.\n\n{PROSE}\n\nACT II\n\n{PROSE}\n"
    assert _found(f"CHARACTERS\n\n  ANNA\n\n{settings}{acts}") == [(1, "ACT I"), (1, "ACT II")]


def test_a_name_is_a_chapters_title_but_not_a_volumes() -> None:
    text = "Volume I\n\nPreface\n\nWords.\n\nCHAPTER I\n\nIntroduction\n\nWords.\n\nIntroduction\n\nWords.\n"
    assert _found(text) == [(1, "Volume I"), (1, "Preface"), (2, "CHAPTER I. Introduction"), (1, "Introduction")]


def test_a_kind_and_its_ordinal_alone_take_their_title_from_the_line_below() -> None:
    """Wells sets "CHAPTER THE FIRST." over its title ("THE DISCOVERY OF THE FOOD."), Collins "Chapter the
    Thirty-Seventh." over his: "THE" is no title, and the ordinal is the chapter's number, not its title."""
    text = ("BOOK THE FIRST\n\nTHE DAWN OF THE FOOD\n\nCHAPTER THE FIRST.\n\nTHE DISCOVERY OF THE FOOD.\n\nWords.\n\n"
            "Chapter the Thirty-Seventh.\n\nGone to be married?\n\nWords.\n\nChapter the Last\n\nShe left.\n")
    assert _found(text) == [(1, "BOOK THE FIRST. THE DAWN OF THE FOOD"),
                            (2, "CHAPTER THE FIRST. THE DISCOVERY OF THE FOOD."),
                            (2, "Chapter the Thirty-Seventh. Gone to be married?"),
                            (2, "Chapter the Last")]  # a sentence under it is its first, not its title  # fmt: skip


def test_a_title_in_capitals_may_run_long_and_a_contents_entry_with_its_page_is_no_title() -> None:
    """Tono-Bungay's first chapter is titled in 67 capitals; a title in small letters that long reads as a sentence
    (it stays the chapter's first line). A contents list sets its entries' pages beside their titles."""
    text = ("CHAPTER THE FIRST\n\nOF BLADESOVER HOUSE, AND MY MOTHER; AND THE CONSTITUTION OF SOCIETY\n\nWords.\n\n"
            "CHAPTER THE SECOND\n\nOf my launch into the world and the very last I saw of old Bladesover\n\nWords.\n\n"
            "  CHAPTER IV\n\n  THE RIDGES AND THEIR USES                                           54\n\nWords.\n")
    assert _found(text) == [(1, "CHAPTER THE FIRST. OF BLADESOVER HOUSE, AND MY MOTHER; AND THE CONSTITUTION OF "
                                "SOCIETY"), (1, "CHAPTER THE SECOND"), (1, "CHAPTER IV")]  # fmt: skip


def test_a_roman_numeral_with_its_title_on_one_line() -> None:
    text = "Book the First--Recalled to Life\n\nI. The Period\n\nIt was the best of times.\n\nII. The Mail\n\nIt.\n"
    assert _found(text) == [(1, "Book the First--Recalled to Life"), (2, "I. The Period"), (2, "II. The Mail")]
    assert _found("I. HISTORY.\n\nThere is one mind.\n") == [(1, "I. HISTORY.")]  # in capitals, a full stop too


PROSE = "She climbed the stairs of the lighthouse every evening and counted them, as her father had. " * 6


def test_a_contents_list_of_one_heading_a_paragraph_is_no_chapter() -> None:
    """War and Peace's list (a blank line between entries) doubled its 380 headings; Dracula's has its page
    numbers under each; A Tale of Two Cities' parts stand over lists of their chapters."""
    war = ("CONTENTS\n\nBOOK ONE: 1805\n\nCHAPTER I\n\nCHAPTER II\n\nBOOK TWO: 1805\n\nCHAPTER I\n\n"
           f"BOOK ONE: 1805\n\nCHAPTER I\n\n{PROSE}\n\nCHAPTER II\n\n{PROSE}\n\nBOOK TWO: 1805\n\nCHAPTER I\n\n"
           f"{PROSE}\n")
    assert _found(war) == [(1, "BOOK ONE: 1805"), (2, "CHAPTER I"), (2, "CHAPTER II"), (1, "BOOK TWO: 1805"),
                           (2, "CHAPTER I")]  # fmt: skip
    dracula = ("CONTENTS\n\nCHAPTER I\n                    Page\n\nJonathan Harker's Journal      1\n\nCHAPTER II\n\n"
               f"Jonathan Harker's Journal     14\n\nDRACULA\n\nCHAPTER I\n\n{PROSE}\n\nCHAPTER II\n\n{PROSE}\n")
    assert _found(dracula) == [(1, "CHAPTER I"), (1, "CHAPTER II")]
    cities = ("CONTENTS\n\n     Book the First--Recalled to Life\n\n     Chapter I      The Period\n     Chapter II"
              "     The Mail\n\n     Book the Second--the Golden Thread\n\n     Chapter I      Five Years Later\n"
              "     Chapter II     A Sight\n\nBook the First--Recalled to Life\n\nI. The Period\n\n"
              f"{PROSE}\n\nBook the Second--the Golden Thread\n\nI. Five Years Later\n\n{PROSE}\n")
    assert [title for _level, title in _found(cities)] == [
        "Book the First--Recalled to Life", "I. The Period", "Book the Second--the Golden Thread",
        "I. Five Years Later"]  # fmt: skip


def test_a_contents_list_under_a_volume_with_titles_over_lines_is_no_chapter() -> None:
    """Don Quixote's two lists: a volume's line, then each chapter's entry with its title in capitals over two or
    three lines. The volume's section runs to the text's own volume line, so its words are the whole list's:
    an entry is measured to the next heading, and stands over entries."""
    numbers = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII")  # titles of more words than an entry's own
    entries = "".join(f"CHAPTER {n}\nOF WHAT BEFELL DON QUIXOTE WITH CERTAIN GOATHERDS AND\nOTHER MATTERS\n\n"
                      for n in numbers)  # fmt: skip
    chapters_text = "".join(f"CHAPTER {n}.\n\n{PROSE}\n\n" for n in numbers)
    quixote = f"DON QUIXOTE\n\nCONTENTS\n\nVolume I.\n\n{entries}DON QUIXOTE\n\nVOLUME I.\n\n{chapters_text}"
    assert _found(quixote) == [(1, "VOLUME I."), *((2, f"CHAPTER {n}.") for n in numbers)]


def test_a_number_with_a_title_in_capitals_and_a_prefaces_owner() -> None:
    """The Three Musketeers' chapters ("1 THE THREE PRESENTS…", a title over two lines too) under its contents
    list, whose lines are no chapters; Don Quixote's "TRANSLATOR'S PREFACE" is a section as "PREFACE" is."""
    contents = ("CONTENTS\n\n    AUTHOR'S PREFACE\n    1 THE THREE PRESENTS\n    2 THE SHOULDER OF ATHOS, THE\n"
                "    BALDRIC\n")  # fmt: skip
    text = (f"{contents}\nAUTHOR'S PREFACE\n\n{PROSE}\n\n1 THE THREE PRESENTS\n\n{PROSE}\n\n"
            f"2 THE SHOULDER OF ATHOS, THE\nBALDRIC\n\n{PROSE}\n\n3 apples and a pear\n\n{PROSE}\n")  # fmt: skip
    assert [title for _level, title in _found(text)] == [
        "AUTHOR'S PREFACE", "1 THE THREE PRESENTS", "2 THE SHOULDER OF ATHOS, THE"]  # fmt: skip
    assert _found(f"TRANSLATOR'S PREFACE\n\n{PROSE}\n\nThe Author's Preface\n\n{PROSE}\n") == [
        (1, "TRANSLATOR'S PREFACE"), (1, "The Author's Preface")]  # fmt: skip
    # No contents line with its page number, no postscript, no cipher (The Valley of Fear's); under a bare
    # numeral, such a line is its title (Love's Meinie).
    for line in ("7. THE TRANSFORMATION OF SOCIALISM       159", "2 P.S.", "534 C2 13 127 36 31 4 17 21 41 DOUGLAS",
                 "2. OR THE SUBJECTIVE IS TAKEN AS THE FIRST, AND THE PROBLEM THEN IS,"):
        assert _found(f"{PROSE}\n\n{line}\n\n{PROSE}\n") == [], line
    assert _found(f"I.\n\n141. RUTILA FAMILIARIS.    ROBIN REDBREAST.\n\n{PROSE}\n") == [
        (1, "I. 141. RUTILA FAMILIARIS.    ROBIN REDBREAST.")]  # fmt: skip


def test_a_contents_list_starts_under_its_line_and_may_hold_a_line_the_text_has_not() -> None:
    # The Antiquary's list names an "EDITOR'S INTRODUCTION" its text heads otherwise: the list goes on past it.
    antiquary = ("CONTENTS\n\nINTRODUCTION\n\nEDITOR'S INTRODUCTION\n\nCHAPTER FIRST.\n\nCHAPTER SECOND.\n\n"
                 "ILLUSTRATIONS\n\nBookcover\n\nSpines\n\n"
                 f"INTRODUCTION\n\n{PROSE}\n\nCHAPTER FIRST.\n\n{PROSE}\n\nCHAPTER SECOND.\n\n{PROSE}\n")  # fmt: skip
    assert [title for _level, title in _found(antiquary)] == ["INTRODUCTION", "CHAPTER FIRST.", "CHAPTER SECOND."]
    # Lyrical Ballads numbers a poem's stanzas a book's length after its contents line: they are no list.
    stanza = "The valley rings with mirth and joy,\nAmong the hills the Echoes play\n"
    ballads = "CONTENTS\n\nThe Idle Shepherd-Boys\n\n" + f"{PROSE}\n\n" * 8 + "".join(
        f"{n}.\n\n{stanza}\n" for n in ("I", "II", "III")) + f"{PROSE}\n\nII.\n\n{PROSE}\n"  # fmt: skip
    assert [title for _level, title in _found(ballads)] == ["I.", "II.", "III.", "II."]


def test_a_contents_entry_may_carry_its_chapters_synopsis() -> None:
    """The Innocents Abroad's list: each entry a chapter line with a synopsis of more words than an entry's own
    run on under it; the words after that paragraph are the entry's."""
    synopsis = " -- ".join(["The Ancient Baths", "A Distinguished Panorama", "The Last Battle of the Crusades"] * 8)
    entries = "".join(f"CHAPTER {n}.\n{synopsis}\n\n" for n in ("I", "II", "III"))
    text = f"CONTENTS\n\n{entries}" + "".join(f"CHAPTER {n}.\n\n{PROSE}\n\n" for n in ("I", "II", "III"))
    assert [title for _level, title in _found(text)] == ["CHAPTER I.", "CHAPTER II.", "CHAPTER III."]
    assert [chapter.line for chapter in chapters(text.split("\n"))] == [11, 15, 19]


def test_chapters_with_few_words_stay_where_no_contents_list_is() -> None:
    # A writer's outline: its chapters have no words yet, and it has no line "Contents" above them.
    outline = "PART ONE\n\nChapter 1\n\nTo do.\n\nChapter 2\n\nChapter 3\n\nPART TWO\n\nChapter 1\n\n" + PROSE
    assert len(_found(outline)) == 6
    # The Woman in White numbers its chapters again in each epoch, after a contents list: its chapters stay.
    again = f"CONTENTS\n\nTHE FIRST EPOCH\n\nI\n\n{PROSE}\n\nII\n\n{PROSE}\n\nTHE SECOND EPOCH\n\nI\n\n{PROSE}\n"
    assert [title for _level, title in _found(again)] == ["I", "II", "I"]


def test_a_long_title_in_capitals_over_several_lines_is_a_chapters() -> None:
    """The Pickwick Papers set ten of its chapters so; they were taken for prose that starts "CHAPTER"."""
    text = ("CHAPTER VII. HOW MR. WINKLE, INSTEAD OF SHOOTING AT THE PIGEON AND\nKILLING THE CROW, SHOT AT THE CROW "
            "AND WOUNDED THE\nPIGEON; HOW THE DINGLEY DELL CRICKET CLUB PLAYED\nALL-MUSCLETON\n\n"
            f"{PROSE}\n\nAct third was the castle hall, and here Hagar appeared, having come to\nwork her spell and "
            "see the lovers\npart, which she did in a song of great beauty and power.\n")  # fmt: skip
    assert [title[:40] for _level, title in _found(text)] == ["CHAPTER VII. HOW MR. WINKLE, INSTEAD OF "]


def test_a_name_to_what_is_a_section_and_a_verses_source_is_none() -> None:
    text = (f"PREFACE TO THE SECOND EDITION.\n\n{PROSE}\n\nPreface to the 1857 Edition\n\n{PROSE}\n\n"
            f"INTRODUCTION TO IVANHOE.\n\n{PROSE}\n\n"
            # Emerson's epigraph, its verse's source under it; a sentence of one line.
            f"Man is his own star.\n\nEpilogue to Beaumont and Fletcher's Honest Man's Fortune.\n\n{PROSE}\n\n"
            f"Introduction to his mother was all he wanted\n\n{PROSE}\n")  # fmt: skip
    assert _found(text) == [(1, "PREFACE TO THE SECOND EDITION."), (1, "Preface to the 1857 Edition"),
                            (1, "INTRODUCTION TO IVANHOE.")]  # fmt: skip


def test_a_contents_lists_last_part_over_its_numbered_chapters_then_a_preface_is_an_entry() -> None:
    """Little Dorrit's list: each book's line over its chapters numbered "1.  Sun and Shadow", a paragraph, then the
    preface. The second book's entry was taken for the text's first heading, its chapters' titles and the
    preface counted as its words."""
    titles = "".join(f"     {n}.  The Father of the Marshalsea in two or three Relations\n" for n in range(1, 20))
    contents = (f"CONTENTS\n\n     Preface to the 1857 Edition\n\n     BOOK THE FIRST: POVERTY\n{titles}\n"
                f"     BOOK THE SECOND: RICHES\n\n{titles}\n")  # fmt: skip
    text = (f"LITTLE DORRIT\n\n{contents}PREFACE TO THE 1857 EDITION\n\n{PROSE}\n\nBOOK THE FIRST: POVERTY\n\n"
            f"CHAPTER 1. Sun and Shadow\n\n{PROSE}\n\nBOOK THE SECOND: RICHES\n\n"
            f"CHAPTER 1. Fellow Travellers\n\n{PROSE}\n")  # fmt: skip
    assert _found(text) == [(1, "PREFACE TO THE 1857 EDITION"), (1, "BOOK THE FIRST: POVERTY"),
                            (2, "CHAPTER 1. Sun and Shadow"), (1, "BOOK THE SECOND: RICHES"),
                            (2, "CHAPTER 1. Fellow Travellers")]  # fmt: skip


def test_a_list_of_short_titles_after_a_contents_lists_last_entry_is_none_of_its_words() -> None:
    """Les Misérables' list ends with "BOOK NINTH" and its chapters, then a list of illustrations of more words
    than an entry's own: titles without a stop, no prose."""
    chapter_lines = "  CHAPTER I--THE LOWER CHAMBER\n  CHAPTER II--ANOTHER STEP BACKWARDS\n"
    pictures = "".join(f"Frontispiece Volume {n}\nTitlepage Volume {n}\nThe Ship Orion, an Accident\n"
                       for n in ("One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight"))  # fmt: skip
    text = (f"CONTENTS\n\n  BOOK EIGHTH.--FADING AWAY\n{chapter_lines}\n  BOOK NINTH.--SUPREME SHADOW\n"
            f"{chapter_lines}\nList of Illustrations\n\n{pictures}\n"
            f"BOOK EIGHTH.--FADING AWAY\n\nCHAPTER I--THE LOWER CHAMBER\n\n{PROSE}\n\n"
            f"BOOK NINTH.--SUPREME SHADOW\n\nCHAPTER I--THE LOWER CHAMBER\n\n{PROSE}\n")  # fmt: skip
    assert [title for _level, title in _found(text)] == [
        "BOOK EIGHTH.--FADING AWAY", "CHAPTER I--THE LOWER CHAMBER", "BOOK NINTH.--SUPREME SHADOW",
        "CHAPTER I--THE LOWER CHAMBER"]  # fmt: skip


def test_a_contents_lists_last_entry_with_prose_after_the_list_is_none() -> None:
    """Moby-Dick's list ends with "Epilogue", then its etymology's prose: the Outline began with that Epilogue.
    The text's first heading after a list is one of the list's, and stays, though the text numbers again."""
    moby = (f"CONTENTS\n\nCHAPTER 1. Loomings.\n\nCHAPTER 2. The Carpet-Bag.\n\nEpilogue\n\nETYMOLOGY.\n\n{PROSE}\n\n"
            f"CHAPTER 1. Loomings.\n\n{PROSE}\n\nCHAPTER 2. The Carpet-Bag.\n\n{PROSE}\n\nEpilogue\n\n{PROSE}\n")
    assert [(chapter.line, chapter.title) for chapter in chapters(moby.split("\n"))] == [
        (12, "CHAPTER 1. Loomings."), (16, "CHAPTER 2. The Carpet-Bag."), (20, "Epilogue")]  # fmt: skip
    again = (f"CONTENTS\n\nCHAPTER I\n\nCHAPTER II\n\nCHAPTER I\n\n{PROSE}\n\nCHAPTER II\n\n{PROSE}\n\n"
             f"CHAPTER I\n\n{PROSE}\n")  # a second volume's chapters, numbered again
    assert [chapter.line for chapter in chapters(again.split("\n"))] == [6, 10, 14]


def test_a_contents_list_numbering_otherwise_with_synopses_over_lines_is_none() -> None:
    """Life on the Mississippi's list: "CHAPTER XXV." with its synopsis's topics over four lines, the text's
    "CHAPTER 25"; its list's entries led the Outline, the text's chapters behind them."""
    synopsis = ("The Devil's Oven and Table.--A Bombshell falls.--No\nWhitewash.--Thirty Years on the River."
                "--Mississippi Uniforms.--Accidents\nand Casualties.--Two hundred Wrecks.--A Loss to Literature."
                "--Sunday-\nSchools and Brick Masons.\n")  # fmt: skip
    short = "Pilots and Captains.--High-priced Pilots.\n"
    numerals = ("XXIV", "XXV", "XXVI", "XXVII", "XXVIII", "XXIX", "XXX")
    contents = "".join(f"CHAPTER {n}. {short if n in ('XXIV', 'XXX') else synopsis}\n" for n in numerals)
    text = f"TABLE OF CONTENTS\n\n{contents}" + "".join(
        f"CHAPTER {n}\n\nThe River and Its History\n\n{PROSE}\n\n" for n in range(24, 31))  # fmt: skip
    assert [title for _level, title in _found(text)] == [f"CHAPTER {n}. The River and Its History"
                                                        for n in range(24, 31)]  # fmt: skip
    # A sentence that starts with a kind and its number is still no heading, though a paragraph's long.
    letter = ("Letter I.  From this Letter all the faults and excellencies of Junius may be\nlearned, the one as "
              "surely as the other, and both from the same\nsentence set down here at some length, which a reader\n"
              "who has the patience for it will find worth the\nwhole of the time it takes.\n")  # fmt: skip
    assert _found(f"{PROSE}\n\n{letter}\n{PROSE}\n") == []


def test_a_contents_lists_parts_over_their_chapters_titles_are_none_though_the_text_has_no_parts() -> None:
    """Little Women's list sets "PART 1" and "PART 2" over its chapters' titles; the text has no part lines, only
    "CHAPTER ONE" and on, which are then its top level."""
    titles = ["ONE  PLAYING PILGRIMS", "TWO  A MERRY CHRISTMAS", "THREE  THE LAURENCE BOY", "FOUR  BURDENS",
              "FIVE  BEING NEIGHBORLY", "SIX  A TELEGRAM, AND JO MAKES PEACE AT LAST IN THE END"]  # fmt: skip
    listed = "\n".join(f"        {title}" for title in titles)
    text = (f"LITTLE WOMEN\n\nCONTENTS\n\nPART 1\n\n{listed}\n\nPART 2\n\n{listed}\n\n"
            + "".join(f"CHAPTER {n}\n\nA TITLE\n\n{PROSE}\n\n" for n in ("ONE", "TWO", "THREE")))  # fmt: skip
    assert _found(text) == [(1, "CHAPTER ONE. A TITLE"), (1, "CHAPTER TWO. A TITLE"), (1, "CHAPTER THREE. A TITLE")]
    # A part over its chapters in the text stays, with its first chapter's "I" right under it (The Song of the
    # Lark: the list's last title, then the text's first part and chapter).
    lark = ("CONTENTS:\n\n    PART I.  FRIENDS OF CHILDHOOD\n        II.  THE SONG OF THE LARK\n"
            "       III.  STUPID FACES\n        IV.  THE ANCIENT PEOPLE\n         V.  DOCTOR ARCHIE'S VENTURE\n"
            "        VI.  KRONBORG\n             EPILOGUE\n\n"
            f"PART I. FRIENDS OF CHILDHOOD\n\nI\n\n{PROSE}\n\nII\n\n{PROSE}\n\nPART II. THE SONG OF THE LARK\n\n"
            f"I\n\n{PROSE}\n")  # fmt: skip
    assert _found(lark) == [(1, "PART I. FRIENDS OF CHILDHOOD"), (2, "I"), (2, "II"),
                            (1, "PART II. THE SONG OF THE LARK"), (2, "I")]  # fmt: skip


def test_a_name_set_among_a_contents_lists_titles_is_an_entry() -> None:
    """Walden's list is of bare titles, "Economy" to "Conclusion"; only the name is a heading, and only the text's
    own "Conclusion" is kept, not the list's last title."""
    titles = ["Economy", "Where I Lived, and What I Lived For", "Reading", "Sounds", "Solitude", "Spring"]
    text = ("WALDEN\n\nContents\n\n" + "\n\n".join(titles) + "\n\nConclusion\n\n=ON THE DUTY=\n\nWALDEN\n\n"
            f"Economy\n\n{PROSE}\n\n{PROSE}\n\nConclusion\n\n{PROSE}\n")  # fmt: skip
    found = chapters(text.split("\n"))
    assert [(chapter.title, chapter.line) for chapter in found] == [("Conclusion", text.split("\n").index(
        "Conclusion", 20))]  # fmt: skip
    # A name right above the text's prose after the list is the text's own: kept.
    preface = "CONTENTS\n\n" + "\n\n".join(titles) + f"\n\nPREFACE\n\n{PROSE}\n\nPREFACE\n\n{PROSE}\n"
    assert [title for _level, title in _found(preface)] == ["PREFACE", "PREFACE"]


def test_which_epilogue_and_its_years_are_a_names_heading() -> None:
    """War and Peace ends with a "FIRST EPILOGUE: 1813 - 20" and a "SECOND EPILOGUE", each with its chapters;
    they had been read as part of Book Fifteen. A sentence after the colon is no heading."""
    text = (f"BOOK FIFTEEN: 1812 - 13\n\nCHAPTER I\n\n{PROSE}\n\nFIRST EPILOGUE: 1813 - 20\n\nCHAPTER I\n\n{PROSE}\n\n"
            f"SECOND EPILOGUE\n\nCHAPTER I\n\n{PROSE}\n\nEpilogue: and then they all went home\n\n{PROSE}\n")
    assert _found(text) == [(1, "BOOK FIFTEEN: 1812 - 13"), (2, "CHAPTER I"), (1, "FIRST EPILOGUE: 1813 - 20"),
                            (2, "CHAPTER I"), (1, "SECOND EPILOGUE"), (2, "CHAPTER I")]  # fmt: skip


def test_a_contents_entrys_synopsis_in_a_paragraph_of_its_own_is_none_of_its_words() -> None:
    """The Origin of Species' list: each entry's number, its title, then its topics run together with dashes over
    ten lines in a paragraph of their own, then its pages. The synopsis had counted as the entry's words, so the
    list ended at Chapter IV and Chapters V on stood in the Outline twice."""
    topics = ("Natural Selection--its power compared with man's selection--its power on\ncharacters of trifling "
              "importance--its power at all ages and on both\nsexes--Sexual Selection--On the generality of "
              "intercrosses between\nindividuals of the same species--Circumstances favourable and unfavourable\n"
              "to Natural Selection, namely, intercrossing, isolation, number of\nindividuals--Slow action--"
              "Extinction caused by Natural\nSelection--Divergence of Character, related to the diversity of "
              "inhabitants\nof any small area, and to naturalisation--Action of Natural Selection,\nthrough "
              "Divergence of Character and Extinction, on the descendants from a\ncommon parent--Explains the "
              "Grouping of all organic beings")  # fmt: skip
    numbers = ("I", "II", "III", "IV", "V")
    entries = "".join(f"CHAPTER {n}.\n\nA TITLE.\n\n{topics}\n\n7-43\n\n" for n in numbers)
    text = f"CONTENTS.\n\nINTRODUCTION\n\nPage 1\n\n{entries}" + "".join(
        f"CHAPTER {n}.\n\nA TITLE.\n\n{PROSE}\n\n" for n in numbers)  # fmt: skip
    assert [title for _level, title in _found(text)] == [f"CHAPTER {n}. A TITLE." for n in numbers]
    # Insectivorous Plants' titles are too long to be an entry's own title line; the synopsis follows them.
    title = "AGGREGATION OF THE PROTOPLASM WITHIN THE CELLS OF THE TENTACLES."
    long_titled = text.replace("A TITLE.\n\nNatural", f"{title}\n\nNatural")
    assert [title for _level, title in _found(long_titled)] == [f"CHAPTER {n}. A TITLE." for n in numbers]
    # The Descent of Man's titles, as long, in words and over two lines, with a stop.
    descent = "Comparison of the Mental Powers of Man and the Lower Animals in\nCivilised and Barbarous Times."
    assert [title for _level, title in _found(text.replace("A TITLE.\n\nNatural", f"{descent}\n\nNatural"))] == [
        f"CHAPTER {n}. A TITLE." for n in numbers]  # fmt: skip
    # Coral Reefs' entries hold a synopsis a section, paragraph after paragraph.
    sectioned = text.replace(f"{topics}\n\n7-43", f"{topics}\n\n{topics}\n\n{topics}\n\n7-43")
    assert [title for _level, title in _found(sectioned)] == [f"CHAPTER {n}. A TITLE." for n in numbers]
    # A paragraph of prose under a chapter's title is its own, dashes or not: the chapter stays.
    prose = "It rained--as it will--all night. The keeper climbed the stairs--slowly--and slept."
    assert _found(f"CHAPTER I.\n\nA TITLE.\n\n{prose}\n\nCHAPTER II.\n\nA TITLE.\n\n{PROSE}\n") == [
        (1, "CHAPTER I. A TITLE."), (1, "CHAPTER II. A TITLE.")]  # fmt: skip


def test_a_contents_list_of_numerals_with_titles_against_bare_numerals_in_the_text_is_none() -> None:
    """The Captain of the Gray-Horse Troop lists "I. A CAMP IN THE SNOW"; its text sets "I" over the title. Both
    are Chapter 1: the list's 37 entries had stood in the Outline beside the chapters."""
    titles = ["A CAMP IN THE SNOW", "THE STREETER GUN-RACK", "CURTIS ASSUMES CHARGE", "THE BEAUTIFUL TRIBE"]
    numerals = ["I", "II", "III", "IV"]
    listed = "\n\n".join(f"{n}. {title}" for n, title in zip(numerals, titles, strict=True))
    text = f"CONTENTS\n\n{listed}\n\n" + "".join(
        f"{n}\n\n{title}\n\n{PROSE}\n\n" for n, title in zip(numerals, titles, strict=True))  # fmt: skip
    assert [title for _level, title in _found(text)] == [f"{n}. {title}" for n, title in zip(numerals, titles,
                                                                                            strict=True)]  # fmt: skip
    assert [chapter.line for chapter in chapters(text.split("\n"))][0] > 8  # the text's, not the list's


def test_a_volumes_contents_line_starts_a_list_too() -> None:
    """Trollope's North America heads its list "CONTENTS OF VOL. I."; a second volume's may stand mid-book (Stowe's
    Sunny Memories: "CONTENTS OF THE SECOND VOLUME."), and Sir Nigel's is misprinted "CONTENT"."""
    entries = "".join(f"CHAPTER {n}.\n\nA Place\n\n" for n in ("I", "II", "III"))
    chapters_text = "".join(f"CHAPTER {n}.\n\nA Place\n\n{PROSE}\n\n" for n in ("I", "II", "III"))
    for line in ("CONTENTS OF VOL. I.", "Contents of Volume II", "CONTENTS OF PART II",
                 "CONTENTS OF THE SECOND VOLUME.", "CONTENTS OF THE FIRST VOLUME", "CONTENT"):  # fmt: skip
        found = _found(f"VOLUME I.\n\n{line}\n\n{entries}{chapters_text}")
        assert [title for _level, title in found] == ["VOLUME I.", "CHAPTER I. A Place", "CHAPTER II. A Place",
                                                      "CHAPTER III. A Place"]  # fmt: skip
    assert _found(f"Contents of the pockets\n\n{entries}{chapters_text}")[0] == (1, "CHAPTER I. A Place")


def test_a_contents_line_ending_in_a_page_number_is_an_entry_and_the_heading_after_the_list_is_the_texts() -> None:
    """A Maker of History lists Book I's chapters I-XVIII with their pages, and its text numbers Book II's from I
    again: the list's XVI to XVIII, found nowhere later, stood in the Outline. The Passionate Friends' list ends,
    then its text's "CHAPTER THE FIRST", which the text has once: it stays (it was taken for the list's last)."""
    names = ["I", "II", "III", "XVI", "XVII", "XVIII"]
    listed = "\n\n".join(f"     {n}. A TITLE OF A CHAPTER {' ' * (8 - len(n))}      {3 * page + 1}"
                         for page, n in enumerate(names))  # fmt: skip
    text = (f"CONTENTS\n\n          BOOK I\n\n{listed}\n\nBOOK I\n\n"
            + "".join(f"CHAPTER {n}\n\n{PROSE}\n\n" for n in names)
            + "BOOK II\n\n" + "".join(f"CHAPTER {n}\n\n{PROSE}\n\n" for n in ("I", "II")))  # fmt: skip
    assert [title for _level, title in _found(text)] == [
        "BOOK I", *(f"CHAPTER {n}" for n in names), "BOOK II", "CHAPTER I", "CHAPTER II"]  # fmt: skip
    ordinals = ["FIRST", "SECOND", "THIRD"]
    friends = (f"CONTENTS\n\n{listed}\n\nTHE PASSIONATE FRIENDS\n\n"
               + "".join(f"CHAPTER THE {n}\n\n{PROSE}\n\n" for n in ordinals))  # fmt: skip
    assert [title for _level, title in _found(friends)] == [f"CHAPTER THE {n}" for n in ordinals]


def test_an_indexs_letters_are_no_chapters_though_they_read_as_roman_numerals() -> None:
    """The Origin of Species ends with an index under "C.", "D.", "I.", "L.", "M.", "V.": read as numerals, they
    stood under Chapter XIV. A book's own I, V and X come with II, III… between them."""
    entries = "Abyssinia, 12.\nAcclimatisation, 139."
    index = "".join(f"{letter}.\n\n{entries}\n\n" for letter in ("C", "D", "I", "L", "M", "V"))
    text = f"CHAPTER XIV.\n\n{PROSE}\n\nINDEX.\n\n{index}"
    assert [title for _level, title in _found(text)] == ["CHAPTER XIV."]
    numerals = "".join(f"{n}\n\n{PROSE}\n\n" for n in ("I", "II", "III", "IV", "V", "VI"))
    assert [title for _level, title in _found(numerals)] == ["I", "II", "III", "IV", "V", "VI"]
