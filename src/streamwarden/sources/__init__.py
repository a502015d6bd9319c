"""Sources: landing directories of files, the idle ticker, and the traffic generator."""
