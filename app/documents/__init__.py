"""The writer's documents and their safety: reading and writing files byte for byte, autosave, the recovery
records a crash leaves behind, and the watch for changes made on disk by another program."""
