"""The Settings dialog: a form over :class:`Preferences`; the window applies the result live."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSlider,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.dialogs.screen_fit import fitted
from app.dialogs.settings_controls import (
    DEVICE_LABELS,
    EXPERT_LABELS,
    MODEL_DEFAULT,
    MODEL_SOURCES,
    PASS_LABELS,
    PREFERRED_SIZE,
    THEME_LABELS,
    WORDS_PER_TOKEN,
    ConnectionTest,
    builtin_context_cap,
    combo_box,
    context_words,
    described,
    double_box,
    font_box,
    form_layout,
    integer_box,
    label_fields,
    words_for,
    wrapped_label,
)
from app.model_sources import server_key
from app.settings import Preferences
from model.edit.request import MAX_POLISH_ROUNDS


class SettingsDialog(QDialog):
    """Five pages (Model, Server, Rewriting, Appearance, Advanced) beside a list, each scrolling on its
    own, so that the dialog and its OK, Cancel and Restore Defaults fit a 1366x768 laptop's screen."""

    def __init__(self, preferences: Preferences, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings")
        self.original = preferences
        self.connection_ok: bool | None = None  # the last Test connection's outcome
        p = preferences

        folder = Path(p.model).expanduser().exists()
        source = "builtin" if p.model in ("", "builtin") else ("folder" if folder else "hub")
        self.model_source = combo_box(MODEL_SOURCES, source)
        self.model_path = QLineEdit("" if source == "builtin" else p.model)
        self.model_path.setPlaceholderText("/path/to/checkpoint or org/model-name")
        self.browse = QPushButton("&Browse…")
        self.browse.clicked.connect(self._browse)
        self.device = combo_box(DEVICE_LABELS, p.device)
        self.experts = combo_box(EXPERT_LABELS, p.experts)
        self.experts.setToolTip(
            "Routed experts: most of a Mixture-of-Experts model's weights. Kept in the computer's memory, they "
            "let a 12–16 GB graphics card run the 26B-A4B model at 4 bit, each pass slower than with all of "
            "the model on the card."
        )
        self.allow_download = QCheckBox("&Allow downloading models from the Hugging Face Hub")
        self.allow_download.setChecked(p.allow_download)
        # The model manager (Model ▸ Manage Models…): download with progress, check, resume, remove.
        self.manage_models = QPushButton("&Manage models…")
        self.manage_models.setToolTip("Download a DiffusionGemma checkpoint; see and remove installed ones")
        self.manage_models.clicked.connect(self._open_model_manager)

        # Rewriting: what a writer decides, in words.
        self.strength = QSlider(Qt.Orientation.Horizontal)
        self.strength.setRange(5, 100)  # percent of the selection re-noised (Preferences.rewrite_strength)
        self.strength.setSingleStep(5)
        self.strength.setPageStep(15)
        self.strength.setValue(round(p.rewrite_strength * 100))
        self.strength.setToolTip("Rewrite strength: the share of the selection re-noised before it develops")
        self.strength_words = wrapped_label("")
        self.strength.valueChanged.connect(self._describe_strength)
        self._describe_strength(self.strength.value())
        self.candidates = integer_box(p.candidates, 1, 8, "1 draft")
        self.candidates.setSuffix(" drafts")
        self.candidates.setToolTip(
            "Candidates, developed side by side in one batch; they also try shorter lengths (a gap: all of "
            "the length asked for, 2/3, 1/2, 1/3; a rewrite: around the selection's own length), so the "
            "model chooses the length."
        )
        self.fewer_drafts = QCheckBox("&Fewer when the model is slow here")
        self.fewer_drafts.setChecked(p.fewer_drafts_when_slow)
        self.fill_words = integer_box(words_for(p.fill_max_tokens), 1, words_for(1024))
        self.fill_words.setSuffix(" words")
        self.fill_words.setToolTip("The longest fill, in tokens: about 4 for every 3 words")
        self.random_seed = QCheckBox("A &different result every time")
        self.random_seed.setChecked(p.random_seed)
        self.random_seed.setToolTip("Random seed for every rewrite")
        self.seed = integer_box(p.seed, 0, 2**31 - 1)
        self.seed.setToolTip("The random seed used when results repeat")
        self.random_seed.toggled.connect(lambda random: self.seed.setEnabled(not random))
        self.seed.setEnabled(not p.random_seed)

        # Advanced: the sampler's own dials; 0 (or one step below it) is "the model's default".
        self.max_steps = integer_box(p.max_denoising_steps, 0, 1024, MODEL_DEFAULT)
        self.max_steps.setToolTip("Max denoising steps (the model's default is usually 48)")
        self.t_max = double_box(p.t_max, 10.0, 0.05)
        self.t_max.setToolTip("t_max: the sampling temperature of the first pass")
        self.t_min = double_box(p.t_min, 10.0, 0.05)
        self.t_min.setToolTip("t_min: the sampling temperature of the last pass")
        self.entropy_bound = double_box(p.entropy_bound, 10.0, 0.01, decimals=3)
        self.entropy_bound.setToolTip(
            "Entropy bound (nats): a pass accepts tokens, most certain first, while their summed entropy "
            "stays under it"
        )
        # Its own box: 0 is a real value (off), so "model default" sits one step below it.
        self.left_to_right_bias = double_box(0.0, 10.0, 0.1)
        self.left_to_right_bias.setMinimum(-0.1)
        self.left_to_right_bias.setValue(p.left_to_right_bias if p.left_to_right_bias >= 0 else -0.1)
        self.left_to_right_bias.setToolTip(
            "Left-to-right bias (nats per slot); 0 is the published DiffusionGemma sampler."
        )
        self.polish_rounds = integer_box(p.polish_rounds, -1, MAX_POLISH_ROUNDS, MODEL_DEFAULT)
        self.polish_rounds.setToolTip(
            "Polish rounds: the least likely tokens turn back into noise and develop again; 0 is the "
            "published sampler."
        )
        self.context_budget = integer_box(p.context_budget, 16, 32768)
        self.context_budget.setSuffix(" tokens")
        self.context_budget.setToolTip("Context budget: tokens of the text before the selection in the prompt")
        self.context_words = QLabel("")
        self.context_words.setWordWrap(True)
        self._builtin_cap = builtin_context_cap()
        self.context_budget.valueChanged.connect(self._describe_context)
        self._describe_context(self.context_budget.value())

        self.pass_display = integer_box(p.pass_display_ms, 0, 2000, "As fast as the model runs")
        self.pass_display.setSuffix(" ms")
        self.pass_display.setToolTip("The least time each denoising pass stays on screen")
        self.theme = combo_box(THEME_LABELS, p.theme)
        self.font_family = font_box(p.font_family)
        self.author_name = QLineEdit(p.author_name)
        self.author_name.setPlaceholderText("as it should appear on a title page")
        self.author_name.setMinimumWidth(self.author_name.fontMetrics().averageCharWidth() * 36)

        self.use_server = QCheckBox("&Edit on a team's server instead of this computer")
        self.use_server.setChecked(p.use_server)
        self.server_url = QLineEdit(p.server_url)
        self.server_url.setPlaceholderText("http://gpu-box:8000")
        self.server_model = QLineEdit(p.server_model)
        self.server_model.setPlaceholderText("the first model the server lists")
        self.server_key = QLineEdit((server_key.load_key(p.server_url.strip()) or "") if p.server_url.strip() else "")
        self.server_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.server_key.setPlaceholderText("none")
        self.server_passes = combo_box(PASS_LABELS, p.server_passes)
        self.test_connection = QPushButton("&Test connection")
        self.connection_result = QLabel("")
        self.connection_result.setWordWrap(True)
        self.key_storage = QLabel(server_key.describe_storage())
        self.key_storage.setWordWrap(True)
        self._tester = ConnectionTest(self)
        self._tester.done.connect(self._on_tested)
        self.test_connection.clicked.connect(self.run_connection_test)

        model_row = QHBoxLayout()
        model_row.addWidget(self.model_path, 1)
        model_row.addWidget(self.browse)
        model_form = form_layout()
        model_form.addRow("Model:", self.model_source)
        model_form.addRow("Location:", model_row)
        model_form.addRow("Run it on:", self.device)
        model_form.addRow(
            "Routed experts:",
            described(
                self.experts,
                "Only for Mixture-of-Experts models, such as the 26B-A4B, at 4 or 8 bit on a graphics card. "
                "In the computer's memory they let a 12–16 GB card run the 26B-A4B; what fits stays on the card.",
            ),
        )
        model_form.addRow("", self.allow_download)
        model_form.addRow("", self.manage_models)

        server_form = form_layout()
        server_form.addRow("", self.use_server)
        server_form.addRow("Address:", self.server_url)
        server_form.addRow("Model:", self.server_model)
        server_form.addRow("API key:", self.server_key)
        server_form.addRow("", self.key_storage)
        server_form.addRow("Passes:", self.server_passes)
        server_form.addRow(self.test_connection, self.connection_result)

        ends = QHBoxLayout()
        ends.addWidget(QLabel("Stay close"))
        ends.addStretch(1)
        ends.addWidget(QLabel("Rewrite freely"))
        strength_box = QVBoxLayout()
        strength_box.addWidget(self.strength)
        strength_box.addLayout(ends)
        strength_box.addWidget(self.strength_words)
        rewriting_form = form_layout()
        rewriting_form.addRow("How much to change:", strength_box)
        drafts_box = QVBoxLayout()
        drafts_box.addWidget(described(
            self.candidates,
            "Redraft writes this many drafts side by side, of different lengths, and shows the one it "
            "rates best first; Alt+Up and Alt+Down show the others. Each extra draft makes a rewrite "
            "slower on a computer without a graphics card.",
        ))
        drafts_box.addWidget(described(
            self.fewer_drafts,
            "Where all of them would take longer than about 20 seconds on this computer, Redraft writes "
            "as many as fit, so the first one reads sooner.",
        ))
        rewriting_form.addRow("Drafts:", drafts_box)
        rewriting_form.addRow(
            "Fill a gap with up to:",
            described(self.fill_words, "The longest text Fill Gap writes; the fill popup changes it too."),
        )
        rewriting_form.addRow(
            "Results:",
            described(
                self.random_seed,
                "Off, the same selection gives the same rewrite each time, so a good one can be found again "
                "(the number below picks which one).",
            ),
        )
        seed_row = QHBoxLayout()
        seed_row.addWidget(self.seed)
        seed_row.addStretch(1)
        rewriting_form.addRow("Repeat number:", seed_row)

        look_form = form_layout()
        look_form.addRow("Theme:", self.theme)
        look_form.addRow("Text font:", described(self.font_family, "The typeface of your text, and of its PDF."))
        look_form.addRow(
            "Show each pass for at least:",
            described(
                self.pass_display,
                "A fast computer finishes a rewrite in a blink; this keeps each pass on screen long enough "
                "to watch the text develop.",
            ),
        )

        documents_form = form_layout()
        documents_form.addRow("Your name:", described(
            self.author_name, "Signs the changes you mark (Edit ▸ Tracked Changes ▸ Mark Changes Since…) and your "
            "notes sent to Word as comments, and is the author of your PDFs, Word documents and e-books unless a "
            "document names its own (an author: line in the --- block at its top). Left empty, they name no author.",
        ))  # fmt: skip

        advanced_form = form_layout()
        advanced_form.addRow(
            wrapped_label(
                "How the model drafts, pass by pass. \u201cModel default\u201d uses what the model itself "
                "asks for; hover over a setting for its technical name."
            )
        )
        advanced_rows = (
            ("Most passes:", self.max_steps,
             "More passes give the model more chances to settle each word; fewer finish sooner."),
            ("Boldness at the start:", self.t_max,
             "How adventurous the first passes are in choosing words: higher is more surprising."),
            ("Boldness at the end:", self.t_min,
             "How adventurous the last passes are: lower settles on the most likely words."),
            ("Words settled per pass:", self.entropy_bound,
             "How unsure the model may be and still settle words in one pass: higher is faster but rougher."),
            ("Write from left to right:", self.left_to_right_bias,
             "How strongly each pass settles the earlier words first; small models stay more coherent with some."),
            ("Polish rounds:", self.polish_rounds,
             "After drafting, the least likely words are redone this many times; a few make small models "
             "write cleaner text."),
        )  # fmt: skip
        for label, control, sentence in advanced_rows:
            advanced_form.addRow(label, described(control, sentence))
        context_row = QHBoxLayout()
        context_row.addWidget(self.context_budget)
        context_row.addWidget(self.context_words, 1)
        context_box = QVBoxLayout()
        context_box.addLayout(context_row)
        context_box.addWidget(
            wrapped_label(
                "How much of the text before the selection the model reads; more keeps it in tune with your "
                "document but makes each rewrite start slower."
            )
        )
        advanced_form.addRow("Text read before:", context_box)

        self.page_list = QListWidget()
        self.page_list.setAccessibleName("Settings pages")
        self.page_list.setSpacing(3)
        self.stack = QStackedWidget()
        self.pages: dict[str, QScrollArea] = {}
        for title, form in (
            ("Model", model_form),
            ("Server", server_form),
            ("Rewriting", rewriting_form),
            ("Appearance", look_form),
            ("Documents", documents_form),
            ("Advanced", advanced_form),
        ):
            label_fields(form)  # a screen reader names each setting by its row's label
            page = QWidget()
            page.setLayout(form)
            scroll = QScrollArea()
            scroll.setWidget(page)
            scroll.setWidgetResizable(True)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the text wraps
            self.pages[title] = scroll
            self.stack.addWidget(scroll)
            self.page_list.addItem(title)
        self.page_list.setFixedWidth(self.page_list.sizeHintForColumn(0) + 2 * self.page_list.frameWidth() + 32)
        self.page_list.currentRowChanged.connect(self.stack.setCurrentIndex)
        self.page_list.setCurrentRow(0)

        pages = QHBoxLayout()
        pages.addWidget(self.page_list)
        pages.addWidget(self.stack, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(pages, 1)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        restore = self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        restore.setText("&Restore Defaults")  # Qt's label has no letter
        restore.clicked.connect(self.restore_defaults)
        layout.addWidget(self.buttons)
        self.model_source.currentIndexChanged.connect(self._update_model_row)
        self.device.currentIndexChanged.connect(self._update_model_row)
        self._update_model_row()
        self.resize(fitted(self, PREFERRED_SIZE))

    def show_page(self, title: str) -> None:
        """Turn to a page by its title (Model, Server, Rewriting, Appearance, Documents, Advanced)."""
        self.page_list.setCurrentRow(list(self.pages).index(title))

    def _describe_strength(self, percent: int) -> None:
        # What the engine does (model.edit.canvas.keep_original): a draft's canvas starts from this share of
        # the selection's tokens, the rest noise, and every slot stays free: the model may replace any of the
        # words it started from. Only Keep Words holds words exactly, so the sentence says so.
        if percent >= 100:
            words = "Free: each draft is written anew from the text around it, not from your words."
        else:
            feel = "Stay close" if percent <= 45 else ("Balanced" if percent <= 80 else "Free")
            words = (
                f"{feel}: each draft starts from about {100 - percent}% of your words (the rest noise), and the "
                "model may still change any of them. To keep words exactly, mark them: Rewrite ▸ Keep Words (Ctrl+K)."
            )
        self.strength_words.setText(words)

    def _describe_context(self, tokens: int) -> None:
        cap = self._builtin_cap if self.model_source.currentData() == "builtin" else None
        self.context_words.setText(context_words(tokens, cap))

    def run_connection_test(self) -> None:
        """Ask the server what it serves (off the GUI thread); the answer appears beside the button."""
        url = self.server_url.text().strip()
        if not url:
            self._on_tested("✗ enter the server's address first", False)
            return
        self.test_connection.setEnabled(False)
        self.connection_result.setText("Connecting…")
        self._tester.start(url, self.server_model.text().strip() or None, self.server_key.text() or None)

    def _on_tested(self, line: str, ok: bool) -> None:
        self.test_connection.setEnabled(True)
        self.connection_result.setText(line)
        self.connection_ok = ok

    def api_key(self) -> str:
        """The key typed here; the window stores it (app/model_sources/server_key.py), never with the preferences."""
        return self.server_key.text()

    def _update_model_row(self) -> None:
        source = self.model_source.currentData()
        self.model_path.setEnabled(source != "builtin")
        self.browse.setEnabled(source == "folder")
        # On the processor alone there is no graphics card to keep experts off; the built-in model has none.
        self.experts.setEnabled(source != "builtin" and self.device.currentData() != "cpu")
        self._describe_context(self.context_budget.value())

    def _open_model_manager(self) -> None:
        """The window's model manager, modal over Settings; a model chosen there ("Use this model") shows here
        when it closes, so OK keeps it instead of writing the old choice back."""
        window = self.parentWidget()
        show = getattr(window, "show_model_manager", None)
        if show is None:
            self.manage_models.setToolTip("The model manager opens from the editor's window (Model ▸ Manage Models…)")
            return
        manager = show(parent=self)

        def follow_choice() -> None:
            chosen = getattr(getattr(window, "prefs", None), "model", "")
            if chosen and chosen != "builtin":
                self.model_source.setCurrentIndex(self.model_source.findData("hub"))
                self.model_path.setText(chosen)

        manager.finished.connect(lambda _result: follow_choice())

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a model folder", self.model_path.text())
        if folder:
            self.model_path.setText(folder)

    def restore_defaults(self) -> None:
        defaults = Preferences()
        # Who the writer is is no preference to reset.
        kept = replace(defaults, recent_files=self.original.recent_files, zoom=self.original.zoom,
                       author_name=self.original.author_name)  # fmt: skip
        fresh = SettingsDialog(kept)
        self._copy_from(fresh)

    def _copy_from(self, other: SettingsDialog) -> None:
        self.model_source.setCurrentIndex(other.model_source.currentIndex())
        self.model_path.setText(other.model_path.text())
        self.device.setCurrentIndex(other.device.currentIndex())
        self.experts.setCurrentIndex(other.experts.currentIndex())
        self.allow_download.setChecked(other.allow_download.isChecked())
        numbers = (  # spin boxes and the strength slider
            "max_steps",
            "t_max",
            "t_min",
            "entropy_bound",
            "left_to_right_bias",
            "polish_rounds",
            "strength",
            "candidates",
            "seed",
            "context_budget",
            "fill_words",
        )
        for name in numbers:
            getattr(self, name).setValue(getattr(other, name).value())
        self.pass_display.setValue(other.pass_display.value())
        self.random_seed.setChecked(other.random_seed.isChecked())
        self.fewer_drafts.setChecked(other.fewer_drafts.isChecked())
        self.theme.setCurrentIndex(other.theme.currentIndex())
        self.font_family.setCurrentIndex(max(0, self.font_family.findData(other.font_family.currentData())))
        self.use_server.setChecked(other.use_server.isChecked())
        self.server_url.setText(other.server_url.text())
        self.server_model.setText(other.server_model.text())
        self.server_passes.setCurrentIndex(other.server_passes.currentIndex())
        self.author_name.setText(other.author_name.text())

    def preferences(self) -> Preferences:
        source = self.model_source.currentData()
        model = (
            "builtin"
            if source == "builtin" or not self.model_path.text().strip()
            else self.model_path.text().strip()
        )
        return replace(
            self.original,
            model=model,
            device=str(self.device.currentData()),
            experts=str(self.experts.currentData()),
            allow_download=self.allow_download.isChecked(),
            max_denoising_steps=self.max_steps.value(),
            t_max=round(self.t_max.value(), 4),
            t_min=round(self.t_min.value(), 4),
            entropy_bound=round(self.entropy_bound.value(), 4),
            left_to_right_bias=round(bias, 4) if (bias := self.left_to_right_bias.value()) >= 0 else -1.0,
            polish_rounds=self.polish_rounds.value(),
            candidates=self.candidates.value(),
            fewer_drafts_when_slow=self.fewer_drafts.isChecked(),
            # In tokens, as the popup stores it; unchanged words keep the exact number saved.
            fill_max_tokens=self.original.fill_max_tokens
            if (words := self.fill_words.value()) == words_for(self.original.fill_max_tokens)
            else round(words / WORDS_PER_TOKEN),
            rewrite_strength=self.strength.value() / 100,
            random_seed=self.random_seed.isChecked(),
            seed=self.seed.value(),
            context_budget=self.context_budget.value(),
            pass_display_ms=self.pass_display.value(),
            theme=str(self.theme.currentData()),
            font_family=str(self.font_family.currentData()),
            use_server=self.use_server.isChecked(),
            server_url=self.server_url.text().strip(),
            server_model=self.server_model.text().strip(),
            server_passes=str(self.server_passes.currentData()),
            author_name=self.author_name.text(),
        ).sanitized()
