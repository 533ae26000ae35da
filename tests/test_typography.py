"""Quotation marks, dashes and the spaces between sentences as the document has them (model/edit/typography.py),
and a rewrite's drafts given them (model/edit/shape.py): curly in a document of curly marks, straight in one of
straight marks, one space after a full stop where the document leaves one."""

from __future__ import annotations

import pytest

from app.cli import build_parser
from app.command_line.edit_commands import file_request, request_from_json_line
from model import EditRequest, RequestError
from model.edit.shape import shape_request
from model.edit.typography import (
    dash_style,
    elided_opening,
    guillemet_space,
    quote_style,
    sentence_spacing,
    typed_dash_style,
    typed_quote_style,
    with_dashes,
    with_quotes,
    with_spacing,
)


@pytest.mark.parametrize(
    ("straight", "curly"),
    [
        ('"Hello," she said. "Don\'t go."', "“Hello,” she said. “Don’t go.”"),
        ("'Yes,' he said, 'it's the '90s.'", "‘Yes,’ he said, ‘it’s the ’90s.’"),
        ('He wrote ("fine") and left.', "He wrote (“fine”) and left."),
        ("the dogs' bowls\n'Here.'", "the dogs’ bowls\n‘Here.’"),
        ('—"Now," said Alice.', "—“Now,” said Alice."),
    ],
)
def test_straight_marks_turn_by_what_stands_beside_them(straight: str, curly: str) -> None:
    assert with_quotes(straight, "curly") == curly
    assert with_quotes(curly, "straight") == straight  # and back, character for character
    assert with_quotes(straight, "") == straight


def test_a_mark_at_the_start_turns_by_the_documents_character_before_it() -> None:
    assert with_quotes('" she said.', "curly", before="!") == "” she said."  # closes a quotation
    assert with_quotes('"Go," she said.', "curly", before=" ") == "“Go,” she said."
    assert with_quotes('"Go."', "curly", before="") == "“Go.”"  # the document's start


def test_the_style_is_read_only_where_it_is_plain() -> None:
    assert quote_style("‘Oh dear!’ she said. ‘I shall be late!’") == "curly"
    assert quote_style('"Oh dear!" she said.') == "straight"
    assert quote_style('‘Oh dear!’ she said. "Late!"') == ""  # both kinds: left as the model wrote them
    assert quote_style("Alice’s cat.") == ""  # one mark says nothing
    assert quote_style("# Alice's Adventures\n\n‘Oh dear!’ ‘I shall be late!’") == "curly"  # a stray one aside
    assert quote_style("No quotation at all.") == ""


@pytest.mark.parametrize("mode", ["rewrite", "fill"])
def test_a_drafts_quotes_are_the_documents(mode: str) -> None:
    curly_document = "‘Oh dear!’ said the Rabbit, ‘I shall be late!’ "
    span = "He ran off" if mode == "rewrite" else None
    request = EditRequest(mode=mode, prefix=curly_document, suffix=" ‘Wait!’ called Alice.", span=span)
    _inner, shape = shape_request(request)
    assert "“Late,” he said, “don’t wait" in shape.restore('"Late," he said, "don\'t wait."')
    straight = EditRequest(mode=mode, prefix='"Oh dear!" said the Rabbit. ', suffix=' "Wait!"', span=span)
    assert "’" not in shape_request(straight)[1].restore("‘Late,’ he said, “don’t wait.”")


def test_filling_gaps_leaves_the_writers_own_marks_alone() -> None:
    request = EditRequest(mode="gaps", prefix="‘Oh dear!’ ‘Late!’ ", suffix="", span='He said "[...]" twice.')
    _inner, shape = shape_request(request)
    assert shape.quotes == ""


def test_dashes_are_written_as_the_document_writes_them() -> None:
    assert dash_style("late—very late—and") == "em" and dash_style("late--very late--and") == "hyphens"
    assert dash_style("one—two--three") == "" and dash_style("a—b") == ""
    assert dash_style("---\n---\nno dashes") == ""  # Markdown rules are not dashes
    assert with_dashes("late--so late -- and---", "em") == "late—so late — and---"
    assert with_dashes("late—so", "hyphens") == "late--so" and with_dashes("a--b", "") == "a--b"


def test_a_drafts_dashes_are_the_documents() -> None:
    request = EditRequest(mode="fill", prefix="It was late—very late—and dark. ", suffix=" The end—at last.")
    assert "ran—and" in shape_request(request)[1].restore("He ran--and ran.")


@pytest.mark.parametrize(
    ("straight", "curly"),
    [
        ("'Tis the season, 'twas said.", "’Tis the season, ’twas said."),
        ("rock 'n' roll, give 'em a hand", "rock ’n’ roll, give ’em a hand"),
        ("'emeralds,' she said; 'tisane.'", "‘emeralds,’ she said; ‘tisane.’"),  # a word that only begins so
    ],
)
def test_an_apostrophe_that_shortens_a_word_is_not_an_opening_mark(straight: str, curly: str) -> None:
    assert with_quotes(straight, "curly") == curly


def test_the_word_typed_after_an_opening_mark_says_whether_it_was_an_apostrophe() -> None:
    assert elided_opening("‘Tis") == 0 and elided_opening("it was ‘twas") == 7 and elided_opening("(‘em") == 1
    assert elided_opening("the ‘90s") == 4 and elided_opening("‘n’") == 0
    for typed in ("‘emerald", "‘tisane", "x‘tis", "‘123", "‘Yes", "'tis"):
        assert elided_opening(typed) is None, typed


def test_the_spaces_between_sentences_are_the_documents() -> None:
    one = "The storm came in. Mara watched it. \"Go,\" she said. She kept the light."
    two = "The storm came in.  Mara watched it.  She kept the light."
    assert sentence_spacing(one) == "single" and sentence_spacing(two) == "double"
    assert sentence_spacing("Mr. Smith came.  He sat. She left.") == ""  # mixed: left as it is
    assert sentence_spacing("One sentence only.") == ""
    draft = 'I want to go.  "Don\'t,"  she said.\n  An indented line, and a break at the end  \nafter it.'
    assert with_spacing(draft, "single") == 'I want to go. "Don\'t," she said.\n  An indented line, and a break ' \
                                            "at the end  \nafter it."  # fmt: skip
    assert with_spacing(draft, "double") == draft and with_spacing(draft, "") == draft


@pytest.mark.parametrize("mode", ["rewrite", "fill"])
def test_a_drafts_spaces_between_sentences_are_the_documents(mode: str) -> None:
    span = "She was sad." if mode == "rewrite" else None
    single = EditRequest(mode=mode, prefix="The storm came in. Mara watched it. She kept the light. ",
                         suffix=" The boat came. It sank.", span=span)  # fmt: skip
    assert "happy. \"I want" in shape_request(single)[1].restore('She was happy.  "I want to go,"  she said')
    double = EditRequest(mode=mode, prefix="The storm came in.  Mara watched it.  She kept the light.  ",
                         suffix="  The boat came.  It sank.", span=span)  # fmt: skip
    assert "happy.  \"I want" in shape_request(double)[1].restore('She was happy.  "I want to go,"  she said')


GERMAN = "„Ich gehe jetzt“, sagte er. „Warum?“, fragte sie, „es regnet doch.“ "
FRENCH = ("Il dit\u202f: «\u202fNon\u202f», et partit. «\u202fPourquoi\u202f?\u202f» demanda-t-elle, "
          "«\u202fil pleut.\u202f» ")


def test_german_low_marks_and_french_guillemets_are_read_as_their_own_kinds() -> None:
    assert quote_style(GERMAN) == "low"
    assert quote_style(FRENCH) == "guillemets" and guillemet_space(FRENCH) == "\u202f"
    assert guillemet_space("«Non», dit-il. «Oui», dit-elle.") == ""  # set tight, as Swiss texts do
    assert quote_style("Il dit\u00a0: «\u00a0C’est “vrai”\u00a0». «\u00a0Non\u00a0».") == "guillemets"  # “ ” inside
    assert quote_style("“Hello,” she said, “it’s late.”") == "curly"  # English, its apostrophes aside
    assert quote_style("„Ja“, sagte er. \"Nein\", sagte sie. \"Doch.\"") == ""  # mixed with straight: left alone


def test_a_text_without_marks_of_its_own_is_typed_in_its_languages() -> None:
    assert typed_quote_style("", "de") == ("low", "")
    assert typed_quote_style("Il dit\u202f: «\u202fNon", "fr") == ("guillemets", "\u202f")  # the space it set
    assert typed_quote_style("Il dit : ", "fr") == ("guillemets", "\u00a0")  # else Word's no-break one
    assert typed_quote_style("„Ja", "en") == ("curly", "")  # one mark says nothing: the language's
    assert typed_quote_style(GERMAN, "en") == ("low", "")  # the text's own kind first
    assert typed_quote_style("He said \"", "de") == ("", "")  # a straight mark kept: the writer's choice
    assert typed_quote_style("", "xx") == ("", "")  # a language with no marks known: as typed


def test_a_text_without_dashes_of_its_own_is_typed_in_english_ones() -> None:
    assert typed_dash_style("A new text.", "en") == "em"
    assert typed_dash_style("A new text.", "de") == ""  # German's dash is a spaced – : left as typed
    assert typed_dash_style("One--then", "en") == ""  # a -- kept: the writer's choice
    assert typed_dash_style("One—two—three", "fr") == "em"  # the text's own kind first


def test_straight_marks_turn_into_the_documents_low_marks_or_guillemets() -> None:
    assert with_quotes('"Komm," sagte sie, "es ist spät."', "low") == "„Komm,“ sagte sie, „es ist spät.“"
    assert with_quotes("“Komm,” sagte sie.", "low") == "„Komm,“ sagte sie."  # the model's English marks too
    assert with_quotes('"Viens", dit-elle, "c\'est tard."', "guillemets", inner="\u202f") == (
        "«\u202fViens\u202f», dit-elle, «\u202fc’est tard.\u202f»"
    )
    assert with_quotes("“Viens”, dit-elle.", "guillemets") == "«Viens», dit-elle."  # no space set inside: none


@pytest.mark.parametrize(("document", "draft", "wanted"), [
    (GERMAN, "“Komm mit,” rief sie.", "„Komm mit,“ rief sie."),
    (FRENCH, '"Viens avec moi", cria-t-elle.', "«\u202fViens avec moi\u202f», cria-t-elle."),
])  # fmt: skip
def test_a_drafts_quotes_are_a_german_or_french_documents(document: str, draft: str, wanted: str) -> None:
    request = EditRequest(mode="rewrite", prefix=document, suffix=" " + document, span="Sie ging.")
    _inner, shape = shape_request(request)
    assert shape.restore(draft).strip() == wanted


@pytest.mark.parametrize(("language", "draft", "wanted"), [
    ("de", '"Komm mit," rief sie.', "„Komm mit,“ rief sie."),
    ("fr", '"Viens avec moi", cria-t-elle.', "«\u00a0Viens avec moi\u00a0», cria-t-elle."),
    ("en", '"Come with me," she called--twice.', "“Come with me,” she called—twice."),
    ("", '"Come with me," she called--twice.', '"Come with me," she called--twice.'),  # not known: as written
])  # fmt: skip
def test_a_drafts_marks_in_a_new_text_are_its_languages(language: str, draft: str, wanted: str) -> None:
    new_text = "Sie ging zur Tür. "  # no mark of its own yet: the draft's are the language's, as typed ones are
    request = EditRequest(mode="rewrite", prefix=new_text, suffix="", span="Sie blieb.", language=language)
    assert shape_request(request)[1].restore(draft).strip() == wanted
    own = EditRequest(mode="rewrite", prefix=GERMAN, suffix="", span="Sie blieb.", language="fr")
    assert shape_request(own)[1].restore(draft).strip().startswith("„")  # the text's own kind first
    straight = EditRequest(mode="fill", prefix='Sie sagte "Nein". ', suffix="", language=language)
    assert '"' in shape_request(straight)[1].restore('"Ja," sagte er.')  # a straight mark kept: the writer's choice


@pytest.mark.parametrize("language", ["German", "DE", "d", "de-DE", 7, None])
def test_a_language_is_a_codes_two_or_three_letters(language: object) -> None:
    request = EditRequest(prefix="Es war einmal", max_new_tokens=4, language=language)  # type: ignore[arg-type]
    with pytest.raises(RequestError, match="language must be a code such as"):
        request.validate()


def test_a_json_request_and_the_command_line_carry_the_texts_language() -> None:
    args = build_parser().parse_args(["fill", "--json", "--language", "fr"])
    assert request_from_json_line(b'{"prefix": "Il dit : "}', args).language == "fr"  # the command line's
    assert request_from_json_line(b'{"prefix": "Er sagte: ", "language": "de"}', args).language == "de"


def test_a_files_language_is_the_one_it_reads_as_unless_one_is_given() -> None:
    german = "Der Hund lief über die Straße, und die Katze sah ihm nach, weil sie nicht schlafen wollte. " * 4
    rewrite = build_parser().parse_args(["rewrite", "brief.md", "--span", "0:8"])
    assert file_request(rewrite, german).language == "de"  # as the editor reads it: its drafts quote „so“
    assert file_request(rewrite, "Too short to tell.").language == ""
    told = build_parser().parse_args(["fill", "brief.md", "--at", "8", "--language", "fr"])
    assert file_request(told, german).language == "fr"
