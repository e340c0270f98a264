from baselines.optimal import *
from concentration_env import Rules
for pairs in (2,3,4,26,52):
    r = Rules(deck='pictures', pairs=pairs)
    print(pairs, expected_moves(r), expected_moves(r, 'greedy'))
for ranks in (1,2,13):
    r=Rules(packs=2, matching='identical', backs='checkerboard', ranks=ranks)
    print(ranks, expected_moves(r, exact=ranks<2), expected_moves(r,'greedy', exact=ranks<2), expected_moves(r,'safe_first'))
