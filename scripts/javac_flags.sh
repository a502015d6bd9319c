# The javac flags of the engine and of its tests, sourced by build_engine.sh and test_engine.sh
# so that both compile alike. Every lint is on and a warning fails the build, except `path`: it
# only reports the Class-Path entries of third-party jars in the pyspark wheel (derby's locale
# jars name siblings the wheel does not ship), which are not ours to fix. No annotation
# processing: the engine uses none, and javac would otherwise look for processors in every jar
# on the class path (and warn that none claimed JUnit's annotations).
# shellcheck disable=SC2034  # read by the scripts that source this file
JAVAC_FLAGS=(-Xlint:all,-path -Werror -proc:none --release 17)
