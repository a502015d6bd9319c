"""What runs only on this machine, for demos, tests and benchmarks, never in a pipeline: the
throwaway local servers (a Kafka broker, PostgreSQL, a Spark standalone cluster, on 127.0.0.1
with free ports, stopped by PID), the traffic generator that writes pageview landing files, and
the demos ``streamwarden demo`` runs. Nothing outside this package and the command line imports
it."""
