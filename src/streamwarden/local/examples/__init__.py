"""The example data sets of ``examples/*.toml``, one generator each: ``pageviews`` (the traffic
generator of :mod:`streamwarden.local.generator`), ``payments`` (sessions of card payments) and
``logins`` (login attempts, some of them attacks). Each writes JSON-lines landing files,
deterministically (the same spec and seed give byte-identical files), and returns a summary of
what it wrote that is the truth by construction: the records each reject reason must take, and
what the example's pipeline must output (:mod:`streamwarden.local.examples.catalog` lists them
for the command line).

These modules are the only ones that name the examples' fields; the pipeline learns them from
the config's ``[schema]``. The package imports nothing here, so that the pageview generator can
use :mod:`streamwarden.local.examples.landing` without a cycle.
"""
