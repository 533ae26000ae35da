"""The window and its actions: ``MainWindow`` with its menus, toolbar and the model's loading, the File menu's
commands, the text widget with the live span a rewrite develops in, its Markdown cues, and the light and dark
themes."""
