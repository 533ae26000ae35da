"""Redraft's preferences: one table of defaults (the :class:`Preferences` dataclass), typed reads.

INI-backed QSettings hand back strings in a fresh process, so every read names its type; lists are
stored as JSON so that an empty list survives the round trip.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

from app.userdirs import user_dirs
from model import DenoiseOptions
from model.edit.request import LENGTH_FACTORS, MAX_POLISH_ROUNDS

log = logging.getLogger(__name__)

ORGANIZATION = "Redraft"
APPLICATION = "Redraft"
SETTINGS_FILE = "Redraft.ini"
THEMES = ("system", "light", "dark")
DEVICES = ("auto", "cpu", "cuda")
SERVER_PASSES = ("one-request", "per-pass")  # model.server.SERVER_PASSES, without importing it here
# model.checkpoint.expert_placement's, without importing torch here
EXPERT_PLACEMENTS = ("auto", "device", "host-stream", "host-compute")
MAX_RECENT_FILES = 10
MAX_READING_PLACES = 30  # the files whose caret is kept for the next time they open (app/window/reading_places.py)
MAX_INSTRUCTION_HISTORY = 20
MAX_NAME_CHARS = 200


def _setting(default: Any, key: str) -> Any:
    return field(default=default, metadata={"key": key})


@dataclass(frozen=True)
class Preferences:
    """Every setting with its default and its QSettings key. Zero sampler values mean "model default"."""

    model: str = _setting("builtin", "model/spec")  # "builtin", a local folder, or a hub id
    device: str = _setting("auto", "model/device")
    # Where a Mixture-of-Experts model's routed experts live at 4/8 bit on a GPU (issue #41): "auto" keeps
    # them in host memory only when the card is too small for the whole model.
    experts: str = _setting("auto", "model/experts")
    allow_download: bool = _setting(False, "model/allow_download")
    # A team's vLLM server instead of a local model (README "Team server"). The API key is not here: it
    # lives in the system keyring (app/model_sources/server_key.py).
    use_server: bool = _setting(False, "server/enabled")
    server_url: str = _setting("", "server/url")
    server_model: str = _setting("", "server/model")  # "": the first model the server lists
    server_passes: str = _setting("one-request", "server/passes")
    max_denoising_steps: int = _setting(0, "sampler/max_denoising_steps")
    t_max: float = _setting(0.0, "sampler/t_max")
    t_min: float = _setting(0.0, "sampler/t_min")
    entropy_bound: float = _setting(0.0, "sampler/entropy_bound")
    # Negative means the model's default: 0 is a real choice here (no bias, the published sampler).
    left_to_right_bias: float = _setting(-1.0, "sampler/left_to_right_bias")
    polish_rounds: int = _setting(-1, "sampler/polish_rounds")  # negative: the model's default, as above
    # Candidates develop side by side in one batch and the editor shows the one the model rates best,
    # which reads better than a single draw. The batch is nearly free on a GPU; on two CPU cores the
    # built-in model takes about 2.5x as long (a 24-token fill: 1.5 s -> 3.9 s, measured).
    candidates: int = _setting(4, "rewrite/candidates")
    # Fewer drafts where the model is slow here (model.edit.budget.COMFORTABLE_EDIT_SECONDS): one draft reads
    # sooner than four developing side by side.
    fewer_drafts_when_slow: bool = _setting(True, "rewrite/fewer_drafts_when_slow")
    random_seed: bool = _setting(True, "rewrite/random_seed")
    seed: int = _setting(0, "rewrite/seed")
    context_budget: int = _setting(2048, "rewrite/context_budget")
    fill_max_tokens: int = _setting(24, "rewrite/fill_max_tokens")
    # Share of the selection re-noised before it develops: 1.0 re-imagines it from the context alone;
    # the default keeps part of it, since a writer who asks for a rewrite wants this sentence, redrafted.
    rewrite_strength: float = _setting(0.7, "rewrite/strength")
    # Rewrite ▸ Length: how long a rewrite comes out against the selection (EditRequest.length).
    rewrite_length: str = _setting("same", "rewrite/length")
    # The least time a pass stays on screen, so fast hardware still shows the text developing.
    pass_display_ms: int = _setting(35, "rewrite/pass_display_ms")
    theme: str = _setting("system", "ui/theme")
    font_family: str = _setting("", "ui/font_family")  # the text's typeface; "": the book serifs (PROSE_FONTS)
    drafts_panel: bool = _setting(True, "ui/drafts_panel")  # View ▸ Drafts Panel (app/rewrite/drafts_panel.py)
    outline_panel: bool = _setting(False, "ui/outline_panel")  # View ▸ Outline (app/window/outline.py)
    shade_span: bool = _setting(False, "ui/shade_span")  # View ▸ Shade Hesitant Words in the Text
    check_spelling: bool = _setting(True, "ui/check_spelling")  # View ▸ Check Spelling (app/window/spelling.py)
    typewriter_scrolling: bool = _setting(False, "ui/typewriter_scrolling")  # View ▸ Typewriter Scrolling
    spelling_language: str = _setting("", "ui/spelling_language")  # View ▸ Spelling Language; "": the system's
    zoom: int = _setting(0, "ui/zoom")
    session_goal: int = _setting(0, "writing/session_goal")  # View ▸ Session Word Goal…; 0: none
    author_name: str = _setting("", "writing/author_name")  # Settings ▸ Documents: the exports' author
    window_geometry: str = _setting("", "ui/window_geometry")  # where the window was at its last close (base64)
    recent_files: tuple[str, ...] = _setting((), "files/recent")
    reading_places: tuple[str, ...] = _setting((), "files/reading_places")  # "position\tpath", the newest first
    instruction_history: tuple[str, ...] = _setting((), "rewrite/instruction_history")

    def denoise_options(self) -> DenoiseOptions:
        return DenoiseOptions(
            max_denoising_steps=self.max_denoising_steps or None,
            t_max=self.t_max or None,
            t_min=self.t_min or None,
            entropy_bound=self.entropy_bound or None,
            left_to_right_bias=self.left_to_right_bias if self.left_to_right_bias >= 0 else None,
            polish_rounds=self.polish_rounds if self.polish_rounds >= 0 else None,
        )

    def model_spec(self) -> str | None:
        return None if self.model in ("", "builtin") else self.model

    def sanitized(self) -> Preferences:
        """Clamp values a hand-edited settings file could have put out of range."""
        return replace(
            self,
            device=self.device if self.device in DEVICES else "auto",
            experts=self.experts if self.experts in EXPERT_PLACEMENTS else "auto",
            server_passes=self.server_passes if self.server_passes in SERVER_PASSES else "one-request",
            use_server=self.use_server and bool(self.server_url.strip()),
            theme=self.theme if self.theme in THEMES else "system",
            max_denoising_steps=min(max(self.max_denoising_steps, 0), 1024),
            candidates=min(max(self.candidates, 1), 8),
            seed=min(max(self.seed, 0), 2**31 - 1),
            left_to_right_bias=min(self.left_to_right_bias, 10.0) if self.left_to_right_bias >= 0 else -1.0,
            polish_rounds=min(self.polish_rounds, MAX_POLISH_ROUNDS) if self.polish_rounds >= 0 else -1,
            context_budget=min(max(self.context_budget, 16), 32768),
            fill_max_tokens=min(max(self.fill_max_tokens, 1), 1024),
            rewrite_strength=min(max(self.rewrite_strength, 0.05), 1.0),
            rewrite_length=self.rewrite_length if self.rewrite_length in LENGTH_FACTORS else "same",
            pass_display_ms=min(max(self.pass_display_ms, 0), 2000),
            zoom=min(max(self.zoom, -8), 24),
            session_goal=min(max(self.session_goal, 0), 100_000),
            author_name=" ".join(self.author_name.split())[:MAX_NAME_CHARS],
            recent_files=self.recent_files[:MAX_RECENT_FILES],
            reading_places=self.reading_places[:MAX_READING_PLACES],
            instruction_history=self.instruction_history[:MAX_INSTRUCTION_HISTORY],
        )


def default_qsettings() -> QSettings:
    """The writer's settings file, in the settings folder app.userdirs names (and Help ▸ Where Your Files Are
    shows): ``REDRAFT_HOME`` moves it with the rest, which Qt's own place for it ignored. On Linux and Windows
    the two places are one; where they differ (a Mac's), a file in Qt's, where Redraft kept it before, is taken
    over once, so no writer's settings are left behind."""
    path = user_dirs().settings / SETTINGS_FILE
    if not path.exists() and not os.environ.get("REDRAFT_HOME"):
        qt_place = QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)
        earlier = Path(qt_place.fileName())
        if earlier.is_file() and earlier.resolve() != path.resolve():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(earlier, path)
            except OSError as error:  # the defaults, then: a start is never refused over settings
                log.warning("could not take over the settings in %s: %s", earlier, error)
    return QSettings(str(path), QSettings.Format.IniFormat)


class SettingsStore:
    """Typed access to :class:`Preferences` over one QSettings object."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.qsettings = qsettings if qsettings is not None else default_qsettings()

    def load(self) -> Preferences:
        values: dict[str, Any] = {}
        for spec in fields(Preferences):
            assert spec.default is not MISSING
            values[spec.name] = self._read(spec.metadata["key"], spec.default)
        return Preferences(**values).sanitized()

    def save(self, preferences: Preferences) -> None:
        for spec in fields(Preferences):
            value = asdict(preferences)[spec.name]
            if isinstance(spec.default, tuple):
                value = json.dumps(list(value))
            self.qsettings.setValue(spec.metadata["key"], value)
        self.qsettings.sync()

    def update(self, **changes: Any) -> Preferences:
        preferences = replace(self.load(), **changes)
        self.save(preferences)
        return preferences

    def _read(self, key: str, default: Any) -> Any:
        if not self.qsettings.contains(key):
            return default
        try:
            if isinstance(default, tuple):
                items = json.loads(str(self.qsettings.value(key, "[]", type=str)))
                if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
                    raise ValueError("expected a JSON list of strings")
                return tuple(items)
            if isinstance(default, bool):  # before int: bool is an int subclass
                return bool(self.qsettings.value(key, default, type=bool))
            if isinstance(default, float):
                # As text: PySide6 6.11 reads type=float through a 32-bit float (0.9 came back as
                # 0.8999999761581421); a double's text round-trips exactly, in every settings format.
                return float(str(self.qsettings.value(key, repr(default), type=str)))
            return type(default)(self.qsettings.value(key, default, type=type(default)))
        except (ValueError, TypeError) as error:
            log.warning("ignoring the unreadable setting %s (%s); using the default", key, error)
            return default
