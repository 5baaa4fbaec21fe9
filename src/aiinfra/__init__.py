"""aiinfra: plan, simulate and price AI infrastructure.

Every number traces to a formula (paper cited at the function) or to a catalog row with a source.
"""

__version__ = "0.1.0"
