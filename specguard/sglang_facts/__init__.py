"""What specguard knows about SGLang itself, one table per fact.

- ``changes``: every version boundary the rules, the resolution, memory and the runtime use, each a
  named :class:`~specguard.sglang_facts.changes.Change` with the first release that has it and the
  release file it was read from. No ``Version("0.x")`` literal lives anywhere else (a test holds it).
- ``algorithms``: one row per speculative algorithm SGLang accepts, its properties with their
  sources, and the named sets the rules read (``DRAFT_CHECKPOINT_ALGORITHMS``, ...).
"""
