"""File ▸ Export as EPUB E-book… (app/window/epub_export.py): an EPUB 3 package read back as a reading system
reads it: the mimetype first and stored, the container, the package's manifest and spine, every XHTML file
well-formed, chapters cut at the top-level headings, the table of contents, Markdown's structure as XHTML with
its marks gone, footnotes as Notes, pictures carried, and the tracked-changes question without "show"."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtGui import QColor, QImage

from app.window.docx_export import word_language
from app.window.epub_export import export_epub

XHTML = "{http://www.w3.org/1999/xhtml}"
OPF = "{http://www.idpf.org/2007/opf}"
BOOK = (
    "Before it all began.\n\n# The Lighthouse\n\nThe keeper **climbed** the stairs *every* evening.[^1]\n\n"
    "- the lamp\n- the log\n  - its pencil\n\n3. third\n4. fourth\n\n> Keep the light.\n\n```\nlog < 10 & done\n```\n\n"
    "## The Storm\n\nSee [the chart](https://example.org/chart) and ![the sea](sea.png).\n\n"
    "| when | what |\n| --- | --- |\n| dawn | fog |\n\n# The Letter\n\nIt said ~~nothing~~ little.\n\n"
    "[^1]: As his father had.\n"
)


def _read(path: Path) -> tuple[zipfile.ZipFile, ElementTree.Element, dict[str, ElementTree.Element]]:
    """The package, its content.opf and every XHTML file parsed (which fails on any that is not well-formed)."""
    package = zipfile.ZipFile(path)
    first = package.infolist()[0]
    assert (first.filename, first.compress_type) == ("mimetype", zipfile.ZIP_STORED)
    assert package.read("mimetype") == b"application/epub+zip"
    container = ElementTree.fromstring(package.read("META-INF/container.xml"))
    rootfile = next(e for e in container.iter() if e.tag.endswith("rootfile"))
    assert rootfile.get("full-path") == "OEBPS/content.opf"
    opf = ElementTree.fromstring(package.read("OEBPS/content.opf"))
    pages = {name: ElementTree.fromstring(package.read(name)) for name in package.namelist() if name.endswith(".xhtml")}
    return package, opf, pages


def _text(element: ElementTree.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def test_a_markdown_book_is_a_valid_epub_cut_at_its_chapters(document_window, tmp_path: Path) -> None:
    picture = QImage(8, 6, QImage.Format.Format_RGB32)
    picture.fill(QColor("#3070b0"))
    assert picture.save(str(tmp_path / "sea.png"))
    story = tmp_path / "book.md"
    story.write_text(BOOK, encoding="utf-8")
    window = document_window(text="")
    assert window.open_path(story)
    assert window.export_to(tmp_path / "book.epub")
    package, opf, pages = _read(tmp_path / "book.epub")
    manifest = {item.get("id"): item for item in opf.iter(f"{OPF}item")}
    for item in manifest.values():  # every file the manifest names is in the package
        assert f"OEBPS/{item.get('href')}" in package.namelist()
    assert {item.get("href") for item in manifest.values() if item.get("properties") == "nav"} == {"nav.xhtml"}
    spine = [manifest[ref.get("idref")].get("href") for ref in opf.iter(f"{OPF}itemref")]
    assert spine == ["text/part0.xhtml", "text/part1.xhtml", "text/part2.xhtml"]  # the front matter, two chapters
    assert next(opf.iter("{http://purl.org/dc/elements/1.1/}title")).text == "The Lighthouse"
    assert any(i.get("media-type") == "image/png" for i in manifest.values())
    nav = pages["OEBPS/nav.xhtml"]
    assert [_text(a) for a in nav.iter(f"{XHTML}a")] == ["The Lighthouse", "The Storm", "The Letter"]
    for anchor in nav.iter(f"{XHTML}a"):  # each entry leads to its heading
        file, _, fragment = anchor.get("href").partition("#")
        assert any(h.get("id") == fragment for h in pages[f"OEBPS/{file}"].iter() if h.tag[-2:-1] == "h")
    first, second = pages["OEBPS/text/part1.xhtml"], pages["OEBPS/text/part2.xhtml"]
    words = _text(first)
    assert "**" not in words and "[^1]" not in words and "Keep the light." in words
    assert [_text(e) for e in first.iter(f"{XHTML}strong")] == ["climbed"]
    assert [_text(e) for e in first.iter(f"{XHTML}em")] == ["every"]
    assert [_text(e) for e in first.iter(f"{XHTML}sup")] == ["1"]
    outer = next(first.iter(f"{XHTML}ul"))
    assert [_text(li) for li in outer.findall(f"{XHTML}li")] == ["the lamp", "the log its pencil"]  # nested
    assert next(first.iter(f"{XHTML}ol")).get("start") == "3"
    assert _text(next(first.iter(f"{XHTML}blockquote"))) == "Keep the light."
    assert "".join(next(first.iter(f"{XHTML}pre")).itertext()) == "log < 10 & done"
    assert next(first.iter(f"{XHTML}a")).get("href") == "https://example.org/chart"
    assert [_text(c) for c in first.iter(f"{XHTML}th")] == ["when", "what"]
    assert next(first.iter(f"{XHTML}img")).get("src").startswith("../images/")
    assert [_text(e) for e in second.iter(f"{XHTML}del")] == ["nothing"]
    assert "As his father had." in _text(second)  # the notes, at the end, as the PDF sets them
    assert _text(next(pages["OEBPS/text/part0.xhtml"].iter(f"{XHTML}body"))) == "Before it all began."


def test_a_plain_text_is_its_paragraphs_in_one_file(document_window, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("First *line* & more.\n\nSecond one.\n", encoding="utf-8")
    window = document_window(text="")
    assert window.open_path(path)
    assert window.export_to(tmp_path / "notes.epub")
    _package, _opf, pages = _read(tmp_path / "notes.epub")
    body = pages["OEBPS/text/part0.xhtml"]
    assert [_text(p) for p in body.iter(f"{XHTML}p")] == ["First *line* & more.", "Second one."]
    assert [_text(a) for a in pages["OEBPS/nav.xhtml"].iter(f"{XHTML}a")] == ["notes"]


def test_tracked_changes_are_made_or_left_out_never_shown(document_window, tmp_path, monkeypatch) -> None:
    window = document_window(text="The keeper {--slowly --}climbed the {++stone ++}stairs.\n")
    offered: list[list[str]] = []

    def choose(_window, _title, _text, buttons, escape):
        offered.append([value for _label, value in buttons])
        return "before"

    monkeypatch.setattr(type(window), "_choose", choose)
    monkeypatch.setattr(
        "app.window.file_commands.QFileDialog.getSaveFileName", lambda *_args: (str(tmp_path / "b.epub"), "")
    )
    assert window._export("Export as EPUB", ".epub", "EPUB e-book (*.epub)")
    assert offered == [["accept", "before", "cancel"]]
    _package, _opf, pages = _read(tmp_path / "b.epub")
    assert "The keeper slowly climbed the stairs." in _text(pages["OEBPS/text/part0.xhtml"])


def test_a_plain_texts_chapters_are_the_books_chapters(document_window, tmp_path: Path) -> None:
    story = tmp_path / "machine.txt"
    machine = "The Time Machine\n\n I\n\n Introduction\n\nThe Time Traveller was expounding.\n\n\x0c\n II\n\n"
    story.write_text(machine + " The Machine\n\nThe thing he held.\n\nEpilogue\n\nThe end.\n", encoding="utf-8")
    window = document_window(text="")
    assert window.open_path(story) and window.export_to(tmp_path / "machine.epub")
    _package, _opf, pages = _read(tmp_path / "machine.epub")
    assert [_text(a) for a in pages["OEBPS/nav.xhtml"].iter(f"{XHTML}a")] == [
        "I Introduction", "II The Machine", "Epilogue",  # the text before the first chapter is a file of its own
    ]  # fmt: skip
    chapter = pages["OEBPS/text/part1.xhtml"]
    assert [list(h.itertext()) for h in chapter.iter(f"{XHTML}h1")] == [["I", "Introduction"]]
    assert len(list(chapter.iter(f"{XHTML}br"))) == 1  # the numeral and its title on two lines
    assert [_text(p) for p in chapter.iter(f"{XHTML}p")] == ["The Time Traveller was expounding."]
    assert _text(pages["OEBPS/text/part0.xhtml"]).endswith("The Time Machine")


def test_characters_xml_forbids_are_left_out_not_the_book(document_window, tmp_path: Path) -> None:
    # A plain text's chapters are often a form feed apart (Project Gutenberg's, a printer's); XML has no place for one.
    window = document_window(text="# One\x0c\n\nThe \x01keeper.\x0c\n\n# Two\n\nHe lit the lamp.\n")
    assert window.export_to(tmp_path / "odd.epub")
    _package, _opf, pages = _read(tmp_path / "odd.epub")  # every page parses
    assert "The keeper." in _text(pages["OEBPS/text/part1.xhtml"])  # no front matter: the book opens at One


def _epubcheck() -> list[str] | None:
    """The W3C's EPUBCheck (Debian's `epubcheck`, a jar run by Java) where installed; .ci/run installs it."""
    jar, java = shutil.which("epubcheck"), shutil.which("java")
    return [java, "-jar", jar, "--quiet"] if jar and java else None


FRONT_MATTER = (
    "---\ntitle: The *Salt* Road\nsubtitle: A _novel_\nauthor: [Maya Okafor, Tom Reyes]\nlang: en-GB\n---\n\n"
)



@pytest.mark.skipif(_epubcheck() is None, reason="EPUBCheck is not installed (Debian: apt install epubcheck)")
@pytest.mark.parametrize(
    ("text", "markdown"),
    [
        (FRONT_MATTER + BOOK + "\n- [x] a task\n\n{++added++}{>>Ed<<} & <tag> 🌊 我们\n\n***\n", True),
        (BOOK, True),
        ("A plain text,\x0cits form feed & <marks> kept as words.\n\nSecond paragraph.\n\nCHAPTER I\n\nThe "
         "Period\n\nWords.\n\n\x0c\nII\n\nWords.", False),
        ("", True),
        (FRONT_MATTER, True),  # a title page and nothing else
        ("---\ntitle: T\nlang: English (UK)\n---\n\nWords.", True),  # no tag: the app's own is used
    ],
    ids=["front-matter-book", "book", "plain-text", "empty", "only-front-matter", "malformed-language"],
)
def test_epubcheck_finds_nothing_wrong(tmp_path: Path, text: str, markdown: bool) -> None:
    """What a store (Apple Books, Kobo, Google Play) runs before it takes a book: no fatal, error or warning."""
    picture = QImage(8, 6, QImage.Format.Format_RGB32)
    picture.fill(QColor("#3070b0"))
    assert picture.save(str(tmp_path / "sea.png"))
    book = tmp_path / "book.epub"
    language = word_language("", QLocale.c())  # the app's own language on a LANG=C machine
    export_epub(text, markdown, book, "book.md", language, folder=tmp_path, author="Writer Name")
    command = _epubcheck()
    assert command is not None
    checked = subprocess.run([*command, str(book)], capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0 and "ERROR" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    assert "WARNING" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
