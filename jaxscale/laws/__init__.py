"""Scaling laws, each a :class:`Law` written once in its own module, found by name.

- :func:`names` lists the laws; :func:`get` returns one by name (``get("chinchilla")``); every
  command and verb that takes ``law=`` takes any of these names.
- One module per law: :mod:`.chinchilla` (Hoffmann et al. Eq. 2, and the tied-exponent variant),
  :mod:`.kaplan` (Kaplan et al. Eq. 1.5 and 1.6), :mod:`.kaplan_irreducible`,
  :mod:`.pearce_song` (Eq. 15, the law in non-embedding terms), :mod:`.data_constrained`
  (Muennighoff et al.), :mod:`.lr_annealing` (Tissue et al.), :mod:`.chinchilla_annealing`,
  :mod:`.word2vec_error`; :mod:`.registry` finds them.
- :mod:`.draws` holds :class:`Draws`, the parameter sets of one law that fits' bootstraps and
  posteriors share; :mod:`.table_a9` holds Chinchilla's model configurations;
  :mod:`.schedule_areas` the learning-rate schedule's areas. Parameters and FLOPs are counted in
  :mod:`jaxscale.tables.accounting`.
"""

from jaxscale.laws.draws import Draws
from jaxscale.laws.law import Law
from jaxscale.laws.registry import law_by_name as get
from jaxscale.laws.registry import laws as _laws


def names() -> list[str]:
    """The names of every law, sorted (each a valid ``law=`` argument)."""
    return list(_laws())


__all__ = ["Draws", "Law", "get", "names"]
