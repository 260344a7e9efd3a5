"""specguard: validate, correct and launch speculative-decoding configurations.

The check path (``specguard check``) imports neither torch nor sglang; the bundled reference
runtime lives in ``specguard.runtime`` and is only imported when it runs.
"""

__version__ = "0.1.0"
