"""The store behind File ▸ Saved Versions… (app/documents/saved_versions.py): what each save keeps, where, and
how a long history is thinned, on real files."""

from __future__ import annotations

import gzip
from datetime import datetime, timedelta
from pathlib import Path

from app.documents.saved_versions import KEEP_DAILY, KEEP_RECENT, SavedVersion, SavedVersions, pruned

NOON = datetime(2026, 11, 20, 12, 0, 0)


def test_a_save_is_kept_whole_newest_first_and_not_twice(tmp_path: Path) -> None:
    store = SavedVersions(tmp_path / "data")
    document = tmp_path / "story.md"
    first = "Café, naïve — 🌊\r\nand a line\n"  # kept as written, line endings and all
    assert store.keep(document, first, NOON) is not None
    assert store.keep(document, first, NOON + timedelta(minutes=5)) is None  # the newest already holds it
    assert store.keep(document, "Second version with five words.", NOON + timedelta(minutes=9)) is not None
    versions = store.versions(document)
    assert [v.text() for v in versions] == ["Second version with five words.", first]
    assert [v.words for v in versions] == [5, 5] and versions[1].at == NOON  # the dash and the emoji are no words
    assert (store.folder_of(document) / "document.txt").read_text("utf-8").strip() == str(document.resolve())
    assert store.keep(document, first, NOON + timedelta(minutes=12)) is not None  # back to it: a new version


def test_each_file_has_its_own_history_found_by_any_path_to_it(tmp_path: Path, monkeypatch) -> None:
    store = SavedVersions(tmp_path / "data")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    store.keep(tmp_path / "a" / "story.md", "A's story.")
    store.keep(tmp_path / "b" / "story.md", "B's story.")
    monkeypatch.chdir(tmp_path / "a")
    assert [v.text() for v in store.versions(Path("story.md"))] == ["A's story."]
    assert store.versions(tmp_path / "c.md") == []


def test_a_clock_set_back_still_makes_the_newest_save_newest(tmp_path: Path) -> None:
    store = SavedVersions(tmp_path)
    document = tmp_path / "story.md"
    store.keep(document, "before", NOON)
    store.keep(document, "after", NOON - timedelta(hours=1))
    assert [v.text() for v in store.versions(document)] == ["after", "before"]


def test_a_damaged_or_strange_file_in_the_folder_is_never_a_version(tmp_path: Path) -> None:
    store = SavedVersions(tmp_path)
    document = tmp_path / "story.md"
    kept = store.keep(document, "kept", NOON)
    assert kept is not None
    kept.file.write_bytes(b"not gzip at all")  # a damaged newest: the same text is kept again beside it
    assert store.keep(document, "kept", NOON + timedelta(minutes=1)) is not None
    folder = store.folder_of(document)
    (folder / "notes.txt").write_text("mine")
    (folder / "20261120-120000-000000.w1.txt.gz.partial").write_bytes(gzip.compress(b"half"))
    assert [v.at for v in store.versions(document)] == [NOON + timedelta(minutes=1), NOON]


def test_a_long_history_keeps_the_recent_saves_then_one_a_day(tmp_path: Path) -> None:
    # Newest first: KEEP_RECENT saves today, then three a day for KEEP_DAILY + 5 earlier days.
    today = [NOON - timedelta(minutes=i) for i in range(KEEP_RECENT)]
    earlier = [NOON - timedelta(days=d, hours=h) for d in range(1, KEEP_DAILY + 6) for h in (0, 1, 2)]
    versions = [SavedVersion(at, 1, "0" * 16, tmp_path / f"{i}.txt.gz") for i, at in enumerate([*today, *earlier])]
    going = pruned(versions)
    staying = [v for v in versions if v not in going]
    assert staying[:KEEP_RECENT] == versions[:KEEP_RECENT]
    daily = staying[KEEP_RECENT:]
    assert len(daily) == KEEP_DAILY and len({v.at.date() for v in daily}) == KEEP_DAILY
    assert all(v.at.hour == 12 for v in daily)  # each day's last save
    assert min(v.at for v in daily).date() == (NOON - timedelta(days=KEEP_DAILY)).date()


def test_keeping_prunes_the_files_themselves(tmp_path: Path) -> None:
    store = SavedVersions(tmp_path)
    document = tmp_path / "story.md"
    for i in range(KEEP_RECENT + 5):  # all the same day
        store.keep(document, f"version {i}", NOON + timedelta(minutes=i))
    versions = store.versions(document)
    assert len(versions) == KEEP_RECENT + 1  # the recent ones, and the day's last before them
    assert versions[0].text() == f"version {KEEP_RECENT + 4}" and versions[-1].text() == "version 4"
    assert len(list(store.folder_of(document).glob("*.gz"))) == KEEP_RECENT + 1


def test_save_as_carries_the_history_to_the_new_name_and_never_mixes_two(tmp_path: Path) -> None:
    store = SavedVersions(tmp_path / "data")
    draft, final, other = tmp_path / "draft.md", tmp_path / "final.md", tmp_path / "other.md"
    store.keep(draft, "First.", NOON)
    store.keep(draft, "Second.", NOON + timedelta(minutes=1))
    assert store.carry(draft, final) == 2
    assert [v.text() for v in store.versions(final)] == ["Second.", "First."]
    assert [v.text() for v in store.versions(draft)] == ["Second.", "First."]  # the old name keeps its own
    assert (store.folder_of(final) / "document.txt").read_text("utf-8").strip() == str(final.resolve())
    store.keep(other, "Another text.", NOON)
    assert store.carry(draft, other) == 0  # a file saved over keeps its own history alone
    assert [v.text() for v in store.versions(other)] == ["Another text."]
    assert store.carry(tmp_path / "never-saved.md", tmp_path / "new.md") == 0
    assert store.carry(draft, draft) == 0


def test_a_file_renamed_outside_finds_its_history_by_its_text(tmp_path: Path) -> None:
    store = SavedVersions(tmp_path / "data")
    old, new = tmp_path / "chapter.md", tmp_path / "chapter one.md"
    store.keep(old, "Old words.", NOON)
    store.keep(old, "Last saved words.", NOON + timedelta(minutes=1))
    old.write_text("Last saved words.")
    copy = tmp_path / "copy.md"
    assert not store.adopt(copy, "Last saved words.")  # a copy: the original is still there with its history
    old.rename(new)
    assert not store.adopt(new, "Edited since, elsewhere.")  # not the text last saved: not knowably the same file
    store.folder_of(new).mkdir(parents=True)  # a folder without versions is no history
    assert store.adopt(new, "Last saved words.")
    assert [v.text() for v in store.versions(new)] == ["Last saved words.", "Old words."]
    assert store.versions(old) == [] and not store.adopt(new, "Last saved words.")  # once
    assert (store.folder_of(new) / "document.txt").read_text("utf-8").strip() == str(new.resolve())
    assert not SavedVersions(tmp_path / "nothing yet").adopt(new, "Last saved words.")
