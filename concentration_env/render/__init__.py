"""Drawing the table, with no game logic: text, pictures and the pygame window.

Modules, from the bottom up:

- ``coordinates``: grid names of positions ("B7") and parsing them back.
- ``text``: the table as text (``render_mode="ansi"``).
- ``font``: the built-in bitmap font and the pixel painter.
- ``sprites``: card outlines, backs and faces.
- ``shapes``: where cards lie in a grid or a fancy table shape.
- ``frame``: whole frames, a status band over tables (``render_mode="rgb_array"``).
- ``window``: the pygame window (``render_mode="human"``) and render-mode checks.
"""
