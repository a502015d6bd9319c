"""Offline tools on a streaming checkpoint folder: inspect its state, rescale its partitions.

``files`` reads the layout without Spark; ``state_reader`` wraps Spark's ``state-metadata`` and
``statestore`` sources; ``inspect`` and ``rescale`` build on both; ``run_lock`` tells whether a
pipeline is running on a checkpoint.
"""
