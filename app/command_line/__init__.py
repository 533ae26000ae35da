"""The ``redraft`` command's parts behind ``app/cli.py``: the fill, rewrite and doctor commands, an installed
copy's self-test, and the check for Qt's X libraries that runs before Qt loads."""
