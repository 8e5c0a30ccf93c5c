"""Set-union mechanisms. Each module is one family; registry.py registers them."""

from .base import Mechanism
from .count import CountGaussian, CountLaplace
from .greedy import GW, GWKT, load_public_frequencies
from .ngrams import DPNE
from .sips import DPSIPS
from .topk import TopK
from .partition import PartitionOptimal
from .policy import PolicyGaussian, PolicyLaplace
from .public import DPNEPublic, DPSIPSPublic, PolicyGaussianPublic
from .weighted import WeightedGaussian, WeightedLaplace

MECHANISMS: dict[str, type[Mechanism]] = {
    cls.name: cls for cls in (CountLaplace, CountGaussian, WeightedLaplace, WeightedGaussian,
                              PolicyLaplace, PolicyGaussian, GW, GWKT, PartitionOptimal, DPSIPS,
                              TopK, DPNE, PolicyGaussianPublic, DPSIPSPublic, DPNEPublic)
}

__all__ = ["DPNE", "DPNEPublic", "DPSIPS", "DPSIPSPublic", "PolicyGaussianPublic", "GW", "TopK", "GWKT", "MECHANISMS", "CountGaussian", "CountLaplace", "Mechanism",
           "PartitionOptimal", "PolicyGaussian", "PolicyLaplace", "WeightedGaussian",
           "WeightedLaplace", "load_public_frequencies"]
