"""The ``streamwarden`` command line."""
