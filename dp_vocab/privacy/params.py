"""Validation of privacy parameters (design invariant 5).

Every parameter is checked here before any data is read: its type (a bool is not a number, an
integer too large for a double is refused, not an OverflowError), finiteness and range. The
ranges are wide enough for any meaningful use and narrow enough that every derived noise scale,
threshold and record value is a finite double (``tests/test_parameters.py`` checks this over
every registered function with hostile values).
"""

from __future__ import annotations

import math
import numbers

from ..errors import ParameterError

# ε beyond 100 protects nothing (e^100), below 1e-6 releases nothing; inside, every threshold
# and scale stays finite (Δ0/ε ≤ 1e12). δ below 1e-100 keeps δ_t(δ) = δ/t (t ≤ 10⁶) a normal double.
EPSILON_RANGE = (1e-6, 100.0)
DELTA_MIN = 1e-100


def check_real(value: object, name: str, low: float, high: float, *, low_open: bool = False,
               high_open: bool = False, allowed: str | None = None,
               fix: str | None = None) -> float:
    """``value`` as a float if it is a finite real number in the interval from ``low`` to
    ``high`` (closed unless ``low_open`` / ``high_open``); else a ParameterError. Bools, other
    types, NaN, ±inf and integers beyond a double's range are refused."""
    if allowed is None:
        allowed = (f"a real number in {'(' if low_open else '['}{low:g}, "
                   f"{high:g}{')' if high_open else ']'}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, value, allowed, fix)
    try:
        x = float(value)
    except (OverflowError, TypeError, ValueError):   # an int beyond 1.8e308
        raise ParameterError(name, value, allowed, fix) from None
    inside = (low < x if low_open else low <= x) and (x < high if high_open else x <= high)
    if not (math.isfinite(x) and inside):
        raise ParameterError(name, value, allowed, fix)
    return x


def check_epsilon(epsilon: object, name: str = "epsilon",
                  maximum: float = EPSILON_RANGE[1]) -> float:
    low = EPSILON_RANGE[0]
    return check_real(epsilon, name, low, maximum,
                      allowed=f"a real number from {low:g} to {maximum:g}",
                      fix="Typical values are 0.1 to 10.")


def check_delta(delta: object, name: str = "delta", upper: float = 0.5) -> float:
    return check_real(delta, name, DELTA_MIN, upper,
                      allowed=f"a real number from {DELTA_MIN:g} to {upper:g}",
                      fix="Typical values are 1e-5 to 1e-8, well below 1/(number of users).")


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


def check_nonnegative(value: object, name: str, maximum: float = 1e3) -> float:
    """A finite real number from 0 to ``maximum`` (default 1000: α and similar multiples of a
    noise scale, far beyond any useful value)."""
    return check_real(value, name, 0.0, maximum,
                      allowed=f"a finite real number from 0 to {maximum:g}")


def check_bool(value: object, name: str) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(name, value, "true or false")
    return value


def check_name(value: object, name: str) -> str:
    """A non-empty string (a field or column name)."""
    if not isinstance(value, str) or not value:
        raise ParameterError(name, value, "a non-empty string")
    return value


def check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ParameterError(name, value, "one of " + ", ".join(repr(c) for c in choices))
    return value
