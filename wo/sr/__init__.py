"""Shared-task surface realisation (SR'19 shallow track, T1): T1 input, inflection candidates,
joint inflection and ordering on the dependency grammar (Zhang & Clark 2015, section 5.7)."""
from .inflect import Lexicon
from .instance import sr_instance
from .realizer import Realizer, SRResult, realize_many, write_submission
from .stages import SRState, Stage, register
from .t1 import SRSentence, format_t1, lin_values, make_input, read_t1
from .train import train_sr

__all__ = ["Lexicon", "Realizer", "SRResult", "SRSentence", "format_t1", "lin_values", "make_input",
           "read_t1", "realize_many", "register", "SRState", "Stage", "sr_instance", "train_sr", "write_submission"]
