"""Kafka plumbing: the JVM jar sets (Spark's connector, a broker) and a real local broker.

``jars.connector_jars()`` gives the jars Spark's ``kafka`` source and sink need on
``spark.jars``; ``local_broker.LocalBroker`` runs a single-node KRaft broker on 127.0.0.1 for
tests and local runs. Both use the jar sets ``kafka`` and ``kafka-broker``, whose exact jars
ship with the package (``spark/jar_sets.txt``): an installed package fetches a missing set from
Maven Central into the user's cache on first need, or ahead with ``streamwarden jars --fetch``;
in the source tree ``make setup`` fetches them into ``.cache/jars/``
(:mod:`streamwarden.spark.jar_sets`). Nothing is imported here, so that reading the jars does
not load the Kafka client.
"""
