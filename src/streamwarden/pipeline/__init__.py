"""The pipeline runner: source -> validation -> operator -> sinks, with one checkpoint."""

from streamwarden.pipeline.runner import Pipeline, RunResult

__all__ = ["Pipeline", "RunResult"]
