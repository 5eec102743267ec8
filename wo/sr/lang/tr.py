"""Turkish: the dotted capital İ of i (and ı -> I), which Python's str.upper does not know."""
from . import Language


class Turkish(Language):
    """Turkish capitalisation: i -> İ, ı -> I."""

    def upper(self, s: str) -> str:
        """Upper case with the Turkish dotted and dotless i."""
        return s.replace("i", "İ").replace("ı", "I").upper()


LANGUAGE = Turkish("tr")
