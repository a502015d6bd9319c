"""The history store: closed sessions' summaries kept outside streaming state (lesson L8), from
which late events beyond the in-state lateness are merged (``[sessions] history_lateness``).
The contract is in ``history.base``, each kind of store beside it."""

from streamwarden.history import delta as _delta  # noqa: F401  (registers its kind)
from streamwarden.history import postgres as _postgres  # noqa: F401  (registers its kind)
from streamwarden.history.base import HISTORY_KINDS, HistoryKind, HistoryStore, Wanted

__all__ = ["HISTORY_KINDS", "HistoryKind", "HistoryStore", "Wanted"]
