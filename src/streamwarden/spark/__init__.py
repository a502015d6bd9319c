"""Everything that talks to Spark directly: the session, the engine jar, error translation."""
