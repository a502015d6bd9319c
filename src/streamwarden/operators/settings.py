"""The base of an operator's own settings: the ``[<operator name>]`` section, with the outputs
the operator writes (each a ``[sinks.<output>]`` section of the config). Each operator's package
defines its model beside the operator (``operators/<name>/settings.py``)."""

from __future__ import annotations

from collections.abc import Collection
from typing import ClassVar

from streamwarden.settings.base import Settings

__all__ = ["DEAD_LETTERS", "OperatorSettings"]

#: The output every operator writes: records that could not be used, each with its reason.
DEAD_LETTERS = "dead_letters"


class OperatorSettings(Settings):
    """The config section of an operator, ``[<operator name>]``: its parameters, and the
    outputs it writes besides ``dead_letters`` (checked at load against ``[sinks.<output>]``);
    the operator (:class:`~streamwarden.operators.base.Operator`) names it as its
    ``settings_model``."""

    #: Sinks the operator needs: ``[sinks.<name>]`` must be given.
    outputs: ClassVar[tuple[str, ...]] = ()
    #: Sinks the operator may write: given or not, as :meth:`check_sinks` decides.
    optional_outputs: ClassVar[tuple[str, ...]] = ()
    #: What the section must hold when the operator runs without it (None: it has defaults).
    needs: ClassVar[str | None] = None
    #: Whether the operator reads several sources (``[sources.<name>]``, each with its
    #: ``[schemas.<name>]``) instead of one (``[source]`` and ``[schema]``).
    several_sources: ClassVar[bool] = False

    @classmethod
    def all_outputs(cls) -> tuple[str, ...]:
        """Every output the operator may write besides dead letters, the needed ones first
        (the order of the columns of the console's batch line)."""
        return (*cls.outputs, *cls.optional_outputs)

    def check_sinks(self, configured: Collection[str]) -> None:
        """Raises ValueError if the optional sinks given do not fit the parameters."""
