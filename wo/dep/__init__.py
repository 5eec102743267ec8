"""Dependency-based word ordering (Zhang & Clark 2015, sections 2-4): the dependency grammar on the
shared search core, its instances, training (Algorithm 3) and decoding front end."""
from .core import DepSearch
from .instance import Instance, make_instance
from .linearizer import Linearizer, Result, linearize_many, run
from .train import train

__all__ = ["DepSearch", "Instance", "Linearizer", "Result", "linearize_many", "make_instance", "run", "train"]
