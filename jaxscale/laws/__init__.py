"""Scaling laws as pure JAX functions, each a :class:`~jaxscale.laws.law.Law` written once:
:mod:`.chinchilla`, :mod:`.kaplan`, :mod:`.pearce_song` (Eq. 15), :mod:`.kaplan_irreducible`,
:mod:`.word2vec_error`; :mod:`.registry` finds them by name; :mod:`.table_a9` holds Chinchilla's
model configurations. Parameters and FLOPs are counted in :mod:`jaxscale.runs.accounting`."""
