"""What the main window opens beside the text, one module each: Settings, the recovery
offer at start, the popups at the cursor, the notice bar, and what the panels beside the text share. Only
``recovery.recover_into`` reaches back into the window, through ``load_unsaved`` (app/window/file_commands.py);
the others know just the editor."""
