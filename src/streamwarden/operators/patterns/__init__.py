"""Keyed pattern detection (CEP) with a deadline on every partial match."""

from streamwarden.operators.patterns.api import DetectResult, PatternOptions, detect
from streamwarden.operators.patterns.compile import CompiledPattern, compile_pattern
from streamwarden.operators.patterns.pattern import Contiguity, Pattern
from streamwarden.operators.patterns.skip import AfterMatch

__all__ = [
    "AfterMatch",
    "CompiledPattern",
    "Contiguity",
    "DetectResult",
    "Pattern",
    "PatternOptions",
    "compile_pattern",
    "detect",
]
