"""DPNE's pre-noise level weights given any public S_{n−1} (tests only: a release sets each
level from the one before)."""

from __future__ import annotations


def sub_gram_levels(grams: list[tuple[str, ...]], m: int) -> list[list[tuple[str, ...]]]:
    """S_1..S_m from S_m = ``grams``: every k-gram inside them. Each k-gram of S_k then has
    its prefix and suffix in S_{k−1}, so S_k lies in level k's candidates, as after a release."""
    return [sorted({g[i:i + k] for g in grams for i in range(m - k + 1)})
            for k in range(1, m + 1)]


def level_histogram(mechanism, data, n: int, previous, key: bytes) -> dict[str, float]:
    """Pre-noise level-n weights of ``mechanism`` (dpne, dpne_public) on ``data``, by joined
    n-gram, given S_{n−1} = ``previous`` (token tuples or joined strings). Private."""
    m = mechanism.for_data(data)
    levels = m.ngram_levels(data)
    grams = sorted(g if isinstance(g, tuple) else tuple(g.split(levels.joiner))
                   for g in previous)
    if n > 1:
        for k, released in enumerate(sub_gram_levels(grams, n - 1), 1):
            levels.level_weights(k, key)   # the level last weighed, as in a release
            levels.set_released(k, released)
    return m.level_histogram(levels, n, grams, key)
