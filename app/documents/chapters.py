"""A plain text's chapter lines, as novels and Project Gutenberg set them: "CHAPTER III. A Caucus-Race", "Part Two",
"BOOK THE FIRST", "Stave One", "Letter 4", a Roman or Arabic numeral on a line of its own ("XIV"), a Roman one with
its title ("I. The Period"), a number with its title in capitals ("1 THE THREE PRESENTS OF…"), and "Prologue",
"Epilogue" or "Preface" alone, whose it is ("TRANSLATOR'S PREFACE"), to what ("PREFACE TO THE SECOND EDITION") or
which and when ("FIRST EPILOGUE: 1813 - 20"). A chapter line follows a blank line (or opens the text, or stands
right under its part's line): a line of prose that happens to start "Part of the crowd…" or "Book.  I asked…" is
none, and so is a contents list's line, one of its kind right under it ("CHAPTER I. Loomings", "CHAPTER II. The
Carpet-Bag"), or an entry of a list under a line "Contents" that sets one a paragraph (``_without_contents``), a
part's line over its chapters' titles there (Little Women's "PART 1", which its text never sets again), or a name
among a list of bare titles (Walden's "Conclusion"). A bare number or name also stands before a blank line, so that
a line holding only "I" inside a paragraph is no chapter either, nor is a sentence of its own that opens with a
name's initial ("M. Madeleine arrived.").

A line that is only a chapter's number ("CHAPTER II", "II") takes its title from the short line right after it,
where there is one ("CHAPTER 1" then "The River and Its History": "CHAPTER 1. The River and Its History").

Levels follow the kinds a text uses: parts above books above chapters, a volume above all, so "PART TWO" holds its
"Chapter 1"s; a text that numbers only its chapters has them all at the top, and a Prologue or an Epilogue stands
at the top too. A play's acts hold its scenes; a novel's acts (a play its characters put on) are left out. Nothing
here needs Qt.
"""

from __future__ import annotations

import re
from typing import NamedTuple

# Outermost first; a scene sits in an act, a bare numeral inside whatever chapters a text also has.
RANKS = {"volume": 0, "part": 1, "book": 2, "act": 3, "chapter": 4, "stave": 4, "letter": 4, "scene": 5}
NUMERAL_RANK = 6
ROMAN = r"(?=[MDCLXVI])M{0,3}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})"
NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen"
    "|eighteen|nineteen|twenty|first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    "|last|the"
)
# "the" with its ordinal is one number ("CHAPTER THE FIRST.", "Chapter the Thirty-Seventh"), its title on a line of
# its own below as under "CHAPTER I"; "the" alone too, before an ordinal it does not know.
NUMBER = rf"(?:{ROMAN}|[ivxlcdm]+|\d{{1,3}}|(?i:the[ \t]+[a-z]+(?:-[a-z]+)?(?:st|nd|rd|th)\b|{NUMBER_WORDS}))"
# A heading's number, compared as its value whichever way it is written (``_written``).
ROMAN_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}
# one…twenty, then first…twelfth ("last" and "the" are no number's)
NUMBER_VALUES = {word: index % 20 + 1 for index, word in enumerate(NUMBER_WORDS.split("|")[:32])}
FIGURE = re.compile(rf"{ROMAN}|\d{{1,3}}")  # a numeral that is a heading's first word
WRITTEN_NUMBER = re.compile(rf"(?:{ROMAN}|\d{{1,3}}|{'|'.join(NUMBER_VALUES).upper()})(?![A-Z])")
KEYWORDS = "|".join(f"{word.upper()}|{word.title()}" for word in RANKS)
# A kind and its number, then a title on the same line or nothing.
KEYWORD_LINE = re.compile(rf"^[ \t\f]*(?P<kind>{KEYWORDS})[ \t]+{NUMBER}\b(?P<rest>[^\n]{{0,100}})$")
NUMERAL_LINE = re.compile(rf"^[ \t\f]*(?:{ROMAN}|\d{{1,3}})\.?[ \t]*$")
# A kind and its number with a stop after it, then a synopsis's topics set off by dashes: a heading whose synopsis
# runs on over lines (Life on the Mississippi's "CHAPTER XXV. The Devil's Oven and Table.--A Bombshell falls.--No",
# four lines), no sentence that starts with the kind ("Letter I.  From this Letter all the faults…").
SYNOPSIS_LINE = re.compile(rf"^[ \t\f]*(?:{KEYWORDS})[ \t]+{NUMBER}[.:][ \t]+[A-Z][^\n]*[.!?](?:--|—)")
# A Roman numeral, a full stop and a short title, a paragraph of its own: A Tale of Two Cities' "I. The Period".
NUMBERED_TITLE_LINE = re.compile(rf"^[ \t\f]*(?![MDCL]\.){ROMAN}\.[ \t]+(?P<title>[A-Z][^\n]{{0,60}})$")
# A number and a title in capitals, a paragraph of its own: The Three Musketeers' "1 THE THREE PRESENTS OF…".
NUMBERED_CAPITALS_LINE = re.compile(r"^[ \t\f]*\d{1,3}\.?[ \t]+(?P<title>[A-Z][^a-z\n]{2,80})$")
PAGE_NUMBER = re.compile(r"\s{2,}\d+\s*$")  # set off by spaces, as a contents list sets a page number
NAMES = ("prologue", "epilogue", "preface", "introduction", "interlude", "afterword", "conclusion")
# Alone, whose it is ("TRANSLATOR'S PREFACE", "The Author's Preface") or to what ("PREFACE TO THE SECOND EDITION",
# "Preface to the 1857 Edition": ``_named``).
# Which of several it is, too ("FIRST EPILOGUE"), and when it is set, after a colon ("FIRST EPILOGUE: 1813 - 20").
ORDINALS = "|".join(f"{word.upper()}|{word.title()}" for word in ("first", "second", "third", "fourth", "last"))
NAMED_LINE = re.compile(rf"^[ \t\f]*(?:(?:THE |The )?[A-Z][A-Za-z]*['’][Ss] |(?:{ORDINALS})[ \t]+)?(?:"
                        + "|".join(f"{n.upper()}|{n.title()}" for n in NAMES)
                        + r")(?:[ \t]+(?:TO|to)[ \t]+(?P<what>[^\n]{1,50}?)|:[ \t]*(?P<when>\d[\d \t–—-]{0,20}))?"
                        + r"\.?[ \t]*$")  # fmt: skip
# A line of a list, not prose, where it is counted whether a contents list's entry has words of its own: a number,
# a full stop and a title (Little Dorrit's "1.  Fellow Travellers" under its "BOOK THE SECOND: RICHES"), or a short
# line that ends without a stop, as a title does (Les Misérables' list of illustrations after its "BOOK NINTH").
LIST_LINE = re.compile(rf"^[ \t\f]*(?:(?:\d{{1,3}}|{ROMAN})\.[ \t]+\S|[^\n]{{1,45}}(?<![.,;:!?'\"’”)\]])$)")
TITLE_CHARS = 60
CAPITALS_TITLE_CHARS = 80  # a title set in capitals, alone on its line, may run longer (Tono-Bungay's first)
CAPITALS_LINES = 6  # a title in capitals runs over this many lines at most
SHORT_LINE = 40
# The line a contents list stands under, and the most words an entry of it has (its title may run over lines).
# "CONTENTS OF VOL. I.", "CONTENTS OF THE SECOND VOLUME", Sir Nigel's misprinted "CONTENT", and the "SCENES" a play
# lists its acts' settings under (O'Neill's Anna Christie).
CONTENTS_LINE = re.compile(r"^[ \t]*(?:table of )?(?:contents?|scenes)(?:[ \t]+of[ \t]+(?:the[ \t]+)?"
                           r"(?:(?:vol(?:ume)?\.?|part|book)[ \t]+\w+|\w+[ \t]+(?:volume|part|book)))?"
                           r"[ \t]*[.:]?[ \t]*$", re.IGNORECASE)  # fmt: skip
CONTENTS_WORDS = 80
# A list's first heading stands within about a page of its "Contents" line (entries before it may be prose-like
# paragraphs, Notre-Dame de Paris' "BOOK SEVENTH. I. The Danger of Confiding…").
CONTENTS_GAP_WORDS = 300
# A list of titles (a contents list's, or a part's chapters in it): this many lines at least, and fewer words than
# this in lines that are not a list's; a heading among such a list stands this many lines under "Contents" at most.
TITLES_LISTED = 5
TITLE_LIST_WORDS = 20
CONTENTS_LINES = 400
INDEX_LETTERS = 3  # an index's letters in a row, at least, that read as Roman numerals ("C.", "D.", "I.")
# A synopsis under a contents entry runs over this many lines at most, and has no sentence ending inside it.
SYNOPSIS_LINES = 16
SENTENCE_INSIDE = re.compile(r"[a-z][.!?]\s+[A-Z]")
# A title ends in a word, a question or a cry; a line ending in a full stop or comma is a sentence, unless it is
# set in capitals ("LIMMERIDGE HOUSE.").
SENTENCE_END = re.compile(r"[.,;:]\s*$")


class Chapter(NamedTuple):
    line: int  # the index of its line
    level: int  # 1 for the outermost kind the text uses
    title: str
    title_line: int = -1  # the index of the line its title came from, where that is a line of its own


def _blank(lines: list[str], index: int) -> bool:
    """Whether line ``index`` is blank, or past either end of the text."""
    return not 0 <= index < len(lines) or not lines[index].strip()


def _keyword_rank(line: str) -> int | None:
    """The rank of the kind ``line`` starts with ("PART", "Chapter"…), None where it is no such line."""
    found = KEYWORD_LINE.match(line)
    return RANKS[found.group("kind").lower()] if found else None


def _kind_of(lines: list[str], keyword: list[int | None], index: int) -> int | None:
    """The rank of line ``index`` as a chapter line, None where it is no chapter line (-1: a name, Prologue…);
    ``keyword``: each line's ``_keyword_rank``, matched once for the text."""
    line = lines[index]
    rank = keyword[index]
    above = keyword[index - 1] if index > 0 else None
    # After a blank line; a chapter right under its part's line ("PART ONE", then "Chapter 1") too.
    if not line.strip() or not (_blank(lines, index - 1) or (rank is not None and above is not None and above < rank)):
        return None
    if rank is not None:
        # A long line opening a long paragraph is prose that starts with the word ("Act third was the castle
        # hall, and…") or a contents list's first entry; a heading's title may run on over a line or two. A line
        # with another of its kind right under it is a contents list's too.
        prose = (len(line.strip()) > SHORT_LINE and not any(_blank(lines, index + n) for n in range(1, 4))
                 and not _in_capitals(lines, index) and not SYNOPSIS_LINE.match(line))  # fmt: skip
        below = keyword[index + 1] if index + 1 < len(lines) else None
        return None if prose or below == rank else rank
    roman_titled = NUMBERED_TITLE_LINE.match(line)
    in_capitals = _numbered_in_capitals(line)
    numbered = (roman_titled is not None and _reads_as_title(roman_titled.group("title"))) or in_capitals
    if (_blank(lines, index + 1) or (in_capitals and _runs_on_in_capitals(lines, index))) and (
            NUMERAL_LINE.match(line) or numbered):  # fmt: skip
        return NUMERAL_RANK
    if _blank(lines, index + 1) and _named(line):
        return -1
    return None


def _named(line: str) -> bool:
    """Whether ``line`` is a name's heading (``NAMED_LINE``): to what, it is set as a title, in capitals or each
    word capitalised but the small ones and with no full stop ("Preface to the 1857 Edition"), not a sentence
    ("Introduction to his mother was…") or a verse's source under it ("Epilogue to Beaumont and Fletcher's Honest
    Man's Fortune.")."""
    found = NAMED_LINE.match(line)
    if not found or found.group("what") is None:
        return found is not None
    what = found.group("what")
    titled = all(not word[:1].islower() for word in what.split() if len(word) > 3) and not line.rstrip().endswith(".")
    return what.upper() == what or titled


def _in_capitals(lines: list[str], index: int) -> bool:
    """Whether the paragraph from line ``index`` is set in capitals, as a long title over several lines is
    (The Pickwick Papers' "CHAPTER VII. HOW MR. WINKLE, INSTEAD OF SHOOTING AT THE PIGEON AND…"); prose is not."""
    paragraph = []
    for text in lines[index : index + CAPITALS_LINES]:
        if not text.strip():
            break
        paragraph.append(text)
    words = " ".join(paragraph)
    return words.upper() == words and any(letter.isalpha() for letter in words)


def _numbered_in_capitals(line: str) -> bool:
    """Whether ``line`` is a number and a title in capitals: words, not a contents line's page number at its end
    ("7. THE TRANSFORMATION OF SOCIALISM      159"), a postscript's "2 P.S.", a cipher ("534 C2 13 127 36…") or
    a sentence that runs on ("2. OR THE SUBJECTIVE IS TAKEN AS THE FIRST, AND THE PROBLEM THEN IS,")."""
    found = NUMBERED_CAPITALS_LINE.match(line)
    if not found:
        return False
    title = found.group("title")
    letters, digits = sum(char.isalpha() for char in title), sum(char.isdigit() for char in title)
    runs_on = title.rstrip().endswith((",", ";", "-"))  # a sentence in capitals, not a title
    return letters >= 3 and digits * 4 <= letters and not PAGE_NUMBER.search(title) and not runs_on


def _runs_on_in_capitals(lines: list[str], index: int) -> bool:
    """Whether numbered line ``index``'s title in capitals runs on over a line or two ("4 THE SHOULDER OF ATHOS,
    … AND THE HANDKERCHIEF", "OF ARAMIS"), no line of them numbered: that is a list (a contents list's)."""
    more = 0
    while not _blank(lines, index + more + 1):
        more += 1
        if more > 2 or lines[index + more].strip()[:1].isdigit():
            return False
    return _in_capitals(lines, index)


def _reads_as_title(words: str) -> bool:
    """A title, not a sentence: it starts with a letter or digit and ends without a full stop or comma, unless it is
    set in capitals ("LIMMERIDGE HOUSE.")."""
    return words[0].isalnum() and (not SENTENCE_END.search(words) or words.upper() == words)


def _title_after(lines: list[str], keyword: list[int | None], index: int, rank: int) -> int | None:
    """The line after chapter line ``index`` (directly, or past one blank line) that is its title, if one is: a
    paragraph of one short line that starts with a letter or digit and reads as a title, not a sentence, and is
    no chapter line itself; a name may be a chapter's title ("I", then "Introduction"), not a part's or a volume's
    ("Volume I", then its "Preface")."""
    for candidate in (index + 1, index + 2):
        if candidate == index + 2 and not _blank(lines, index + 1):
            break
        if _blank(lines, candidate):
            continue
        words = lines[candidate].strip()
        # Not a volume's "CONTENTS OF VOL. I.", nor a contents entry's title with its page ("THE RIDGES    54").
        title_like = _reads_as_title(words) and not CONTENTS_LINE.match(words) and not PAGE_NUMBER.search(words)
        alone = _blank(lines, candidate + 1) and (candidate == index + 1 or _blank(lines, candidate - 1))
        kind = _kind_of(lines, keyword, candidate)
        # A number and a title in capitals under a bare numeral is its title (Love's Meinie: "I.", then
        # "141. RUTILA FAMILIARIS.    ROBIN REDBREAST.").
        other = (kind is not None and not (kind == -1 and rank >= RANKS["chapter"])
                 and not (rank == NUMERAL_RANK and _numbered_in_capitals(lines[candidate])))  # fmt: skip
        longest = CAPITALS_TITLE_CHARS if words.upper() == words else TITLE_CHARS
        if len(words) <= longest and title_like and alone and not other:
            return candidate
        break
    return None


def _without_contents(lines: list[str], keyword: list[int | None], found: list[tuple[int, int, str, int]]
                      ) -> list[tuple[int, int, str, int]]:  # fmt: skip
    """``found`` without a contents list's entries, set a paragraph each as War and Peace's ("CHAPTER I", blank,
    "CHAPTER II"…), Dracula's (with their page numbers) and Don Quixote's (a title in capitals over two or three
    lines) are, or under a part as A Tale of Two Cities' "Book the …": after a line "Contents", the run of
    entries. An entry is a heading with next to no words of its own (fewer than CONTENTS_WORDS up to the next
    heading; a list's lines not counted) whose kind and number the text has again later, and after it a heading of
    its kind or an outer one, a name, or an entry: a part's line in a contents list stands over its chapters'
    entries, a part's in the text over its first chapter, which has words. A heading the text has only there (The
    Antiquary's "EDITOR'S INTRODUCTION") is an entry too where an entry follows it. A writer's outline of chapters
    with no words yet stays: it has no such line, nor its headings twice."""
    count = len(found)
    names = [_written(lines[entry[0]]) for entry in found]
    last: dict[str, int] = {}  # a heading's kind and number -> the index of its last entry
    for index, name in enumerate(names):
        last[name] = index
    entry = [False] * count
    paged = [_paged(lines, heading[0]) for heading in found]  # read once, for both passes below
    for index in reversed(range(count)):
        line, rank, _title, title_line = found[index]
        ends = found[index + 1][0] if index + 1 < count else len(lines)
        before_entry = index + 1 < count and entry[index + 1]
        # Its own words are those after its paragraph: a list's entry may carry its chapter's synopsis under it
        # (The Innocents Abroad's "CHAPTER LIII.", then eight lines of "The Joy of the Whole Earth--…").
        own = max(line, title_line) + 1
        while own < ends and not _blank(lines, own):
            own += 1
        # A part over a list of its chapters' titles is an entry whatever comes after it: Little Women's "PART 1"
        # and "PART 2", which its text never sets again; so is a heading set among a list's titles (Walden's
        # "Conclusion", the last of its titles, which the text has again).
        over_titles = _titles(lines, keyword, own, ends)
        while (past := _past_synopsis(lines, own, ends)) > own:  # a synopsis a section (Coral Reefs' chapters)
            own = past
        among_titles = rank == -1 and last[names[index]] > index and _among_titles(lines, keyword, line, own)
        # A page number set off at its end is a contents line's whether or not the text numbers its chapters the
        # same way (A Maker of History's "XVI. MISS FIELDING ASKS A QUESTION        115": its Book II starts at I).
        if not (last[names[index]] > index or before_entry or over_titles or paged[index]):
            continue
        if not (index + 1 == count or before_entry or over_titles or among_titles or paged[index]
                or _ends_section(rank, found[index + 1][1])):  # fmt: skip
            continue
        entry[index] = among_titles or _fewer_words(lines, keyword, own, ends, skip=LIST_LINE)
    kept, listing, previous = [], False, 0
    listed: set[str] = set()  # the kinds and numbers of the list's entries so far
    for index, (line, *_rest) in enumerate(found):
        was_listing, listing = listing, entry[index] and (listing or _starts_list(lines, keyword, previous, line))
        # A list's last entry has the prose after the list as its words (Moby-Dick's "Epilogue", then its
        # etymology): right after the list, one the text has again later and the list has not. The text's first
        # heading after a list is one of the list's (its "CHAPTER 1", again), or the text has it only once.
        last_entry = was_listing and not listing and last[names[index]] > index and names[index] not in listed
        # A list whose entries end in page numbers ends with one too: the heading after it is the text's.
        last_entry = last_entry and (paged[index] or not paged[index - 1])
        listed = ((listed if was_listing else set()) | {names[index]}) if listing else set()
        if not (listing or last_entry):
            kept.append(found[index])
        previous = line + 1
    return kept


def _without_index_letters(found: list[tuple[int, int, str, int]]) -> list[tuple[int, int, str, int]]:
    """``found`` without an index's letters, which read as Roman numerals: a run of INDEX_LETTERS or more headings
    of one letter each in the alphabet's order (The Origin of Species' index: "C.", "D.", "I.", "L.", "M.",
    "V."), where chapters would count I, II, III."""
    letters = [letter if (letter := title.strip().rstrip(".")) in ROMAN_VALUES else "" for _line, _rank, title, _at
               in found]  # fmt: skip
    dropped: set[int] = set()
    start = 0
    while start < len(found):
        end = start
        while end < len(found) and letters[end] and (end == start or letters[end] > letters[end - 1]):
            end += 1
        if end - start >= INDEX_LETTERS:
            dropped.update(range(start, end))
        start = max(end, start + 1)
    return [entry for index, entry in enumerate(found) if index not in dropped]


def _paged(lines: list[str], line: int) -> bool:
    """Whether heading ``line``'s paragraph ends in a page number set off by spaces, as a contents line does (on
    its last line where its title runs over two: "PART IX. FULL VINDICATION OF FYZOOLA KHÂN BY", then "MAJOR
    PALMER AND MR. HASTINGS      313")."""
    end = _paragraph_end(lines, line, min(len(lines), line + 3))
    return PAGE_NUMBER.search(lines[end - 1]) is not None


def _past_synopsis(lines: list[str], start: int, end: int) -> int:
    """Past the paragraph after line ``start``'s blank lines where it is a chapter's synopsis, as a contents list
    sets one under an entry's title (The Origin of Species: "Causes of Variability--Effects of Habit--…" over
    five to ten lines): topics run together with dashes, no sentence ending inside it; with the entry's title
    of a line or two before it where that was too long to be taken as its title (Insectivorous Plants'
    "AGGREGATION OF THE PROTOPLASM WITHIN THE CELLS OF THE TENTACLES.", The Descent of Man's "Comparison of the
    Mental Powers of Man and the Lower Animals."). ``start`` otherwise."""
    first = _next_text(lines, start, end)
    after = _paragraph_end(lines, first, end)
    if after - first <= 2 and not _topics(lines, first, after):  # a title of a line or two: a synopsis may follow
        first = _next_text(lines, after, end)
        after = _paragraph_end(lines, first, end)
    return after if _topics(lines, first, after) and (after == end or _blank(lines, after)) else start


def _topics(lines: list[str], first: int, after: int) -> bool:
    """Whether lines ``first:after`` are a synopsis: topics run together with dashes, no sentence ending inside,
    not a list of titles."""
    words = " ".join(line.strip() for line in lines[first:after])
    dashes = words.count("--") + words.count("—")
    listed = sum(1 for line in lines[first:after] if LIST_LINE.match(line))
    return dashes >= 2 and not SENTENCE_INSIDE.search(words) and 2 * listed < after - first


def _next_text(lines: list[str], start: int, end: int) -> int:
    """The first line from ``start`` that is not blank (``end`` if none is)."""
    while start < end and _blank(lines, start):
        start += 1
    return start


def _paragraph_end(lines: list[str], first: int, end: int) -> int:
    """The line after the paragraph that starts at ``first`` (``end`` at most, and SYNOPSIS_LINES on)."""
    after = first
    while after < end and not _blank(lines, after) and after - first < SYNOPSIS_LINES:
        after += 1
    return after


def _titles(lines: list[str], keyword: list[int | None], start: int, end: int) -> bool:
    """Whether lines ``start:end`` are a list of titles: TITLES_LISTED lines or more that read as a list's
    (``LIST_LINE``), and fewer than TITLE_LIST_WORDS words in the others (a long title, or one with a stop)."""
    listed = words = 0
    for at in range(start, end):
        if keyword[at] is not None or not lines[at].strip():
            continue
        if LIST_LINE.match(lines[at]):
            listed += 1
        else:
            words += len(lines[at].split())
            if words >= TITLE_LIST_WORDS:
                return False
    return listed >= TITLES_LISTED


def _among_titles(lines: list[str], keyword: list[int | None], line: int, own: int) -> bool:
    """Whether heading ``line`` is set among a list of titles under a "Contents" line not far above it: titles
    above it and a line of a list, not prose, after its paragraph (from ``own``: a chapter's "I" right under the
    list and its part's line opens the text)."""
    after = _next_text(lines, own, len(lines))
    if after == len(lines) or not LIST_LINE.match(lines[after]) or keyword[after] is not None or NUMERAL_LINE.match(
            lines[after]):  # a part's line over its first chapter's opens the text too  # fmt: skip
        return False
    for at in range(line - 1, max(-1, line - CONTENTS_LINES), -1):
        if CONTENTS_LINE.match(lines[at]):
            return _titles(lines, keyword, at + 1, line)
    return False


def _starts_list(lines: list[str], keyword: list[int | None], previous: int, line: int) -> bool:
    """Whether a contents list starts at heading ``line``: a "Contents" line stands above it, after the heading
    before it (at ``previous``), and not a book's length above it (Lyrical Ballads' poems number their stanzas
    "I.", "II."…): within about a page."""
    contents = next((at for at in range(line - 1, previous - 1, -1) if CONTENTS_LINE.match(lines[at])), None)
    return contents is not None and _fewer_words(lines, keyword, contents + 1, line, CONTENTS_GAP_WORDS)


def _ends_section(rank: int, following: int) -> bool:
    """Whether a heading of rank ``following`` ends the section of one of ``rank``, as a contents list's entry
    stands over it: one of its kind or an outer one does, and a name (Preface, Epilogue…) ends any, and any heading
    a name's. Under a list's last part come the preface or prologue a contents list sets before the text (Little
    Dorrit's "BOOK THE SECOND: RICHES", its chapters, then "PREFACE TO THE 1857 EDITION")."""
    return rank == -1 or following == -1 or following <= rank


def _fewer_words(lines: list[str], keyword: list[int | None], start: int, end: int, limit: int = CONTENTS_WORDS,
                 skip: re.Pattern[str] | None = None) -> bool:  # fmt: skip
    """Whether lines ``start:end`` hold fewer than ``limit`` words, keyword lines' not counted (they are a
    contents list's lines too: A Tale of Two Cities' chapters under its books), nor lines that ``skip`` matches."""
    words = 0
    for at in range(start, end):
        if keyword[at] is None and not (skip and skip.match(lines[at])):
            words += len(lines[at].split())
            if words >= limit:
                return False
    return True


def _written(line: str) -> str:
    """A heading line's kind and number, as a contents list and the chapter it lists both write them ("CHAPTER I"
    of "    Chapter I.  Loomings"; the titles may differ, or run over lines in one of them), its number as a
    figure: Life on the Mississippi's list numbers its chapters "CHAPTER IV.", its text "CHAPTER 4"."""
    words = [word.upper() for word in line.split()[:3]]
    if len(words) == 3 and words[1] == "THE":  # "CHAPTER THE FIRST": the ordinal is its number, not "the"
        words.pop(1)
    words = words[:2]
    if (first := words[0].rstrip(".:,;-–—")) and FIGURE.fullmatch(first):  # a numeral, alone or with its title:
        return str(_value(first))  # "I. A CAMP IN THE SNOW" in a list, "I" over its title in the text
    words[-1] = words[-1].rstrip(".:,;-–—")
    if len(words) == 2 and (number := WRITTEN_NUMBER.match(words[1])):
        words[1] = str(_value(number.group(0))) + words[1][number.end() :]
    return " ".join(words)


def _value(number: str) -> int:
    """The value of a Roman numeral, a figure or a number's word (upper case)."""
    if number.isdigit():
        return int(number)
    if number.lower() in NUMBER_VALUES:
        return NUMBER_VALUES[number.lower()]
    values = [ROMAN_VALUES[letter] for letter in number]
    return sum(-value if value < after else value for value, after in zip(values, [*values[1:], 0], strict=True))


def chapters(lines: list[str]) -> list[Chapter]:
    """The chapter lines among a plain text's ``lines``, in order (see the module's docstring)."""
    found: list[tuple[int, int, str, int]] = []  # (line, rank, title, title line)
    taken = -1  # the last line a chapter's title came from: it is no chapter itself
    keyword = [_keyword_rank(line) for line in lines]
    # Only a line after a blank one, or a kind's line, can be a chapter line (``_kind_of``): a novel's other
    # 60,000 lines are passed over here, at a list's speed.
    after_blank = [index for index in range(len(lines))
                   if keyword[index] is not None or index == 0 or not lines[index - 1].strip()]  # fmt: skip
    for index in after_blank:
        if index <= taken or (rank := _kind_of(lines, keyword, index)) is None:
            continue
        title, title_line = lines[index].strip(), -1
        found_kind = KEYWORD_LINE.match(lines[index]) if keyword[index] is not None else None
        bare = NUMERAL_LINE.match(lines[index]) or (found_kind and not found_kind.group("rest").strip(" \t."))
        if rank >= 0 and bare and (after := _title_after(lines, keyword, index, rank)) is not None:
            title = f"{title}{' ' if title[-1] in '.:—–-' else '. '}{lines[after].strip()}"
            taken = title_line = after
        found.append((index, rank, title, title_line))
    found = _without_index_letters(_without_contents(lines, keyword, found))
    ranks = {entry[1] for entry in found}
    if RANKS["chapter"] in ranks:  # a novel's acts and scenes are a play inside it, no part of its shape
        found = [entry for entry in found if entry[1] not in (RANKS["act"], RANKS["scene"])]
    used = sorted({entry[1] for entry in found if entry[1] >= 0})
    return [Chapter(line, used.index(rank) + 1 if rank >= 0 else 1, title, title_line)
            for line, rank, title, title_line in found]  # fmt: skip
