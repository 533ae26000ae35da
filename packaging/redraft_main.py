"""The frozen app's entry point (packaging/redraft.spec): the same ``main`` as the ``redraft`` command."""

from app.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
