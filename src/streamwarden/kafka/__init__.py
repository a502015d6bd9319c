"""Kafka plumbing: the JVM jar sets (Spark's connector, a broker) and a real local broker.

``jars.connector_jars()`` gives the jars Spark's ``kafka`` source and sink need on
``spark.jars``; ``local_broker.LocalBroker`` runs a single-node KRaft broker on 127.0.0.1 for
tests and local runs. Both use jar sets that ``make setup`` fetches (``scripts/fetch_jars.sh
kafka`` and ``kafka-broker``). Nothing is imported here, so that reading the jars does not load
the Kafka client.
"""
