"""The output of a mechanism: released items and what was paid for them, never true counts."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Release:
    """Released items in a data-independent (lexicographic) order.

    ``counts`` holds noisy counts only when they were paid for; ``ledger`` lists every stage that
    read private data with its (ε, δ).
    """

    items: list[str]
    mechanism: str
    params: dict
    epsilon: float
    delta: float
    randomness: dict
    privacy: dict
    counts: dict[str, float] | None = None
    counts_info: dict | None = None
    ledger: list[dict] = field(default_factory=list)
    details: dict = field(default_factory=dict)   # mechanism-specific DP outputs (e.g. per level)

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    def __contains__(self, item) -> bool:
        return item in set(self.items)

    def to_privacy_record(self) -> dict:
        """Everything privacy.json may hold: parameters and guarantees, plus the released size."""
        return {
            "mechanism": self.mechanism,
            "guarantee": {"epsilon": self.epsilon, "delta": self.delta,
                          "neighbouring": "add or remove one user (all of a user's documents)"},
            "parameters": self.params,
            # with a [counts] stage the mechanism's claim is only a part of the ledger
            "privacy": self.privacy if not any(s.get("name") == "counts" for s in self.ledger)
            else {"scope": "the selection mechanism alone, without the counts stage; the run's "
                           "guarantee is `guarantee` (every stage of `ledger` composed)",
                  **self.privacy},
            "randomness": self.randomness,
            "ledger": self.ledger,
            "released_items": len(self.items),
            "noisy_counts": self.counts_info if self.counts is not None else None,
            **({"details": self.details} if self.details else {}),
        }
