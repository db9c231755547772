"""The conformance harness and suite: drive any implementation of Kafka's on-disk log
through the contract of DESIGN.md §2 and report, requirement by requirement, where it
differs from the spec.

* ``adapter`` and ``protocol``: the contract (in-process methods, JSON-lines messages,
  JSON Schemas in ``schemas/``); ``transport``: the two drivers; ``testee``: serve an
  in-process implementation over stdio; ``reference``: the reference behind the contract.
"""
