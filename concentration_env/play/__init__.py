"""Playing games outside training: :mod:`.seated` (one game between seats, over the envs),
:mod:`.session` (a series of games), :mod:`.terminal` (``concentration-play``) and
:mod:`.gif` (animated GIFs of games)."""
