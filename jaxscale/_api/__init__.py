"""The public verbs and their result objects, one module per verb. Import them from
:mod:`jaxscale` (``from jaxscale import fit``), which loads this package lazily."""
