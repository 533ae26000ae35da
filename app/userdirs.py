"""Where Redraft keeps a writer's own files, in each platform's usual places (platformdirs).

Installed builds put nothing of the writer's beside the program: /opt/redraft and Program Files are
replaced on every update and removed on uninstall, while these folders stay.

    Linux                              Windows
    settings   ~/.config/Redraft          %APPDATA%\\Redraft   (Redraft.ini, app/settings.py)
    logs       ~/.local/state/Redraft/log %LOCALAPPDATA%\\Redraft\\Logs
    models     ~/.local/share/Redraft/models
    recovery   ~/.local/state/Redraft/recovery
    gpu torch  ~/.local/share/Redraft/gpu-torch  (``redraft enable-gpu``, app/model_sources/gpu_env.py)

``REDRAFT_HOME`` moves all of them under one folder (tests, portable installs).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "Redraft"


@dataclass(frozen=True)
class UserDirs:
    settings: Path
    logs: Path
    models: Path
    recovery: Path
    data: Path

    def as_rows(self) -> list[tuple[str, Path]]:
        return [
            ("settings", self.settings),
            ("logs", self.logs),
            ("models", self.models),
            ("recovery", self.recovery),
            ("data", self.data),
        ]


def user_dirs() -> UserDirs:
    """The writer's folders (not created here: each is made when something is first written to it)."""
    home = os.environ.get("REDRAFT_HOME")
    if home:
        root = Path(home)
        return UserDirs(root / "settings", root / "logs", root / "models", root / "recovery", root / "data")
    import platformdirs

    # appauthor=False: no "Redraft\Redraft" doubling on Windows.
    data = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    state = Path(platformdirs.user_state_dir(APP_NAME, appauthor=False))
    return UserDirs(
        # roaming: Windows keeps a user's settings in %APPDATA% (where Qt's own place for them is, too).
        settings=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False, roaming=True)),
        logs=Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
        models=data / "models",
        recovery=state / "recovery",
        data=data,
    )


LOG_NAME = "redraft.log"
LOG_LIMIT = 1_000_000  # bytes; the previous log is kept as redraft.log.1


def log_when_windowless() -> Path | None:
    """Give a program without a console somewhere to write: stdout and stderr into the log folder.

    A frozen Windows build started from the Start menu (redraftw.exe, pythonw.exe) has no stdout or
    stderr at all, so tracebacks and warnings would vanish; they go to ``logs/redraft.log`` instead.
    Returns the log file, or None where the streams already lead somewhere.
    """
    if sys.stderr is not None and sys.stdout is not None:
        return None
    log = user_dirs().logs / LOG_NAME
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        if log.exists() and log.stat().st_size > LOG_LIMIT:
            log.replace(log.with_name(LOG_NAME + ".1"))
        stream = open(log, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (open for the process's life)
    except OSError:
        return None  # a read-only profile: run without a log rather than not at all
    if sys.stderr is None:
        sys.stderr = stream
    if sys.stdout is None:
        sys.stdout = stream
    return log
