"""One plan per run: what a config's pipeline is made of, worked out once (:class:`PipelinePlan`),
and read by ``run``, ``submit``, ``doctor``, ``jars``, ``maintain`` and the Python API alike."""

from streamwarden.plan.plan import PipelinePlan

__all__ = ["PipelinePlan"]
