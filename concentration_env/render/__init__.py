"""Drawing the table: text, pictures and the pygame window (no game logic)."""
