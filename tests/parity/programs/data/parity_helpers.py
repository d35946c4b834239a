"""A helper module the ``python_files`` parity program ships with ``env.add_python_file`` and
imports inside its functions, as PyFlink jobs split over several files do."""


def normalize(word: str) -> str:
    return word.strip(".,;:!?").lower()


def score(word: str) -> int:
    return sum(ord(char) - ord("a") + 1 for char in word if "a" <= char <= "z")
