"""What a result holding a fitted law offers the verbs that take one (:func:`jaxscale.allocate`,
:func:`jaxscale.sensitivity`): its law, its point parameters and draws of them, whatever verb made
it. A verb reads these attributes instead of asking which verb's class it was given."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from jaxscale.determinacy.identifiability import Identifiability
    from jaxscale.fitting.approach3 import FitResult
    from jaxscale.fitting.bootstrap import BootstrapResult
    from jaxscale.laws.draws import Draws
    from jaxscale.laws.law import Law
    from jaxscale.tables.table import RunsTable


@runtime_checkable
class Fitted(Protocol):
    """A fitted law: :class:`~jaxscale.FitReport` (its fit, bands over its bootstrap refits) and
    :class:`~jaxscale.Posterior` (its draws' median, bands over its draws) are ``Fitted``.

    Attributes:
        law: the law fitted.
        params: its point parameters, the law's NamedTuple.
        draws: draws of the parameters (bootstrap refits, posterior draws), or None.
        runs: the runs the law was fitted to, or None.
    """

    @property
    def law(self) -> Law: ...

    @property
    def params(self) -> Any: ...

    @property
    def draws(self) -> Draws | None: ...

    @property
    def runs(self) -> RunsTable | None: ...


@runtime_checkable
class FittedByApproach3(Fitted, Protocol):
    """A :class:`Fitted` law whose point is an Approach-3 fit, which a study can differentiate
    run by run (:func:`jaxscale.sensitivity`: each run's influence): :class:`~jaxscale.FitReport`.

    Attributes:
        fit: the Approach-3 fit.
        refits: its bootstrap refits, or None.
        identifiability: what its runs determine, or None where not judged.
    """

    @property
    def fit(self) -> FitResult: ...

    @property
    def refits(self) -> BootstrapResult | None: ...

    @property
    def identifiability(self) -> Identifiability | None: ...
