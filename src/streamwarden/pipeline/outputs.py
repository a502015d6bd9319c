"""Reading a pipeline's outputs back: what each sink holds, and the accounting of a run.

The accounting of a run is its operator's (:func:`~streamwarden.operators.base.account_run`);
the per-operator readers are kept here under their old names for scripts and tests that
reconcile one output folder at a time.
"""

from streamwarden.operators.base import account_run
from streamwarden.operators.patterns.accounting import PatternAccounting, account_patterns
from streamwarden.operators.sessions.accounting import Accounting, account, final_sessions
from streamwarden.sinks.parquet import read_output

__all__ = [
    "Accounting",
    "PatternAccounting",
    "account",
    "account_patterns",
    "account_run",
    "final_sessions",
    "read_output",
]
