"""The building blocks of settings: value types (durations, sizes, paths), units, defaults
shared by the config and the APIs, secrets, the shared ``[kafka]`` connection, the base of every
part's own settings model and the run context a part receives. The config of a whole pipeline is
assembled from these in :mod:`streamwarden.config`."""
