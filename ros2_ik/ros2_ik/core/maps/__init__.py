"""Many solves: batch IK, on processes or Ray, workspace samples, capability maps, datasets.

:mod:`.batch` (batch IK over worker processes), :mod:`.batch_ray` (the same on Ray),
:mod:`.workspace` (forward-sampled reach), :mod:`.capability` (capability maps),
:mod:`.scene` (a map's planning scene) and :mod:`.dataset` (IK / FK datasets).
"""
