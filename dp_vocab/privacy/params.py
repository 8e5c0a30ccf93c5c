"""Validation of privacy parameters (design invariant 5)."""

from __future__ import annotations

import math
import numbers

from ..errors import ParameterError


def check_epsilon(epsilon: object, name: str = "epsilon") -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise ParameterError(name, epsilon, "a real number > 0")
    eps = float(epsilon)
    if not (eps > 0 and math.isfinite(eps)):
        raise ParameterError(name, epsilon, "a finite real number > 0")
    return eps


def check_delta(delta: object, name: str = "delta", upper: float = 0.5) -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise ParameterError(name, delta, f"a real number in (0, {upper}]")
    d = float(delta)
    if not (0.0 < d <= upper):
        raise ParameterError(
            name, delta, f"a real number in (0, {upper}]",
            "Typical values are 1e-5 to 1e-8, well below 1/(number of users).")
    return d


def check_positive_int(value: object, name: str, minimum: int = 1,
                       maximum: int | None = None) -> int:
    allowed = f"an integer >= {minimum}" if maximum is None else \
        f"an integer from {minimum} to {maximum:,}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ParameterError(name, value, allowed)
    if int(value) < minimum or (maximum is not None and int(value) > maximum):
        raise ParameterError(name, value, allowed)
    return int(value)


def check_nonnegative(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            float(value) >= 0 and math.isfinite(float(value))):
        raise ParameterError(name, value, "a finite real number >= 0")
    return float(value)


def check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ParameterError(name, value, "one of " + ", ".join(repr(c) for c in choices))
    return str(value)
