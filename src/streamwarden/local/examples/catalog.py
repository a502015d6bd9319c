"""The examples as the command line offers them: their configs in ``examples/``, their own
landing folders (as each config's ``[source] path`` says; for an example reading several
sources, the folder holding one landing folder per source, ``<landing>/<source name>``, as its
``[sources.<name>] path`` say), and their generators.

``examples/`` is the one of the current folder when it holds the example configs (a checkout's
root, where the README's commands run), else the one of the checkout this package runs from.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

from streamwarden.errors import UsageError

__all__ = [
    "EXAMPLES",
    "Example",
    "GeneratedExample",
    "example_landing",
    "examples_folder",
    "generate_example",
]


@dataclass(frozen=True)
class Example:
    """One example: its config file in ``examples/`` and what it shows."""

    name: str
    config: str
    about: str


#: The examples, by name; ``pageviews`` is the default of the demo and of ``generate``.
EXAMPLES = {
    "pageviews": Example("pageviews", "pageviews.toml", "pageviews of users, sessionized"),
    "payments": Example(
        "payments",
        "payments.toml",
        "card payments of accounts, sessionized with totals, late payments merging sessions",
    ),
    "logins": Example(
        "logins", "logins.toml", "login attempts: three failures then a success within 10m"
    ),
    "alerts": Example(
        "alerts",
        "payment_alerts.toml",
        "card payments of accounts, a Python processor alerting on outsized ones",
    ),
    "windows": Example(
        "windows",
        "merchant_windows.toml",
        "card payments counted and summed per merchant in 5-minute windows",
    ),
    "refunds": Example(
        "refunds",
        "refunds_join.toml",
        "card payments joined with their refunds within 2 hours (two sources)",
    ),
}


class GeneratedExample(Protocol):
    """What a generator's summary tells the command line."""

    records: int
    files: list[Path]

    @property
    def first_event(self) -> datetime: ...

    @property
    def last_event(self) -> datetime: ...

    def describe(self) -> str: ...


def examples_folder() -> Path:
    """The folder of the example configs (see the module's description)."""
    here = Path("examples")
    checkout = Path(__file__).resolve().parents[4] / "examples"
    for folder in (here, checkout):
        if all((folder / e.config).is_file() for e in EXAMPLES.values()):
            return folder
    raise UsageError(
        "no examples/ folder with the example configs here: run from the root of a checkout "
        "of streamwarden, or give the landing folder to write into"
    )


def example_landing(name: str, examples: Path | None = None) -> Path:
    """The landing folder example ``name``'s config reads: its ``[source] path``, or the
    folder of its ``[sources.<name>] path``, against ``examples`` (:func:`examples_folder` by
    default)."""
    folder = examples or examples_folder()
    path = folder / EXAMPLES[name].config
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
        if "sources" in config:
            landings = {Path(str(s["path"])).parent for s in config["sources"].values()}
            (landing,) = landings  # the generator writes <landing>/<source name>
            return folder / landing
        return folder / str(config["source"]["path"])
    except (OSError, tomllib.TOMLDecodeError, KeyError, AttributeError, ValueError) as exc:
        raise UsageError(f"cannot read the landing folder of {str(path)!r}: {exc}") from None


def generate_example(
    name: str,
    landing: Path,
    *,
    seed: int,
    start: datetime | None = None,
    size: int | None = None,
    files: int | None = None,
    file_prefix: str | None = None,
    mtime_after: float = 0.0,
) -> GeneratedExample:
    """Writes the data of example ``payments`` (or ``alerts`` and ``windows``, over payments),
    ``logins`` or ``refunds`` (into ``landing/payments`` and ``landing/refunds``) into
    ``landing``: ``size`` accounts or users in ``files`` files from ``start`` (the
    generator's defaults where None).
    (The pageview generator has options of its own: :mod:`streamwarden.local.generator`.)"""
    prefix = file_prefix or name
    if name in ("payments", "alerts", "windows"):  # alerts and windows read payments
        from streamwarden.local.examples.payments import PaymentsSpec, generate_payments

        payments = PaymentsSpec(
            accounts=size or PaymentsSpec.accounts,
            files=files or PaymentsSpec.files,
            seed=seed,
            start=start or PaymentsSpec.start,
        )
        return generate_payments(payments, landing, file_prefix=prefix, mtime_after=mtime_after)
    if name == "logins":
        from streamwarden.local.examples.logins import LoginsSpec, generate_logins

        logins = LoginsSpec(
            users=size or LoginsSpec.users,
            files=files or LoginsSpec.files,
            seed=seed,
            start=start or LoginsSpec.start,
        )
        return generate_logins(logins, landing, file_prefix=prefix, mtime_after=mtime_after)
    if name == "refunds":
        from streamwarden.local.examples.refunds import RefundsSpec, generate_refunds

        refunds = RefundsSpec(
            accounts=size or RefundsSpec.accounts,
            files=files or RefundsSpec.files,
            seed=seed,
            start=start or RefundsSpec.start,
        )
        return generate_refunds(refunds, landing, file_prefix=prefix, mtime_after=mtime_after)
    raise UsageError(f"no generator of example {name!r} here; pageviews has its own")
