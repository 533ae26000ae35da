"""The parts of a Word package besides its text (docx_export writes that): the relationships, the content types,
the styles (Word's own names, so its navigation pane and style gallery know them), the list numbering, the page
number's footer and the document's properties (title, author, dates)."""

from __future__ import annotations

import time
from xml.sax.saxutils import escape, quoteattr

from app.window.docx_marks import NOT_XML, R, W

BODY_POINT_SIZE = 12  # the manuscript size
CODE_FAMILY = "Courier New"
PACKAGE_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
HEADING_SIZES = {1: 36, 2: 30, 3: 26, 4: 24, 5: 24, 6: 24}  # half-points
# A front matter's title block (title_page.TITLE_PART): Word's Title and Subtitle, and Pandoc's Author and Date;
# (half-points, italic, space after in twips).
TITLE_STYLES = {"Title": (44, False, 240), "Subtitle": (30, True, 240), "Author": (26, False, 120),
                "Date": (24, False, 720)}  # fmt: skip


def relationships_xml(inner: str) -> str:
    head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    return f'{head}<Relationships xmlns="{PACKAGE_RELS}">{inner}</Relationships>'


def content_types_xml(pictures: str = "") -> str:
    office = "application/vnd.openxmlformats-officedocument"
    overrides = {
        "/word/document.xml": f"{office}.wordprocessingml.document.main+xml",
        "/word/styles.xml": f"{office}.wordprocessingml.styles+xml",
        "/word/numbering.xml": f"{office}.wordprocessingml.numbering+xml",
        "/word/footer1.xml": f"{office}.wordprocessingml.footer+xml",
        "/docProps/core.xml": "application/vnd.openxmlformats-package.core-properties+xml",
        "/docProps/app.xml": f"{office}.extended-properties+xml",
    }
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        + pictures
        + "".join(f'<Override PartName="{name}" ContentType="{kind}"/>' for name, kind in overrides.items())
        + "</Types>"
    )


def styles_xml(family: str, language: str) -> str:
    font = quoteattr(family)
    fonts = f"<w:rFonts w:ascii={font} w:hAnsi={font} w:eastAsia={font} w:cs={font}/>"
    size = BODY_POINT_SIZE * 2
    headings = "".join(
        f'<w:style w:type="paragraph" w:styleId="Heading{level}"><w:name w:val="heading {level}"/>'
        '<w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="9"/><w:qFormat/>'
        f'<w:pPr><w:keepNext/><w:keepLines/><w:spacing w:before="{360 if level < 3 else 240}" w:after="120"/>'
        f'<w:outlineLvl w:val="{level - 1}"/></w:pPr><w:rPr><w:b/>{"<w:i/>" if level > 4 else ""}'
        f'<w:sz w:val="{half_points}"/><w:szCs w:val="{half_points}"/></w:rPr></w:style>'
        for level, half_points in HEADING_SIZES.items()
    )
    title_block = "".join(
        f'<w:style w:type="paragraph" w:styleId="{part}"><w:name w:val="{part}"/><w:basedOn w:val="Normal"/>'
        f'<w:next w:val="Normal"/><w:qFormat/><w:pPr><w:keepNext/><w:spacing w:after="{after}"/><w:jc w:val="center"/>'
        f'</w:pPr><w:rPr>{"<w:b/>" if part == "Title" else ""}{"<w:i/>" if italic else ""}<w:sz w:val="{half_points}"/>'
        f'<w:szCs w:val="{half_points}"/></w:rPr></w:style>'
        for part, (half_points, italic, after) in TITLE_STYLES.items()
    )
    code = f'<w:rFonts w:ascii="{CODE_FAMILY}" w:hAnsi="{CODE_FAMILY}" w:cs="{CODE_FAMILY}"/>'
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:styles xmlns:w="{W}">'
        f'<w:docDefaults><w:rPrDefault><w:rPr>{fonts}<w:sz w:val="{size}"/><w:szCs w:val="{size}"/>'
        f"<w:lang w:val={quoteattr(language)}/></w:rPr></w:rPrDefault>"
        '<w:pPrDefault><w:pPr><w:spacing w:after="160" w:line="276" w:lineRule="auto"/></w:pPr></w:pPrDefault>'
        "</w:docDefaults>"
        '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/></w:style>'
        f"{headings}{title_block}"
        '<w:style w:type="paragraph" w:styleId="ListParagraph"><w:name w:val="List Paragraph"/>'
        '<w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="60"/><w:contextualSpacing/></w:pPr></w:style>'
        '<w:style w:type="paragraph" w:styleId="SourceCode"><w:name w:val="Source Code"/><w:basedOn w:val="Normal"/>'
        f'<w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr><w:rPr>{code}'
        '<w:sz w:val="20"/></w:rPr></w:style>'
        '<w:style w:type="paragraph" w:styleId="Figure"><w:name w:val="Figure"/><w:basedOn w:val="Normal"/>'
        '<w:next w:val="Caption"/><w:pPr><w:keepNext/><w:spacing w:after="60"/><w:jc w:val="center"/></w:pPr></w:style>'
        '<w:style w:type="paragraph" w:styleId="Caption"><w:name w:val="caption"/><w:basedOn w:val="Normal"/>'
        '<w:next w:val="Normal"/><w:qFormat/><w:pPr><w:jc w:val="center"/></w:pPr><w:rPr><w:i/><w:sz w:val="20"/>'
        '<w:szCs w:val="20"/></w:rPr></w:style>'
        '<w:style w:type="paragraph" w:styleId="Footer"><w:name w:val="footer"/><w:basedOn w:val="Normal"/>'
        '<w:pPr><w:spacing w:after="0"/><w:jc w:val="center"/></w:pPr><w:rPr><w:sz w:val="19"/></w:rPr></w:style>'
        '<w:style w:type="character" w:styleId="Hyperlink"><w:name w:val="Hyperlink"/>'
        '<w:rPr><w:color w:val="0563C1"/><w:u w:val="single"/></w:rPr></w:style>'
        "</w:styles>"
    )


MULTI = "hybridMultilevel"


def numbering_xml(starts: list[tuple[int, int]]) -> str:
    def levels(numbered: bool) -> str:
        return "".join(
            f'<w:lvl w:ilvl="{level}"><w:start w:val="1"/>'
            + (f'<w:numFmt w:val="decimal"/><w:lvlText w:val="%{level + 1}."/>' if numbered
               else f'<w:numFmt w:val="bullet"/><w:lvlText w:val="{"•◦▪"[level % 3]}"/>')
            + f'<w:lvlJc w:val="left"/><w:pPr><w:ind w:left="{360 * (level + 2)}" w:hanging="360"/></w:pPr></w:lvl>'
            for level in range(9)
        )  # fmt: skip

    numbers = "".join(
        f'<w:num w:numId="{num_id}"><w:abstractNumId w:val="1"/><w:lvlOverride w:ilvl="{level}">'
        f'<w:startOverride w:val="{start}"/></w:lvlOverride></w:num>'
        for num_id, (level, start) in enumerate(starts, start=2)
    )
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:numbering xmlns:w="{W}">'
        f'<w:abstractNum w:abstractNumId="0"><w:multiLevelType w:val="{MULTI}"/>{levels(False)}</w:abstractNum>'
        f'<w:abstractNum w:abstractNumId="1"><w:multiLevelType w:val="{MULTI}"/>{levels(True)}</w:abstractNum>'
        f'<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>{numbers}</w:numbering>'
    )


def footer_xml() -> str:
    field_char = '<w:r><w:fldChar w:fldCharType="{}"/></w:r>'
    return (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:ftr xmlns:w="{W}" xmlns:r="{R}">'
        '<w:p><w:pPr><w:pStyle w:val="Footer"/></w:pPr>'
        + field_char.format("begin")
        + '<w:r><w:instrText xml:space="preserve"> PAGE </w:instrText></w:r>'
        + field_char.format("separate")
        + "<w:r><w:t>1</w:t></w:r>"
        + field_char.format("end")
        + "</w:p></w:ftr>"
    )


def core_xml(title: str, authors: tuple[str, ...] = ()) -> str:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<cp:coreProperties xmlns:cp='
        '"http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
        'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
        f"<dc:title>{escape(NOT_XML.sub('', title))}</dc:title>"
        + (f"<dc:creator>{escape(NOT_XML.sub('', '; '.join(authors)))}</dc:creator>" if authors else "")
        + f'<dcterms:created xsi:type="dcterms:W3CDTF">{now}</dcterms:created>'
        f'<dcterms:modified xsi:type="dcterms:W3CDTF">{now}</dcterms:modified>'
        "</cp:coreProperties>"
    )
