"""A Markdown document's pictures (``![a caption](images/map.png)``) carried into its exports: each file read
from beside the document, kept as it is where Word shows it (PNG, JPEG, GIF) or as PNG where Qt can read it
(BMP, WebP, SVG…), and placed in line at its own size, scaled down to fit between the margins (and, in a PDF,
within a page). A picture that cannot be found or read is named in the text where it stood, and the export says
which ones it missed: the writer learns of it before an editor does. Pictures on the web are not fetched
(Redraft reads nothing from the network for an export); their place is named the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import quoteattr

from PySide6.QtCore import QBuffer, QIODevice, Qt, QUrl
from PySide6.QtGui import QImage, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument, QTextFormat

R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
DRAWING = "http://schemas.openxmlformats.org/drawingml/2006/main"
PICTURE = "http://schemas.openxmlformats.org/drawingml/2006/picture"
EMU_PER_INCH = 914400
EMU_PER_TWIP = 635
SCREEN_DPI = 96  # a picture that does not say its resolution is sized as a screen shows it
MAX_PICTURE_BYTES = 64 * 1024 * 1024  # past this a "picture" is not one a manuscript holds
# Word shows these as they are; anything else Qt reads goes in as PNG.
KEPT = {b"\x89PNG": ("png", "image/png"), b"\xff\xd8\xff": ("jpeg", "image/jpeg"), b"GIF8": ("gif", "image/gif")}


# A figure's blocks (set_figures): "Figure" the picture's paragraph, "Caption" the words under it; the Word export
# gives them styles of those names, the e-book classes.
FIGURE_PART = QTextFormat.Property.UserProperty + 42
FIGURE_PARTS = ("Figure", "Caption")
OBJECT = "\ufffc"  # the character a picture stands on in Qt's text
# What stands in a picture's empty brackets for Qt's Markdown reader, which drops a picture with none.
NO_WORDS = "\u200b"


def picture_words(image: QTextFormat) -> str:
    """A picture's words, from its Markdown brackets ("" for none)."""
    alt = image.property(QTextFormat.Property.ImageAltText)
    return alt.replace(NO_WORDS, "").strip() if isinstance(alt, str) else ""


def set_figures(document: QTextDocument) -> None:
    """A picture alone in its paragraph, with words in its brackets (``![The bay in 1877](map.png)``), set as a
    figure, as Pandoc sets one: the picture centred and its caption under it, centred in italic. A picture
    inside a sentence, or with empty brackets, stays as it is."""
    block = document.begin()
    while block.isValid():
        after = block.next()
        image = block.begin().fragment().charFormat() if block.text() == OBJECT else None
        caption = picture_words(image) if image is not None and image.isImageFormat() else ""
        if caption:
            cursor = QTextCursor(block)
            figure = QTextBlockFormat(block.blockFormat())
            figure.setAlignment(Qt.AlignmentFlag.AlignHCenter)
            figure.setProperty(FIGURE_PART, "Figure")
            cursor.setBlockFormat(figure)
            cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
            words = QTextCharFormat()
            words.setFontItalic(True)
            under = QTextBlockFormat(figure)
            under.setProperty(FIGURE_PART, "Caption")
            cursor.insertBlock(under, words)
            cursor.insertText(caption, words)
        block = after


@dataclass
class Picture:
    data: bytes
    extension: str
    content_type: str
    width_inches: float  # its size on paper, by its own resolution (a screen's where it gives none)
    height_inches: float
    image: QImage  # decoded: the PDF export draws it


def picture_path(name: str, folder: Path | None) -> Path | None:
    """Where the file a Markdown document names (``![…](name)``) would be: beside the document (``folder``)
    where the name is relative; None for a picture on the web, or a relative name in an untitled document."""
    url = QUrl(name)
    drive = len(url.scheme()) == 1  # C:\Pictures\map.png, as a Windows writer may give it: a path, not a URL
    if url.scheme() and not drive and not url.isLocalFile():  # http(s): not fetched
        return None
    path = Path(name if drive else url.toLocalFile() if url.isLocalFile() else url.path() or name).expanduser()
    if not path.is_absolute():
        if folder is None:  # an untitled document has no beside
            return None
        path = folder / path
    return path


def read_picture(name: str, folder: Path | None) -> Picture | None:
    """The picture a Markdown document names (``![…](name)``), read from beside it (``folder``), with its size
    on the page; None where it is on the web, missing, too large or not a picture Qt can read."""
    path = picture_path(name, folder)
    if path is None:
        return None
    try:
        if not path.is_file() or path.stat().st_size > MAX_PICTURE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    image = QImage.fromData(data)
    if image.isNull():
        return None
    kind = next((kept for magic, kept in KEPT.items() if data.startswith(magic)), None)
    if kind is None:
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buffer, "PNG")  # type: ignore[call-overload]  # PySide takes str; its stubs say bytes
        data, kind = bytes(buffer.data().data()), KEPT[b"\x89PNG"]
    dots_per_inch_x = image.dotsPerMeterX() * 0.0254 or SCREEN_DPI
    dots_per_inch_y = image.dotsPerMeterY() * 0.0254 or SCREEN_DPI
    return Picture(data, kind[0], kind[1], image.width() / dots_per_inch_x, image.height() / dots_per_inch_y, image)


@dataclass
class Pictures:
    """The pictures one export embeds (word/media) and the ones it could not."""

    folder: Path | None  # where the document is: a picture's relative name is read from there
    text_width_twips: int
    embedded: list[Picture] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    media: dict[str, int] = field(default_factory=dict)  # name -> its number in word/media: read and stored once
    drawings: int = 0  # every placement needs an id of its own, a picture named twice too

    def run_xml(self, name: str, alt: str = "") -> str | None:
        """A run holding the picture ``name`` in line, described by ``alt`` (else its file's name), or None (and
        ``name`` in ``missing``) where it cannot."""
        if name in self.missing:
            return None
        if name not in self.media:
            read = read_picture(name, self.folder)
            if read is None:
                self.missing.append(name)
                return None
            self.embedded.append(read)
            self.media[name] = len(self.embedded)
        media = self.media[name]
        picture = self.embedded[media - 1]
        self.drawings += 1
        number = self.drawings
        width, height = round(picture.width_inches * EMU_PER_INCH), round(picture.height_inches * EMU_PER_INCH)
        room = self.text_width_twips * EMU_PER_TWIP
        if width > room:  # scaled down to the text's width, its shape kept
            width, height = room, round(height * room / width)
        label = quoteattr(alt.strip() or Path(QUrl(name).path() or name).name)
        extent = f'cx="{width}" cy="{height}"'
        return (
            f'<w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent {extent}/>'
            f'<wp:docPr id="{number}" name="Picture {number}" descr={label}/>'
            f'<wp:cNvGraphicFramePr><a:graphicFrameLocks xmlns:a="{DRAWING}" noChangeAspect="1"/>'
            f'</wp:cNvGraphicFramePr><a:graphic xmlns:a="{DRAWING}"><a:graphicData uri="{PICTURE}">'
            f'<pic:pic xmlns:pic="{PICTURE}"><pic:nvPicPr><pic:cNvPr id="{number}" name={label}/><pic:cNvPicPr/>'
            f'</pic:nvPicPr><pic:blipFill><a:blip r:embed="rPicture{media}"/><a:stretch><a:fillRect/></a:stretch>'
            f'</pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext {extent}/></a:xfrm>'
            '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic>'
            "</wp:inline></w:drawing></w:r>"
        )

    def parts(self) -> dict[str, bytes]:
        return {f"word/media/picture{n}.{p.extension}": p.data for n, p in enumerate(self.embedded, start=1)}

    def relationships(self) -> str:
        return "".join(
            f'<Relationship Id="rPicture{n}" Type="{R}/image" Target="media/picture{n}.{p.extension}"/>'
            for n, p in enumerate(self.embedded, start=1)
        )

    def content_types(self) -> str:
        kinds = {p.extension: p.content_type for p in self.embedded}
        return "".join(f'<Default Extension="{ext}" ContentType="{kind}"/>' for ext, kind in sorted(kinds.items()))
